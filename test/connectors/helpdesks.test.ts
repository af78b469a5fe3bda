import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { AuthMaterial } from '../../src/providers/auth-material.js';
import type { Connector, ReadPageInput } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ProviderError } from '../../src/providers/errors.js';
import type { ConformanceFake } from './kit/conformance.js';
import { startFakeFreshdesk } from './fakes/freshdesk.js';
import { startFakeFront } from './fakes/front.js';
import { startFakeGorgias } from './fakes/gorgias.js';
import { startFakeIntercom } from './fakes/intercom.js';
import { readAllPages } from './kit/read-all.js';
import { TICKET_PAGE_LIMIT } from '../../src/providers/connectors/freshdesk.js';
import { gorgiasHooks } from '../../src/providers/connectors/gorgias.js';
import type { HookContext } from '../../src/providers/declarative/context.js';

/**
 * What Freshdesk, Gorgias, Intercom and Front do that the conformance suite does not check: the requests
 * each read sends (Freshdesk's `updated_since` on full reads, Gorgias's newest-first listing that
 * stops early, Intercom's day-widened search), and the providers' refusals reaching Ferry as
 * client errors with the provider's own message, not retried.
 */

const fakes: Record<string, ConformanceFake> = {};

beforeAll(async () => {
  fakes.freshdesk = await startFakeFreshdesk();
  fakes.gorgias = await startFakeGorgias();
  fakes.intercom = await startFakeIntercom();
  fakes.front = await startFakeFront();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify(
    Object.fromEntries(Object.entries(fakes).map(([provider, fake]) => [provider, { baseURL: fake.url }])),
  );
  resetConfig();
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  for (const fake of Object.values(fakes)) await fake.stop();
});

function connector(provider: string): Connector {
  const fake = fakes[provider];
  const auth = async (): Promise<AuthMaterial> =>
    provider === 'freshdesk'
      ? { type: 'basic', username: fake.credential, password: 'X' }
      : { type: 'oauth2', accessToken: fake.credential };
  return connectorFor(
    { provider, templateVars: { workspace: 'acme' }, auth },
    { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } },
  );
}

const readAll = (provider: string, input: Omit<ReadPageInput, 'pageToken'>) =>
  readAllPages(connector(provider), input);

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** Requests a fake received from `before` on, at `path`. */
const sent = (provider: string, before: number, path: string) =>
  fakes[provider].requests.slice(before).filter((request) => request.path === path);

describe('Freshdesk', () => {
  it('asks for every ticket since 2000 on a full read (else only 30 days are listed), and filters each object by its own parameter', async () => {
    const [old] = fakes.freshdesk.seed('tickets', [Date.UTC(2019, 0, 1)]);
    const before = fakes.freshdesk.requests.length;
    const full = await readAll('freshdesk', { objectName: 'tickets', pageSize: 100 });
    expect(full.map((record) => record.id)).toContain(old);
    expect(sent('freshdesk', before, '/api/v2/tickets')[0].query).toMatchObject({
      updated_since: '2000-01-01T00:00:00Z',
      order_by: 'updated_at',
      order_type: 'asc',
    });

    // Whether "updated since" lists what changed at that very second is not said: Ferry asks
    // from the second before, and keeps what is in the window.
    const since = new Date('2026-02-03T04:05:06.789Z');
    const middle = fakes.freshdesk.requests.length;
    await readAll('freshdesk', { objectName: 'tickets', pageSize: 100, since });
    await readAll('freshdesk', { objectName: 'contacts', pageSize: 100, since });
    expect(sent('freshdesk', middle, '/api/v2/tickets')[0].query.updated_since).toBe('2026-02-03T04:05:05Z');
    expect(sent('freshdesk', middle, '/api/v2/contacts')[0].query._updated_since).toBe(
      '2026-02-03T04:05:05Z',
    );
  });

  it('asks again from the newest ticket it listed after 300 pages, the most Freshdesk answers to one query', async () => {
    const start = Date.UTC(2024, 5, 1);
    const ids = fakes.freshdesk.seed(
      'tickets',
      Array.from({ length: TICKET_PAGE_LIMIT + 2 }, (_, i) => start + i * 1000),
    );
    const before = fakes.freshdesk.requests.length;
    const read = await readAll('freshdesk', {
      objectName: 'tickets',
      pageSize: 1,
      since: new Date(start),
      until: new Date(start + ids.length * 1000),
    });
    expect([...new Set(read.map((record) => record.id))]).toEqual(ids);
    const queries = sent('freshdesk', before, '/api/v2/tickets');
    expect(queries[TICKET_PAGE_LIMIT - 1].query.page).toBe(String(TICKET_PAGE_LIMIT));
    // The 301st request starts a new query, from the 300th ticket's second (less one).
    expect(queries[TICKET_PAGE_LIMIT].query).toMatchObject({
      updated_since: new Date(start + (TICKET_PAGE_LIMIT - 2) * 1000).toISOString().replace('.000', ''),
    });
    expect(queries[TICKET_PAGE_LIMIT].query.page).toBeUndefined();
  });

  it("describes a ticket's status, priority and source with the account's own values, custom statuses too", async () => {
    const metadata = await connector('freshdesk').listObjectMetadata('tickets');
    expect(metadata.fields.status.values).toContainEqual({ value: '2', displayValue: 'Open' });
    expect(metadata.fields.status.values!.map((value) => Number(value.value)).some((code) => code >= 6)).toBe(
      true,
    );
    expect(metadata.fields.priority.values).toContainEqual({ value: '4', displayValue: 'Urgent' });
    expect(metadata.fields.source.values).toContainEqual({ value: '1', displayValue: 'Email' });
  });

  it("refuses a ticket without a requester and a taken contact email with Freshdesk's message, without retrying", async () => {
    const before = fakes.freshdesk.requests.length;
    const error = await failure(
      connector('freshdesk').write({ objectName: 'tickets', type: 'create', record: { subject: 'No one' } }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as Error).message).toContain('Please fill at least 1 of email');
    expect(fakes.freshdesk.requests.length - before).toBe(1);

    const record = { name: 'Grace Hopper', email: 'grace.hopper@example.com' };
    await connector('freshdesk').write({ objectName: 'contacts', type: 'create', record });
    const taken = await failure(
      connector('freshdesk').write({ objectName: 'contacts', type: 'create', record }),
    );
    expect(taken).toMatchObject({ status: 409 });
    expect((taken as Error).message).toContain('unique value');
  });
});

describe('the Freshdesk fake', () => {
  const get = async (path: string) => {
    const fake = fakes.freshdesk;
    const response = await fetch(`${fake.url}${path}`, {
      headers: { authorization: `Basic ${Buffer.from(`${fake.credential}:X`).toString('base64')}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>[] };
  };

  it('lists a deleted ticket only under filter=deleted, and descriptions only with include=description', async () => {
    const [kept, trashed] = fakes.freshdesk.seed('tickets', [Date.UTC(2026, 8, 1), Date.UTC(2026, 8, 1)]);
    fakes.freshdesk.remove('tickets', trashed, Date.UTC(2026, 8, 2));
    const since = 'updated_since=2026-09-01T00:00:00Z';
    const live = await get(`/api/v2/tickets?${since}`);
    expect(live.body.map((ticket) => String(ticket.id))).toEqual([kept]);
    expect(live.body[0]).not.toHaveProperty('description');
    const deleted = await get(`/api/v2/tickets?${since}&filter=deleted&include=description`);
    expect(deleted.body.map((ticket) => [String(ticket.id), ticket.deleted])).toEqual([[trashed, true]]);
    expect(deleted.body[0]).toHaveProperty('description');
  });
});

describe('Gorgias', () => {
  it('lists newest first and stops at the first ticket older than the window', async () => {
    fakes.gorgias.seed(
      'tickets',
      Array.from({ length: 30 }, (_, i) => Date.UTC(2020, 0, 1) + i * 60_000),
    );
    const recent = fakes.gorgias.seed('tickets', [Date.UTC(2026, 9, 1), Date.UTC(2026, 9, 2)]);
    const before = fakes.gorgias.requests.length;
    const read = await readAll('gorgias', {
      objectName: 'tickets',
      pageSize: 3,
      since: new Date(Date.UTC(2026, 8, 30)),
      until: new Date(Date.UTC(2026, 9, 2)),
    });
    expect(read.map((record) => record.id)).toEqual([recent[0]]);
    const pages = sent('gorgias', before, '/api/tickets');
    expect(pages).toHaveLength(1);
    expect(pages[0].query).toMatchObject({ order_by: 'updated_datetime:desc', limit: '3' });
  });

  it("refuses an unknown ticket member with Gorgias's 400, and a missing ticket is a 404", async () => {
    const error = await failure(
      connector('gorgias').write({
        objectName: 'tickets',
        type: 'update',
        recordId: '1',
        record: { colour: 'red' },
      }),
    );
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as Error).message).toContain('Invalid data');
    expect(await connector('gorgias').readRecord('tickets', '999999')).toBeUndefined();
  });

  it('reads custom values keyed by field id under custom_fields.<id>, and writes them as a list', async () => {
    const [id] = fakes.gorgias.seed('customers', [Date.UTC(2026, 2, 1)]);
    const stored = fakes.gorgias.stored('customers', id)!;
    stored.custom_fields = { '21': { id: 21, value: 'Retail' } };
    const page = await connector('gorgias').readPage({ objectName: 'customers', pageSize: 100 });
    const record = page.records.find((found) => found.id === id);
    expect(record?.values?.['custom_fields.21']).toBe('Retail');
    const before = fakes.gorgias.requests.length;
    await failure(
      connector('gorgias').write({
        objectName: 'customers',
        type: 'update',
        recordId: id,
        record: { 'custom_fields.21': 'Wholesale' },
      }),
    );
    expect(fakes.gorgias.requests[before].body).toMatchObject({
      custom_fields: [{ id: 21, value: 'Wholesale' }],
    });
  });

  it("delivers a customer-deleted event as the deletion of the event's object, and only trashed tickets as deleted", async () => {
    const events = {
      records: [
        {
          id: '7001',
          updatedAt: '2026-03-01T00:00:00.000Z',
          raw: { id: 7001, object_id: 42, type: 'customer-deleted' },
          deleted: true,
        },
      ],
      done: true,
      deletions: true,
    };
    const customers = await gorgiasHooks.readPage!(
      {} as HookContext,
      { objectName: 'customers' },
      async () => events,
    );
    expect(customers.records.map((record) => [record.id, record.deleted])).toEqual([['42', true]]);
    const tickets = await gorgiasHooks.readPage!({} as HookContext, { objectName: 'tickets' }, async () => ({
      records: [
        { id: '1', raw: { id: 1, trashed_datetime: '2026-03-01T00:00:00+00:00' }, deleted: true },
        { id: '2', raw: { id: 2, trashed_datetime: null }, deleted: true },
      ],
      done: true,
      deletions: true,
    }));
    expect(tickets.records.map((record) => record.id)).toEqual(['1']);
  });
});

describe('the Intercom fake', () => {
  const search = async (query: unknown) => {
    const fake = fakes.intercom;
    const response = await fetch(`${fake.url}/contacts/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.credential}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    return ((await response.json()) as { data: { id: string }[] }).data.map((contact) => contact.id);
  };

  it('finds a changed contact only minutes later, by days of the workspace time zone (UTC-8)', async () => {
    let now = Date.UTC(2026, 6, 1, 12, 0, 0);
    fakes.intercom.setClock(() => now);
    try {
      const [id] = fakes.intercom.seed('contacts', [Date.UTC(2026, 6, 1, 5, 0, 0)]);
      fakes.intercom.touch('contacts', id, now - 60_000);
      const july1 = Date.UTC(2026, 6, 1) / 1000;
      // Still indexed at 05:00 UTC, June 30 in the workspace; July 1 there starts at 08:00 UTC.
      expect(await search({ field: 'updated_at', operator: '=', value: july1 + 12 * 3600 })).not.toContain(
        id,
      );
      expect(await search({ field: 'updated_at', operator: '<', value: july1 + 12 * 3600 })).toContain(id);
      now += 5 * 60_000;
      expect(await search({ field: 'updated_at', operator: '=', value: july1 + 12 * 3600 })).toContain(id);
    } finally {
      fakes.intercom.setClock(Date.now);
    }
  });
});

describe('Intercom', () => {
  it('searches a window widened to whole days, newest first, with its API version, and keeps only the window', async () => {
    const day = Date.UTC(2026, 4, 10);
    const ids = fakes.intercom.seed('contacts', [day + 1_000, day + 3_600_000, day + 7_200_000]);
    const since = new Date(day + 1_800_000);
    const until = new Date(day + 5_400_000);
    const before = fakes.intercom.requests.length;
    const read = await readAll('intercom', { objectName: 'contacts', pageSize: 2, since, until });
    expect(read.map((record) => record.id)).toEqual([ids[1]]);
    const [search] = sent('intercom', before, '/contacts/search');
    expect(search.method).toBe('POST');
    expect(search.headers['intercom-version']).toBe('2.14');
    expect(search.body).toMatchObject({
      query: {
        operator: 'AND',
        value: [
          { field: 'updated_at', operator: '>', value: Math.floor(since.getTime() / 1000) - 172_800 },
          { field: 'updated_at', operator: '<', value: Math.ceil(until.getTime() / 1000) + 172_800 },
        ],
      },
      pagination: { per_page: 2 },
      sort: { field: 'updated_at', order: 'descending' },
    });
  });

  it('lists conversations whole on a full read, and refuses one from an unknown contact as Intercom does', async () => {
    const [conversation] = fakes.intercom.seed('conversations', [Date.UTC(2019, 5, 1)]);
    const before = fakes.intercom.requests.length;
    const read = await readAll('intercom', { objectName: 'conversations', pageSize: 150 });
    expect(read.map((record) => record.id)).toContain(conversation);
    expect(sent('intercom', before, '/conversations/search')).toEqual([]);

    const error = await failure(
      connector('intercom').write({
        objectName: 'conversations',
        type: 'create',
        record: { from: { type: 'user', id: '000000000000000000000000' }, body: 'Hello' },
      }),
    );
    expect(error).toMatchObject({ status: 404, retryable: false });
    expect((error as Error).message).toContain('User Not Found');
  });
});

describe('Front', () => {
  it("keeps a contact's other custom fields when an update names some, since Front replaces the whole set", async () => {
    const metadata = await connector('front').listObjectMetadata('contacts');
    const custom = Object.values(metadata.fields).filter((field) => field.isCustom);
    const text = custom.find((field) => field.valueType === 'string')!;
    const other = custom.find((field) => field !== text && field.valueType === 'boolean')!;
    const [named, kept] = [text, other].map((field) => field.fieldName.slice('custom_fields.'.length));
    const [id] = fakes.front.seed('contacts', [Date.UTC(2026, 3, 1)]);
    fakes.front.stored('contacts', id)!.custom_fields = { [named]: 'before', [kept]: true };
    await connector('front').write({
      objectName: 'contacts',
      type: 'update',
      recordId: id,
      record: { [`custom_fields.${named}`]: 'after' },
    });
    expect(fakes.front.stored('contacts', id)!.custom_fields).toEqual({
      [named]: 'after',
      [kept]: true,
    });
  });
});
