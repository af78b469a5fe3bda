import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector, ReadPageInput } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ProviderError } from '../../src/providers/errors.js';
import { startFakeZendesk, type FakeZendesk } from './fakes/zendeskSupport.js';
import { readAllPages } from './kit/read-all.js';

/**
 * What Zendesk Support does that the conformance suite does not cover: ticket reads, full ones
 * included (archived tickets are only there), and windowed user reads use the cursor-based
 * incremental exports, which end at `end_of_stream` though they always give an
 * `after_url`, and list deletions (a ticket with status `deleted`, a user no longer active) only
 * when the read asks for them; validation errors reach Ferry with Zendesk's description.
 */

let fake: FakeZendesk;
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
    // Deleted before the last minute, whose changes the exports leave out.
    fake.remove('tickets', ticket, Date.UTC(2024, 1, 3));
    fake.remove('users', user, Date.UTC(2024, 1, 3));

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

  it('reads every ticket of one second across pages: the export cursor carries the id too', async () => {
    const second = Date.UTC(2024, 6, 1, 9, 30, 0);
    const ids = fake.seed(
      'tickets',
      Array.from({ length: 7 }, (_, i) => second + i * 100),
    );
    const read = await readAll({
      objectName: 'tickets',
      pageSize: 3,
      since: new Date(second),
      until: new Date(second + 1000),
    });
    expect(read.map((record) => record.id)).toEqual(ids);
  });

  it('reads a window starting less than a minute ago as empty, without the start_time Zendesk refuses', async () => {
    for (const objectName of ['tickets', 'users']) {
      const before = fake.requests.length;
      const page = await connector.readPage({ objectName, since: new Date(Date.now() - 30_000) });
      expect(page).toEqual({ records: [], done: true });
      expect(fake.requests.length).toBe(before);
    }
    // A minute and more ago is asked for as it is.
    const before = fake.requests.length;
    await connector.readPage({ objectName: 'users', since: new Date(Date.now() - 120_000) });
    expect(fake.requests.slice(before).map((request) => request.path)).toEqual([
      '/api/v2/incremental/users/cursor.json',
    ]);
  });
});

/** The fake itself, against Zendesk's reference: what Ferry's reads above rely on. */
describe('the Zendesk fake', () => {
  const get = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${fake.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${fake.credential}`,
        'content-type': 'application/json',
        ...init.headers,
      },
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it('leaves the most recent minute out of the exports and refuses a start_time less than a minute old', async () => {
    let now = Date.UTC(2030, 0, 1, 12, 0, 0);
    fake.setClock(() => now);
    try {
      const [recent] = fake.seed('tickets', [now - 30_000]);
      const start = Math.floor((now - 600_000) / 1000);
      const first = await get(`/api/v2/incremental/tickets/cursor.json?start_time=${start}`);
      expect((first.body.tickets as { id: number }[]).map((ticket) => String(ticket.id))).not.toContain(
        recent,
      );
      expect((await get(`/api/v2/incremental/tickets/cursor.json?start_time=${start + 590}`)).status).toBe(
        400,
      );
      now += 60_000;
      const later = await get(`/api/v2/incremental/tickets/cursor.json?start_time=${start}`);
      expect((later.body.tickets as { id: number }[]).map((ticket) => String(ticket.id))).toContain(recent);
      expect(later.body.after_cursor).toEqual(expect.any(String));
      expect(later.body.end_of_stream).toBe(true);
    } finally {
      fake.setClock(Date.now);
    }
  });

  it('starts the next time-based page at end_time, inclusive, and never splits the items of one second', async () => {
    const second = Date.UTC(2024, 8, 1);
    const ids = fake.seed('organizations', [second - 1000, second, second, second]);
    const start = Math.floor((second - 1000) / 1000);
    const page = await get(`/api/v2/incremental/organizations.json?start_time=${start}&per_page=2`);
    expect((page.body.organizations as { id: number }[]).map((org) => String(org.id))).toEqual(ids);
    expect(page.body).toMatchObject({ count: 4, end_time: second / 1000 });
    const next = await get(`/api/v2/incremental/organizations.json?start_time=${second / 1000}&per_page=2`);
    expect((next.body.organizations as { id: number }[]).map((org) => String(org.id))).toEqual(ids.slice(1));
  });

  it('answers the eleventh export request of a minute 429 with Retry-After', async () => {
    const limited = await startFakeZendesk({ exportRateLimit: true });
    const now = Date.UTC(2030, 0, 1, 12, 0, 15);
    limited.setClock(() => now);
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 11; i++) {
        const response = await fetch(`${limited.url}/api/v2/incremental/tickets/cursor.json?start_time=0`, {
          headers: { authorization: `Bearer ${limited.credential}` },
        });
        statuses.push(response.status);
        retryAfter = response.headers.get('retry-after');
      }
      expect(statuses).toEqual([...Array(10).fill(200), 429]);
      expect(retryAfter).toBe('45');
    } finally {
      await limited.stop();
    }
  });

  it('takes an API token as Basic {email}/token:{token}, not a password', async () => {
    const basic = (user: string) => `Basic ${Buffer.from(user).toString('base64')}`;
    const token = await get('/api/v2/users.json', {
      headers: { authorization: basic(`agent@example.com/token:${fake.credential}`) },
    });
    expect(token.status).toBe(200);
    const password = await get('/api/v2/users.json', {
      headers: { authorization: basic(`agent@example.com:${fake.credential}`) },
    });
    expect(password).toMatchObject({ status: 401, body: { error: "Couldn't authenticate you" } });
  });

  it('refuses a taken organization name with a 422 detail for that field', async () => {
    const answer = await get('/api/v2/organizations.json', {
      method: 'POST',
      body: JSON.stringify({ organization: { name: 'Taken Ltd' } }),
    });
    expect(answer.status).toBe(201);
    const again = await get('/api/v2/organizations.json', {
      method: 'POST',
      body: JSON.stringify({ organization: { name: 'Taken Ltd' } }),
    });
    expect(again).toMatchObject({
      status: 422,
      body: {
        error: 'RecordInvalid',
        details: { name: [{ description: 'Name: has already been taken', error: 'DuplicateValue' }] },
      },
    });
  });
});
