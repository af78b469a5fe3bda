import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector, ReadPageInput } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ProviderError } from '../../src/providers/errors.js';
import { startFakeZendesk } from './fakes/zendeskSupport.js';
import type { ConformanceFake } from './kit/conformance.js';
import { readAllPages } from './kit/read-all.js';

/**
 * What Zendesk Support does that the conformance suite does not cover: ticket reads, full ones
 * included (archived tickets are only there), and windowed user reads use the cursor-based
 * incremental exports, which end at `end_of_stream` though they always give an
 * `after_url`, and list deletions (a ticket with status `deleted`, a user no longer active) only
 * when the read asks for them; validation errors reach Ferry with Zendesk's description.
 */

let fake: ConformanceFake;
let connector: Connector;

beforeAll(async () => {
  fake = await startFakeZendesk();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ zendeskSupport: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor(
    {
      provider: 'zendeskSupport',
      templateVars: { workspace: 'acme' },
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

describe('Zendesk Support', () => {
  it('lists deleted tickets and users from the incremental exports only when asked, marked deleted', async () => {
    const since = new Date(Date.UTC(2024, 0, 1));
    const [ticket, kept] = fake.seed('tickets', [Date.UTC(2024, 1, 1), Date.UTC(2024, 1, 2)]);
    const [user, active] = fake.seed('users', [Date.UTC(2024, 1, 1), Date.UTC(2024, 1, 2)]);
    await connector.write({ objectName: 'tickets', type: 'delete', recordId: ticket });
    await connector.write({ objectName: 'users', type: 'delete', recordId: user });
    // Deleted before the last minute, whose changes the exports leave out.
    fake.touch('tickets', ticket, Date.UTC(2024, 1, 3));
    fake.touch('users', user, Date.UTC(2024, 1, 3));

    const before = fake.requests.length;
    const tickets = await readAll({ objectName: 'tickets', pageSize: 1, since });
    expect(tickets.map((record) => [record.id, record.deleted ?? false])).toEqual([[kept, false]]);
    expect(
      fake.requests.slice(before).every((r) => r.path === '/api/v2/incremental/tickets/cursor.json'),
    ).toBe(true);
    // One page per ticket (per_page 1), none after end_of_stream though after_url is still given.
    expect(fake.requests.length - before).toBe(2);

    const withDeleted = await readAll({ objectName: 'tickets', pageSize: 10, since, includeDeleted: true });
    expect(withDeleted.map((record) => [record.id, record.deleted ?? false])).toEqual([
      [kept, false],
      [ticket, true],
    ]);
    expect(withDeleted[1].raw.status).toBe('deleted');

    const users = await readAll({ objectName: 'users', pageSize: 10, since, includeDeleted: true });
    expect(users.map((record) => [record.id, record.deleted ?? false])).toEqual([
      [active, false],
      [user, true],
    ]);
    const activeOnly = await readAll({ objectName: 'users', pageSize: 10, since });
    expect(activeOnly.map((record) => record.id)).toEqual([active]);
  });

  it('reads archived tickets too: a full read of tickets is the export from its beginning', async () => {
    const [archived] = fake.seed('tickets', [Date.UTC(2023, 0, 1)]);
    fake.stored('tickets', archived)!.status = 'closed';
    const before = fake.requests.length;
    const read = await readAll({ objectName: 'tickets', pageSize: 100 });
    expect(read.map((record) => record.id)).toContain(archived);
    const [first] = fake.requests.slice(before);
    expect([first.path, first.query.start_time]).toEqual(['/api/v2/incremental/tickets/cursor.json', '0']);
  });

  it("passes on Zendesk's description of a record it refuses", async () => {
    const error = await connector
      .write({ objectName: 'tickets', type: 'create', record: { subject: 'No comment' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(422);
    expect((error as ProviderError).providerMessage).toBe('Record validation errors');
  });

  it('sends an Idempotency-Key with ticket creates only, the one create Zendesk documents it for', async () => {
    expect(connector.honoursIdempotencyKey('tickets', 'create')).toBe(true);
    expect(connector.honoursIdempotencyKey('users', 'create')).toBe(false);
    expect(connector.honoursIdempotencyKey('organizations', 'create')).toBe(false);
    const before = fake.requests.length;
    await connector.write({
      objectName: 'tickets',
      type: 'create',
      record: { subject: 'Keyed', comment: { body: 'Once.' } },
      idempotencyKey: 'op-9:0',
    });
    const sent = fake.requests.slice(before).find((request) => request.method === 'POST');
    expect(sent?.headers['idempotency-key']).toBe('op-9:0');
  });
});
