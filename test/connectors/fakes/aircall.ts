import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Aircall's Public API v1 (https://developer.aircall.io/api-references/),
 * written from its reference (pagination, rate limiting, errors; calls, contacts, users):
 *
 * - Under `/v1` of https://api.aircall.io (the fake's `url` is the origin), the API key or OAuth
 *   token as `Authorization: Bearer`.
 * - Lists `GET /v1/{calls,contacts,users}` page by number: `page` (from 1) and `per_page` (default
 *   20, at most 50; a larger one is served as 50); the answer is `{meta: {count, total,
 *   current_page, per_page, next_page_link, previous_page_link}, <object>: [...]}`, `next_page_link`
 *   the whole URL of the next page, null on the last. Positions are counted when each page is asked
 *   for: a record that moves or goes between two pages shifts the rest. No more than 10,000 items
 *   can be paged through (`from`/`to` narrow a listing past that).
 * - `from` and `to` (Unix seconds, both inclusive) bound the record's creation (`started_at` of a
 *   call, `created_at` of a contact or user), never a modification; `order` (`asc` by default,
 *   `desc`) sorts by creation. Contacts alone take `order_by=created_at|updated_at` (default
 *   `created_at`), and alone carry `updated_at`; calls (an answer, a tag, a comment, archiving
 *   change them) and users say nowhere when they changed.
 * - Contacts' `created_at`/`updated_at` and calls' `started_at`/`answered_at`/`ended_at` are Unix
 *   seconds (integers); users' `created_at` is ISO 8601 (`2024-01-01T00:00:00.000Z`).
 * - Contacts: `POST /v1/contacts` (201; `phone_numbers` required, at least one), update with
 *   `POST /v1/contacts/{id}` (first_name, last_name, company_name, information; phone numbers and
 *   emails have their own endpoints), `DELETE /v1/contacts/{id}` (204). A deleted contact is gone,
 *   listed nowhere (only a `contact.deleted` webhook tells). Calls and users are read here.
 * - Errors `{error, troubleshoot}`. 60 requests a minute per company; every answer carries
 *   `X-AircallApi-Limit`, `X-AircallApi-Remaining` and `X-AircallApi-Reset` (Unix seconds); past
 *   the limit, 429.
 */

type Item = Record<string, unknown> & { id: number };
type AircallObject = 'calls' | 'contacts' | 'users';
type Row = StoredRecord<Item>;

const PAGE_MAX = 50;
const PAGE_DEFAULT = 20;
const PAGING_CAP = 10_000;
const PER_MINUTE = 60;

const seconds = (ms: number) => Math.floor(ms / 1000);
const isoMs = (ms: number) => new Date(ms).toISOString();

export async function startFakeAircall(): Promise<ConformanceFake> {
  const stores: Record<AircallObject, RecordStore<Item>> = {
    calls: new RecordStore(),
    contacts: new RecordStore(),
    users: new RecordStore(),
  };
  /** The version a listing shows until a late edit becomes visible. */
  const shown: Record<AircallObject, Map<string, Item>> = {
    calls: new Map(),
    contacts: new Map(),
    users: new Map(),
  };
  /** When each record was created (ms), which `from`/`to` and `order` use. */
  const createdMs = new Map<string, number>();
  const budget = new RequestWindow(PER_MINUTE, 60_000);
  let nextId = 1_000_001;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      error:
        error.status === 401
          ? 'Unauthorized'
          : error.status === 429
            ? 'Too Many Requests'
            : error.status === 404
              ? 'Not Found'
              : error.status >= 500
                ? 'Internal Server Error'
                : 'Bad Request',
      troubleshoot:
        error.status === 429 ? 'Rate limit reached, retry after X-AircallApi-Reset.' : error.message,
    }),
    rateLimitHeaders: () => ({
      'X-AircallApi-Limit': String(PER_MINUTE),
      'X-AircallApi-Remaining': '0',
      'X-AircallApi-Reset': String(seconds(Date.now()) + 60),
    }),
  });
  const now = () => fake.now();
  const router = fake.router;
  const key = (object: AircallObject, id: number | string) => `${object}:${id}`;

  // The company's budget, counted on real time, reported on every answer.
  router.use(async (ctx, next) => {
    const taken = budget.take();
    const reset = String(seconds(taken.resetMs) + 1);
    ctx.set('X-AircallApi-Limit', String(PER_MINUTE));
    ctx.set('X-AircallApi-Remaining', String(Math.max(0, PER_MINUTE - taken.used)));
    ctx.set('X-AircallApi-Reset', reset);
    if (!taken.allowed)
      throw new FakeHttpError(429, 'Too Many Requests', undefined, {
        'X-AircallApi-Limit': String(PER_MINUTE),
        'X-AircallApi-Remaining': '0',
        'X-AircallApi-Reset': reset,
      });
    await next();
  });

  const create = (object: AircallObject, ms: number, values: Record<string, unknown> = {}): Item => {
    const id = nextId++;
    const n = id - 1_000_000;
    const base: Record<AircallObject, () => Record<string, unknown>> = {
      calls: () => ({
        direct_link: `https://api.aircall.io/v1/calls/${id}`,
        sid: `CA${id.toString(16)}`,
        direction: 'inbound',
        status: 'done',
        missed_call_reason: null,
        started_at: seconds(ms),
        answered_at: seconds(ms) + 5,
        ended_at: seconds(ms) + 125,
        duration: 125,
        raw_digits: `+1 555 010 ${String(n).padStart(4, '0')}`,
        archived: false,
        tags: [],
        comments: [],
        user: null,
        contact: null,
        teams: [],
      }),
      contacts: () => ({
        direct_link: `https://api.aircall.io/v1/contacts/${id}`,
        first_name: `First${n}`,
        last_name: `Last${n}`,
        company_name: `Org ${n}`,
        description: null,
        information: null,
        is_shared: true,
        created_at: seconds(ms),
        updated_at: seconds(ms),
        emails: [{ id: id * 10, label: 'Work', value: `c${n}@example.com` }],
        phone_numbers: [{ id: id * 10 + 1, label: 'Work', value: `+15550100${String(n).padStart(4, '0')}` }],
      }),
      users: () => ({
        direct_link: `https://api.aircall.io/v1/users/${id}`,
        name: `First${n} Last${n}`,
        email: `u${n}@example.com`,
        available: true,
        availability_status: 'available',
        created_at: isoMs(seconds(ms) * 1000),
        time_zone: 'Etc/UTC',
        language: 'en-US',
        numbers: [],
      }),
    };
    const record: Item = { id, ...base[object](), ...values };
    stores[object].put(String(id), record, object === 'contacts' ? seconds(ms) * 1000 : ms);
    createdMs.set(key(object, id), ms);
    return record;
  };

  const edit = (
    object: AircallObject,
    row: Row,
    change: Record<string, unknown>,
    ms: number,
    visibleFromMs?: number,
  ) => {
    const id = String(row.record.id);
    if (visibleFromMs !== undefined) shown[object].set(id, row.record);
    else shown[object].delete(id);
    const record = { ...row.record, ...change, ...(object === 'contacts' && { updated_at: seconds(ms) }) };
    stores[object].put(id, record, object === 'contacts' ? seconds(ms) * 1000 : ms, visibleFromMs);
  };

  const rowOf = (object: AircallObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${object.slice(0, -1)} ${id} not found, check the ID`);
    return row;
  };

  const unixParam = (ctx: Context, name: string): number | undefined => {
    const text = ctx.query[name];
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 0)
      throw new FakeHttpError(400, `${name} must be a UNIX timestamp`);
    return value;
  };

  for (const object of ['calls', 'contacts', 'users'] as const) {
    router.get(`/v1/${object}`, (ctx) => {
      const asked = ctx.query.per_page === undefined ? PAGE_DEFAULT : Number(ctx.query.per_page);
      const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
      if (!Number.isInteger(asked) || asked < 1)
        throw new FakeHttpError(400, 'per_page must be a positive integer');
      if (!Number.isInteger(page) || page < 1)
        throw new FakeHttpError(400, 'page must be a positive integer');
      fake.logListing(ctx, { object, pageSize: asked, maxPageSize: PAGE_MAX });
      const perPage = Math.min(asked, PAGE_MAX);
      const order = ctx.query.order === undefined ? 'asc' : String(ctx.query.order);
      if (order !== 'asc' && order !== 'desc') throw new FakeHttpError(400, 'order must be asc or desc');
      const orderBy = ctx.query.order_by === undefined ? 'created_at' : String(ctx.query.order_by);
      if (orderBy !== 'created_at' && !(object === 'contacts' && orderBy === 'updated_at'))
        throw new FakeHttpError(
          400,
          `order_by must be ${object === 'contacts' ? 'created_at or updated_at' : 'created_at'}`,
        );
      const from = unixParam(ctx, 'from');
      const to = unixParam(ctx, 'to');
      const sortKey = (record: Item) =>
        orderBy === 'updated_at'
          ? Number(record.updated_at)
          : seconds(createdMs.get(key(object, record.id))!);
      const listed = stores[object]
        .live()
        .map((row) =>
          (row.visibleFromMs ?? row.modifiedMs) <= now()
            ? row.record
            : shown[object].get(String(row.record.id)),
        )
        .filter((record): record is Item => record !== undefined)
        .filter((record) => {
          const created = seconds(createdMs.get(key(object, record.id))!);
          return (from === undefined || created >= from) && (to === undefined || created <= to);
        })
        .sort((a, b) => (sortKey(a) - sortKey(b) || a.id - b.id) * (order === 'desc' ? -1 : 1));
      const total = listed.length;
      const reachable = listed.slice(0, PAGING_CAP);
      const items = reachable.slice((page - 1) * perPage, page * perPage);
      const link = (number: number) => {
        const query = new URLSearchParams();
        for (const [name, value] of Object.entries(ctx.query))
          if (name !== 'page') query.set(name, String(value));
        query.set('page', String(number));
        return `${ctx.protocol}://${ctx.host}/v1/${object}?${query.toString()}`;
      };
      ctx.body = {
        [object]: items,
        meta: {
          count: items.length,
          total,
          current_page: page,
          per_page: perPage,
          next_page_link: page * perPage < reachable.length ? link(page + 1) : null,
          previous_page_link: page > 1 ? link(page - 1) : null,
        },
      };
    });

    router.get(`/v1/${object}/:id`, (ctx) => {
      ctx.body = { [object.slice(0, -1)]: rowOf(object, ctx.params.id).record };
    });
  }

  const contactValues = (body: Record<string, unknown>, creating: boolean): Record<string, unknown> => {
    const allowed = ['first_name', 'last_name', 'company_name', 'information', 'is_shared'];
    if (creating) allowed.push('emails', 'phone_numbers');
    for (const name of Object.keys(body))
      if (!allowed.includes(name)) throw new FakeHttpError(400, `${name} cannot be set on this endpoint`);
    for (const name of ['first_name', 'last_name', 'company_name', 'information'])
      if (body[name] !== undefined && body[name] !== null && typeof body[name] !== 'string')
        throw new FakeHttpError(400, `${name} must be a string`);
    if (creating) {
      const phones = body.phone_numbers;
      if (!Array.isArray(phones) || !phones.length)
        throw new FakeHttpError(400, 'phone_numbers: at least one phone number is required');
    }
    const withIds = (list: unknown) =>
      Array.isArray(list)
        ? list.map((entry: Record<string, unknown>, index) => ({
            id: nextId * 10 + index,
            label: 'Work',
            ...entry,
          }))
        : list;
    return {
      ...body,
      ...(body.phone_numbers !== undefined && { phone_numbers: withIds(body.phone_numbers) }),
      ...(creating && { emails: withIds(body.emails ?? []) }),
    };
  };

  router.post('/v1/contacts', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const record = create('contacts', now(), contactValues(body, true));
    ctx.status = 201;
    ctx.body = { contact: record };
  });
  router.post('/v1/contacts/:id', (ctx) => {
    const row = rowOf('contacts', ctx.params.id);
    edit('contacts', row, contactValues((ctx.request.body ?? {}) as Record<string, unknown>, false), now());
    ctx.body = { contact: stores.contacts.get(ctx.params.id)!.record };
  });
  router.delete('/v1/contacts/:id', (ctx) => {
    rowOf('contacts', ctx.params.id);
    stores.contacts.rows.delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  return asConformanceFake(fake, {
    seed: (object, times) => times.map((ms) => String(create(object as AircallObject, ms).id)),
    touch(object, id, modifiedMs, options) {
      const name = object as AircallObject;
      const row = stores[name].get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      // An edit in Aircall: only a contact says when it happened.
      const change =
        name === 'contacts'
          ? { information: `Edited ${modifiedMs}` }
          : name === 'calls'
            ? {
                comments: [{ id: modifiedMs, content: `Note ${modifiedMs}`, posted_at: seconds(modifiedMs) }],
              }
            : {
                availability_status: row.record.availability_status === 'available' ? 'custom' : 'available',
                name: `Renamed ${modifiedMs}`,
              };
      edit(name, row, change, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // Deleted in Aircall: gone, listed nowhere.
      stores[object as AircallObject].rows.delete(id);
    },
    stored: (object, id) => stores[object as AircallObject].get(id)?.record,
  });
}
