import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ConnectorInputError, ProviderError } from '../../src/providers/errors.js';
import { startFakeSalesforce, type FakeSalesforce } from './fakes/salesforce.js';
import { readAllPages } from './kit/read-all.js';

/**
 * What Salesforce does that the conformance suite does not cover: SOQL names every field, so a read
 * without chosen fields selects what the describe lists (remembered, and described again once a
 * remembered field is refused); names written into the query are checked first; the window becomes
 * a WHERE clause only when there is one; errors come as a JSON array whose message reaches Ferry.
 */

let fake: FakeSalesforce;

beforeAll(async () => {
  fake = await startFakeSalesforce();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ salesforce: { baseURL: fake.url } });
  resetConfig();
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

/** A connector of its own connection, so what one test remembers does not serve another. */
function connector(): Connector {
  return connectorFor(
    {
      provider: 'salesforce',
      connectionId: randomUUID(),
      templateVars: { workspace: 'acme' },
      auth: async () => ({ type: 'oauth2', accessToken: fake.credential }),
    },
    { retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } },
  );
}

const readAll = readAllPages;

const soqlSince = (before: number) =>
  fake.requests
    .slice(before)
    .filter((request) => request.path.endsWith('/query'))
    .map((request) => String(request.query.q));
const pathsSince = (before: number) =>
  fake.requests.slice(before).map((request) => request.path.split('/').pop());

describe('Salesforce', () => {
  it('selects every described field (not deprecated and hidden ones) when none is chosen, describing once per connection and object', async () => {
    fake.seed('Account', [Date.UTC(2025, 0, 1)]);
    const through = connector();
    const before = fake.requests.length;
    const [record] = await readAll(through, { objectName: 'Account', pageSize: 200 });
    expect(record.raw).toMatchObject({ Id: record.id, Industry: null, Tier__c: null, IsDeleted: false });
    const [soql] = soqlSince(before);
    expect(soql).toMatch(/^SELECT Id,SystemModstamp,IsDeleted,OwnerId,.*Tier__c FROM Account ORDER BY/);
    expect(soql).not.toContain('LegacyCode__c');
    await readAll(through, { objectName: 'Account', pageSize: 200 });
    expect(pathsSince(before)).toEqual(['describe', 'query', 'query']);
  });

  it('describes again when a remembered field has since been removed, and reads without it', async () => {
    fake.seed('Opportunity', [Date.UTC(2025, 0, 1)]);
    const through = connector();
    await readAll(through, { objectName: 'Opportunity', pageSize: 200 });
    fake.removeField('Opportunity', 'Amount');
    const before = fake.requests.length;
    const records = await readAll(through, { objectName: 'Opportunity', pageSize: 200 });
    expect(records.length).toBeGreaterThan(0);
    expect(records[0].raw).not.toHaveProperty('Amount');
    expect(pathsSince(before)).toEqual(['query', 'describe', 'query']);
  });

  it('writes the window as a WHERE clause only when the read has one', async () => {
    const before = fake.requests.length;
    const since = new Date(Date.UTC(2025, 5, 1, 12, 0, 0, 250));
    const until = new Date(Date.UTC(2025, 5, 2));
    await readAll(connector(), { objectName: 'Contact', pageSize: 200, fields: ['LastName'] });
    await readAll(connector(), { objectName: 'Contact', pageSize: 200, fields: ['LastName'], since, until });
    expect(soqlSince(before)).toEqual([
      'SELECT Id,SystemModstamp,LastName FROM Contact ORDER BY SystemModstamp ASC, Id ASC',
      'SELECT Id,SystemModstamp,LastName FROM Contact WHERE SystemModstamp >= 2025-06-01T12:00:00Z AND ' +
        'SystemModstamp <= 2025-06-02T00:00:00Z ORDER BY SystemModstamp ASC, Id ASC',
    ]);
  });

  it('asks queryAll, selecting IsDeleted, when a read asks for deletions; query otherwise', async () => {
    const before = fake.requests.length;
    const window = { since: new Date(Date.UTC(2025, 5, 1)), until: new Date(Date.UTC(2025, 5, 2)) };
    await readAll(connector(), { objectName: 'Contact', pageSize: 200, fields: ['LastName'], ...window });
    await readAll(connector(), {
      objectName: 'Contact',
      pageSize: 200,
      fields: ['LastName'],
      ...window,
      includeDeleted: true,
    });
    const listings = fake.requests
      .slice(before)
      .filter((request) => /\/query(All)?$/.test(request.path))
      .map((request) => [request.path.split('/').pop(), String(request.query.q).split(' FROM ')[0]]);
    expect(listings).toEqual([
      ['query', 'SELECT Id,SystemModstamp,LastName'],
      ['queryAll', 'SELECT Id,SystemModstamp,IsDeleted,LastName'],
    ]);
  });

  it('refuses object and field names that are not SOQL names before sending anything', async () => {
    const before = fake.requests.length;
    const badField = await connector()
      .readPage({ objectName: 'Contact', pageSize: 200, fields: ['Name FROM User WHERE Id != null --'] })
      .catch((error: unknown) => error);
    expect(badField).toBeInstanceOf(ConnectorInputError);
    const badObject = await connector()
      .readPage({ objectName: 'User WHERE Id != null', pageSize: 200, fields: ['Id'] })
      .catch((error: unknown) => error);
    expect(badObject).toBeInstanceOf(ConnectorInputError);
    expect(fake.requests.length).toBe(before);
  });

  it('searches with a WHERE of escaped literals paged by LIMIT and OFFSET, refusing a filter that is no field name', async () => {
    const [id] = fake.seed('Contact', [Date.UTC(2025, 1, 1)]);
    fake.stored('Contact', id)!.Email = "it's\\me@example.com";
    const before = fake.requests.length;
    const found = await connector().search({
      objectName: 'Contact',
      filters: [{ fieldName: 'Email', value: "it's\\me@example.com" }],
      fields: ['Email'],
      pageSize: 5,
    });
    expect(found.records.map((record) => record.id)).toEqual([id]);
    expect(soqlSince(before)).toEqual([
      "SELECT Id,SystemModstamp,Email FROM Contact WHERE Email = 'it\\'s\\\\me@example.com' ORDER BY Id ASC LIMIT 5 OFFSET 0",
    ]);
    const refused = await connector()
      .search({
        objectName: 'Contact',
        filters: [{ fieldName: "Email = 'x' OR Id", value: 'y' }],
        pageSize: 5,
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectorInputError);
  });

  it("passes on Salesforce's own error message from its error array", async () => {
    const error = await connector()
      .write({ objectName: 'Lead', type: 'create', record: { LastName: 'Hopper' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(400);
    expect((error as ProviderError).providerMessage).toBe('Required fields are missing: [Company]');
  });

  it('says an object the org lacks is not found, and a used-up API limit is worth retrying later', async () => {
    const missing = await connector()
      .readPage({ objectName: 'Invoice__c', pageSize: 200, fields: ['Name'] })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ProviderError);
    expect([(missing as ProviderError).status, (missing as ProviderError).retryable]).toEqual([404, false]);

    fake.exhaustLimit();
    const limited = await connector()
      .readPage({ objectName: 'Contact', pageSize: 200, fields: ['LastName'] })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ProviderError);
    expect([(limited as ProviderError).status, (limited as ProviderError).retryable]).toEqual([429, true]);
    expect((limited as ProviderError).providerMessage).toBe('TotalRequests Limit exceeded.');
  });
});
