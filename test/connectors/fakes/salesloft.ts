import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider, type StoredRecord } from '../kit/fake-provider.js';

/**
 * A local stand-in for Salesloft's REST API v2 (https://developers.salesloft.com/docs/api/), written
 * from its reference (list/create/update/delete people and accounts; API basics: rate limits;
 * the "Building an Efficient Cursor Poller" guide):
 *
 * - OAuth access tokens as `Authorization: Bearer`; JSON bodies, records at the top level of the
 *   body (no envelope) and answered as `{data}`.
 * - Times ISO 8601 with microseconds in the team's offset (`2024-03-07T04:26:14.444910-05:00`); the
 *   microseconds are real: each change carries its own below the millisecond, and filters compare
 *   them "using microsecond precision".
 * - `GET /v2/people`, `/v2/accounts`: `updated_at[gt|gte|lt|lte]=<iso8601>`, `ids[]`,
 *   `sort_by` (`updated_at` by default, `created_at`, `id`), `sort_direction` (`ASC`/`DESC`,
 *   DESC by default, ties by id), `per_page` 1 to 100 (default 25; more is a 422), `page` from 1;
 *   `{metadata: {filtering, paging: {per_page, current_page, next_page, prev_page}, sorting},
 *   data}`, `next_page` null on the last page; `include_paging_counts=true` adds `total_pages` and
 *   `total_count`.
 * - `POST /v2/people` (an `email_address`, or a `phone` with a `last_name`; an address taken is a
 *   422), `PUT /v2/people/{id}`, `DELETE /v2/people/{id}` (204); accounts the same (a `name` and a
 *   unique `domain` required). Custom values in `custom_fields: {name: value}`, merged on update.
 *   A deleted person or account is gone: no listing reveals it.
 * - Rate limit: 600 cost a minute per team; a request costs 1, more for deep pages (page 101–150:
 *   3, 151–250: 8, 251–500: 10, 501+: 30). `x-ratelimit-endpoint-cost` and
 *   `x-ratelimit-remaining-minute` on every answer; over the limit, a 429 with `Retry-After`.
 * - Errors: validation as 422 `{errors: {field: [message]}}`; others `{status, error}`.
 */

type SalesloftRecord = Record<string, unknown> & { id: number };
/** `modifiedUs`: the modification time in microseconds, as Salesloft keeps it. */
type Row = StoredRecord<SalesloftRecord> & { modifiedUs: number; createdUs: number };

const objects = ['people', 'accounts'] as const;
type SalesloftObject = (typeof objects)[number];
const PAGE_MAX = 100;
const PAGE_DEFAULT = 25;
const MINUTE_BUDGET = 600;
const OFFSET_MINUTES = -5 * 60;
const readOnly = [
  'id',
  'created_at',
  'updated_at',
  'counts',
  'owner',
  'creator',
  'last_contacted_at',
  'display_name',
];

/** Microseconds since the epoch → `2024-03-07T04:26:14.444910-05:00`. */
function salesloftTime(us: number): string {
  const ms = Math.floor(us / 1000);
  const local = new Date(ms + OFFSET_MINUTES * 60_000).toISOString().slice(0, 19);
  const fraction = String(us % 1_000_000).padStart(6, '0');
  const sign = OFFSET_MINUTES < 0 ? '-' : '+';
  const offset = Math.abs(OFFSET_MINUTES);
  return `${local}.${fraction}${sign}${String(Math.floor(offset / 60)).padStart(2, '0')}:${String(offset % 60).padStart(2, '0')}`;
}

/** An ISO 8601 time with up to six fractional digits → microseconds since the epoch. */
function microsOf(text: string): number {
  const match =
    /^(\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?)?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/i.exec(
      text.trim(),
    );
  if (!match) return NaN;
  const [, stamp, fraction = '', zone = 'Z'] = match;
  const ms = Date.parse(`${stamp.length === 10 ? `${stamp}T00:00:00` : stamp}${zone}`);
  return ms * 1000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}

function invalid(errors: Record<string, string[]>): FakeHttpError {
  return Object.assign(new FakeHttpError(422, Object.values(errors)[0][0], 'invalid'), { errors });
}

function pageCost(page: number): number {
  if (page > 500) return 30;
  if (page > 250) return 10;
  if (page > 150) return 8;
  if (page > 100) return 3;
  return 1;
}

export async function startFakeSalesloft(): Promise<ConformanceFake> {
  const stores: Record<SalesloftObject, Map<string, Row>> = { people: new Map(), accounts: new Map() };
  let nextId = 1;
  /** A counter that gives each change its own microseconds below the millisecond. */
  let tick = 0;
  const spent: { at: number; cost: number }[] = [];

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => {
      const errors = (error as { errors?: Record<string, string[]> }).errors;
      if (errors) return { errors };
      return { status: error.status, error: error.status === 429 ? 'Too Many Requests' : error.message };
    },
    rateLimitHeaders: () => ({ 'x-ratelimit-remaining-minute': '0', 'Retry-After': '1' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  // The team's budget of cost a minute, on real time (the provider's meter, not the test's clock).
  router.use(async (ctx, next) => {
    const at = Date.now();
    while (spent.length && spent[0].at <= at - 60_000) spent.shift();
    const page = Number(ctx.query.page ?? 1);
    const cost = ctx.method === 'GET' && Number.isInteger(page) ? pageCost(page) : 1;
    const used = spent.reduce((sum, entry) => sum + entry.cost, 0);
    if (used + cost > MINUTE_BUDGET) {
      const wait = Math.max(1, Math.ceil((spent[0].at + 60_000 - at) / 1000));
      throw new FakeHttpError(429, 'Too Many Requests', undefined, {
        'Retry-After': String(wait),
        'x-ratelimit-remaining-minute': String(MINUTE_BUDGET - used),
      });
    }
    spent.push({ at, cost });
    ctx.set('x-ratelimit-endpoint-cost', String(cost));
    ctx.set('x-ratelimit-remaining-minute', String(MINUTE_BUDGET - used - cost));
    await next();
  });

  const origin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
  const objectOf = (ctx: Context): SalesloftObject => {
    const object = ctx.params.object as SalesloftObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, 'Not Found');
    return object;
  };
  const rowOf = (object: SalesloftObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row || row.deleted) throw new FakeHttpError(404, 'Not Found');
    return row;
  };

  /** Microseconds for a change at `ms`: the millisecond, and microseconds of its own below it. */
  const microsAt = (ms: number) => ms * 1000 + (tick = (tick % 997) + 1);

  const present = (ctx: Context, row: Row) => ({
    ...row.record,
    created_at: salesloftTime(row.createdUs),
    updated_at: salesloftTime(row.modifiedUs),
    owner: { _href: `${origin(ctx)}/v2/users/1`, id: 1 },
  });

  const timeFilters = (ctx: Context) => {
    const bounds: { op: string; us: number; text: string }[] = [];
    for (const op of ['gt', 'gte', 'lt', 'lte']) {
      const raw = ctx.query[`updated_at[${op}]`];
      if (raw === undefined) continue;
      const text = String(Array.isArray(raw) ? raw[0] : raw);
      const us = microsOf(text);
      if (Number.isNaN(us)) throw invalid({ updated_at: [`${op} is not a valid iso8601 timestamp`] });
      bounds.push({ op, us, text });
    }
    return bounds;
  };

  router.get('/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const perPage = ctx.query.per_page === undefined ? PAGE_DEFAULT : Number(ctx.query.per_page);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > PAGE_MAX)
      throw invalid({ per_page: [`must be in the range [1, ${PAGE_MAX}]`] });
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(page) || page < 1) throw invalid({ page: ['must be a positive integer'] });
    fake.logListing(ctx, { object, pageSize: perPage, maxPageSize: PAGE_MAX });
    const sortBy = ctx.query.sort_by === undefined ? 'updated_at' : String(ctx.query.sort_by);
    if (!['updated_at', 'created_at', 'id'].includes(sortBy))
      throw invalid({ sort_by: [`${sortBy} is not a valid sort field`] });
    const directionText = ctx.query.sort_direction === undefined ? 'DESC' : String(ctx.query.sort_direction);
    if (!/^(asc|desc)$/i.test(directionText)) throw invalid({ sort_direction: ['must be ASC or DESC'] });
    const direction = directionText.toUpperCase() === 'ASC' ? 1 : -1;
    const bounds = timeFilters(ctx);
    const idsRaw = ctx.query['ids[]'] ?? ctx.query.ids;
    const ids = idsRaw === undefined ? undefined : [idsRaw].flat().flatMap((text) => String(text).split(','));

    const key = (row: Row) =>
      sortBy === 'updated_at' ? row.modifiedUs : sortBy === 'created_at' ? row.createdUs : row.record.id;
    const found = [...stores[object].values()]
      .filter((row) => !row.deleted && (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => !ids || ids.includes(String(row.record.id)))
      .filter((row) =>
        bounds.every(({ op, us }) =>
          op === 'gt'
            ? row.modifiedUs > us
            : op === 'gte'
              ? row.modifiedUs >= us
              : op === 'lt'
                ? row.modifiedUs < us
                : row.modifiedUs <= us,
        ),
      )
      .sort((a, b) => (key(a) - key(b) || a.record.id - b.record.id) * direction);
    const start = (page - 1) * perPage;
    const data = found.slice(start, start + perPage).map((row) => present(ctx, row));
    const more = found.length > start + perPage;
    const filtering = Object.fromEntries(bounds.map(({ op, text }) => [op, text]));
    ctx.body = {
      metadata: {
        filtering: bounds.length ? { updated_at: filtering } : {},
        paging: {
          per_page: perPage,
          current_page: page,
          next_page: more ? page + 1 : null,
          prev_page: page > 1 ? page - 1 : null,
          ...(ctx.query.include_paging_counts === 'true' && {
            total_pages: Math.ceil(found.length / perPage),
            total_count: found.length,
          }),
        },
        sorting: { sort_by: sortBy, sort_direction: `${direction === 1 ? 'ASC' : 'DESC'} NULLS LAST` },
      },
      data,
    };
  });

  router.get('/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { data: present(ctx, rowOf(object, ctx.params.id)) };
  });

  const bodyOf = (ctx: Context): Record<string, unknown> => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid({ base: ['body must be an object'] });
    return body as Record<string, unknown>;
  };

  /** Checks a create or an update as Salesloft does; returns the values to store. */
  const checked = (object: SalesloftObject, values: Record<string, unknown>, current?: Row) => {
    const errors: Record<string, string[]> = {};
    const after = { ...current?.record, ...values };
    for (const name of Object.keys(values)) {
      if (readOnly.includes(name)) errors[name] = ['is read-only'];
    }
    if (
      values.custom_fields !== undefined &&
      (typeof values.custom_fields !== 'object' || Array.isArray(values.custom_fields))
    )
      errors.custom_fields = ['must be an object'];
    const taken = (field: string) =>
      [...stores[object].values()].some(
        (row) =>
          !row.deleted &&
          row !== current &&
          typeof after[field] === 'string' &&
          String(row.record[field]).toLowerCase() === String(after[field]).toLowerCase(),
      );
    if (object === 'people') {
      if (!after.email_address && !(after.phone && after.last_name))
        errors.email_address = ["can't be blank unless a phone and last_name are given"];
      else if (after.email_address && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(String(after.email_address)))
        errors.email_address = ['is invalid'];
      else if (after.email_address && taken('email_address'))
        errors.email_address = ['has already been taken'];
    } else {
      if (!after.name) errors.name = ["can't be blank"];
      if (!after.domain) errors.domain = ["can't be blank"];
      else if (taken('domain')) errors.domain = ['has already been taken'];
    }
    if (Object.keys(errors).length) throw invalid(errors);
    const merged = { ...values };
    if (current && values.custom_fields)
      merged.custom_fields = {
        ...(current.record.custom_fields as object),
        ...(values.custom_fields as object),
      };
    return merged;
  };

  const create = (object: SalesloftObject, values: Record<string, unknown>, ms: number): Row => {
    const id = nextId++;
    const base =
      object === 'people'
        ? {
            first_name: null,
            last_name: null,
            email_address: null,
            phone: null,
            title: null,
            city: null,
            custom_fields: {},
            tags: [],
          }
        : {
            name: null,
            domain: null,
            description: null,
            website: null,
            industry: null,
            custom_fields: {},
            tags: [],
          };
    const record: SalesloftRecord = { id, ...base, ...values };
    if (object === 'people')
      record.display_name = [record.first_name, record.last_name].filter(Boolean).join(' ');
    const us = microsAt(ms);
    const row: Row = { record, modifiedMs: ms, modifiedUs: us, createdUs: us };
    stores[object].set(String(id), row);
    return row;
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.modifiedUs = microsAt(ms);
    row.visibleFromMs = visibleFromMs;
  };

  router.post('/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const row = create(object, checked(object, bodyOf(ctx)), now());
    ctx.body = { data: present(ctx, row) };
  });

  router.put('/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    Object.assign(row.record, checked(object, bodyOf(ctx), row));
    if (object === 'people')
      row.record.display_name = [row.record.first_name, row.record.last_name].filter(Boolean).join(' ');
    stamp(row, now());
    ctx.body = { data: present(ctx, row) };
  });

  router.delete('/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    rowOf(object, ctx.params.id);
    stores[object].delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as SalesloftObject].get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
    return row;
  };

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    seed: (object, times) =>
      times.map((ms) => {
        const n = nextId;
        const values =
          object === 'people'
            ? {
                first_name: `First${n}`,
                last_name: `Last${n}`,
                email_address: `p${n}@example.com`,
                title: 'Buyer',
                custom_fields: { tier: 'gold' },
              }
            : {
                name: `Account ${n}`,
                domain: `a${n}.example.com`,
                description: 'Seeded',
                custom_fields: { tier: 'gold' },
              };
        return String(create(object as SalesloftObject, values, ms).record.id);
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // Deleted: gone, listed nowhere.
      stores[object as SalesloftObject].delete(id);
    },
    stored: (object, id) => stores[object as SalesloftObject].get(id)?.record,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
