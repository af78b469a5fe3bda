import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector, ReadPageInput } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ConnectorInputError } from '../../src/providers/errors.js';
import { startFakeZoho } from './fakes/zoho.js';
import type { ConformanceFake } from './kit/conformance.js';
import { readAllPages } from './kit/read-all.js';

/**
 * What Zoho CRM does that the conformance suite does not cover: the token goes as
 * `Zoho-oauthtoken`; a window's start is `If-Modified-Since` (sent one second early, since the
 * reference says "modified after"), and a 304 is an empty read; the API has no end bound, so a read
 * listed oldest first stops at the first record past `until`; at most 50 fields a read.
 */

let fake: ConformanceFake;
let connector: Connector;

beforeAll(async () => {
  fake = await startFakeZoho();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ zoho: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor(
    {
      provider: 'zoho',
      templateVars: { zoho_api_domain: 'www.zohoapis.eu', zoho_token_domain: 'accounts.zoho.eu' },
      auth: async () => ({ type: 'oauth2', accessToken: fake.credential }),
    },
    { retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } },
  );
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

const readAll = (input: Omit<ReadPageInput, 'pageToken'>) => readAllPages(connector, input);

const minute = 60_000;

describe('Zoho CRM', () => {
  it('sends the token as Zoho-oauthtoken and the window start one second early as If-Modified-Since', async () => {
    const start = Date.UTC(2025, 2, 1);
    const ids = fake.seed('Contacts', [start, start + minute]);
    const before = fake.requests.length;
    const read = await readAll({
      objectName: 'Contacts',
      pageSize: 10,
      fields: ['Last_Name'],
      since: new Date(start),
      until: new Date(start + 2 * minute),
    });
    expect(read.map((record) => record.id)).toEqual(ids);
    const [request] = fake.requests.slice(before);
    expect(request.headers.authorization).toBe(`Zoho-oauthtoken ${fake.credential}`);
    expect(request.headers['if-modified-since']).toBe('2025-02-28T23:59:59Z');
    expect(request.query.fields).toBe('Modified_Time,Last_Name');
  });

  it('takes a 304 (nothing modified since) as an empty, finished read', async () => {
    const before = fake.requests.length;
    const page = await connector.readPage({
      objectName: 'Leads',
      pageSize: 10,
      fields: ['Last_Name'],
      since: new Date(Date.UTC(2030, 0, 1)),
    });
    expect(page).toEqual({ records: [], done: true });
    expect(fake.requests.length - before).toBe(1);
  });

  it('still lists deletions after a 304 on the changes, from /{module}/deleted with If-Modified-Since', async () => {
    const deletedAt = Date.now() - 10 * minute;
    const [gone] = fake.seed('Leads', [deletedAt - minute]);
    fake.remove('Leads', gone, deletedAt);
    const before = fake.requests.length;
    const read = await readAll({
      objectName: 'Leads',
      pageSize: 10,
      fields: ['Last_Name'],
      since: new Date(Date.UTC(2030, 0, 1)),
      includeDeleted: true,
      deletedSince: new Date(deletedAt - minute),
    });
    expect(read.filter((record) => record.id === gone)).toMatchObject([{ id: gone, deleted: true }]);
    const [changes, deletions] = fake.requests.slice(before);
    expect(changes.path).toMatch(/\/Leads$/);
    expect(deletions.path).toMatch(/\/Leads\/deleted$/);
    expect(deletions.query.type).toBe('all');
    expect(deletions.headers['if-modified-since']).toBe(
      new Date(Math.floor((deletedAt - minute) / 1000) * 1000 - 1000).toISOString().replace(/\.000Z$/, 'Z'),
    );
  });

  it('stops paging at the first record past until, rather than reading on to the newest', async () => {
    const start = Date.UTC(2025, 6, 1);
    const inWindow = fake.seed(
      'Accounts',
      Array.from({ length: 6 }, (_, i) => start + i * minute),
    );
    fake.seed(
      'Accounts',
      Array.from({ length: 30 }, (_, i) => start + (60 + i) * minute),
    );
    const before = fake.requests.length;
    const read = await readAll({
      objectName: 'Accounts',
      pageSize: 3,
      fields: ['Account_Name'],
      since: new Date(start),
      until: new Date(start + 10 * minute),
    });
    expect(read.map((record) => record.id)).toEqual(inWindow);
    expect(fake.requests.length - before).toBe(3);
  });

  it('refuses more than 50 chosen fields before sending anything', async () => {
    const before = fake.requests.length;
    const error = await connector
      .readPage({
        objectName: 'Leads',
        pageSize: 10,
        fields: Array.from({ length: 50 }, (_, i) => `Field_${i}`),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorInputError);
    expect(fake.requests.length).toBe(before);
  });
});
