import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Front's Core API (https://dev.frontapp.com/reference, the OpenAPI document in
 * frontapp/front-api-specs), written from its reference; notes and sources in
 * /work/notes/fakes/front.md.
 *
 * - Times are Unix seconds with up to 3 decimals (milliseconds).
 * - Contacts listed with `q[updated_after]`/`q[updated_before]` (both strict bounds here),
 *   `sort_by` (`created_at` or `updated_at`)/`sort_order`, `limit` (default 50, at most 100);
 *   accounts listed with `sort_by`/`sort_order` and no filter; `{_pagination: {next}, _links,
 *   _results}` whose next link names the company's own host
 *   (`https://<company>.api.frontapp.com/…?page_token=…`, the token standing for the whole query).
 * - Writes: `POST` (201 with the record), `PATCH` (204 for contacts, 200 with the account),
 *   `DELETE` (204, for good: nothing lists deletions). `custom_fields` is keyed by the field's
 *   `name`, and a write that sends it replaces all of them (fields left out are erased); values
 *   must match the field's type (enum values checked).
 * - Custom field lists per object (`string`, `boolean`, `datetime`, `number`, `teammate`, `inbox`,
 *   `enum`); records carry only the custom fields that have a value.
 * - Errors `{_error: {status, title, message}}`; `x-ratelimit-*` headers on every answer,
 *   `Retry-After` on a 429.
 */

type FrontRecord = Record<string, unknown> & { id: string; updated_at: number };
type Row = StoredRecord<FrontRecord>;

const objects = ['contacts', 'accounts'] as const;
type FrontObject = (typeof objects)[number];
const prefixes: Record<FrontObject, string> = { contacts: 'crd', accounts: 'acc' };
const companyHost = 'https://acme.api.frontapp.com';
const handleSources = ['twitter', 'email', 'phone', 'facebook', 'intercom', 'front_chat', 'custom'];

const customFields: Record<FrontObject, Record<string, unknown>[]> = {
  contacts: [
    {
      id: 'fld_1',
      name: 'Tier',
      description: 'Support tier',
      type: 'enum',
      values: [
        { value: 'gold', label: 'Gold' },
        { value: 'silver', label: 'Silver' },
      ],
    },
    { id: 'fld_2', name: 'VIP', description: 'Very important', type: 'boolean' },
    { id: 'fld_5', name: 'City', description: 'Where they are', type: 'string' },
  ],
  accounts: [
    { id: 'fld_3', name: 'Renewal date', description: 'Next renewal', type: 'datetime' },
    { id: 'fld_4', name: 'Seats', description: 'Licensed seats', type: 'number' },
  ],
};

/** Front writes times as Unix seconds with milliseconds as decimals. */
const frontTime = (ms: number) => Math.round(ms) / 1000;

/** Checks custom field values against their definitions; the object replaces the record's. */
function customValues(object: FrontObject, raw: unknown): Record<string, unknown> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new FakeHttpError(400, '"custom_fields" must be an object');
  for (const [name, value] of Object.entries(raw)) {
    const field = customFields[object].find((candidate) => candidate.name === name);
    if (!field) throw new FakeHttpError(400, `Unknown custom field "${name}"`);
    if (value === null) continue;
    const type = field.type as string;
    const ok =
      type === 'boolean'
        ? typeof value === 'boolean'
        : type === 'number' || type === 'datetime'
          ? typeof value === 'number'
          : type === 'enum'
            ? (field.values as { value: string }[]).some((allowed) => allowed.value === value)
            : typeof value === 'string';
    if (!ok) throw new FakeHttpError(400, `Invalid value for custom field "${name}" of type ${type}`);
  }
  return { ...(raw as Record<string, unknown>) };
}

export async function startFakeFront(): Promise<ConformanceFake> {
  const stores: Record<FrontObject, RecordStore<FrontRecord>> = {
    contacts: new RecordStore(),
    accounts: new RecordStore(),
  };
  /** Page tokens: each stands for its query and the next offset. */
  const tokens = new Map<string, { object: FrontObject; query: Record<string, unknown>; offset: number }>();
  let nextId = 1;

  const fake: FakeProvider = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      _error: {
        status: error.status,
        title:
          error.status === 401
            ? 'Unauthenticated'
            : error.status === 404
              ? 'Not found'
              : error.status === 429
                ? 'Too many requests'
                : error.status >= 500
                  ? 'Internal server error'
                  : 'Bad request',
        message: error.status === 429 ? 'Rate limit exceeded' : error.message,
      },
    }),
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '50',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(fake.now() / 1000) + 60),
      'retry-after': '60',
    }),
  });
  const now = () => fake.now();

  const router = fake.router;
  router.use(async (ctx, next) => {
    ctx.set('x-ratelimit-limit', '50');
    ctx.set('x-ratelimit-remaining', '49');
    ctx.set('x-ratelimit-reset', String(Math.ceil(now() / 1000) + 60));
    await next();
  });

  const objectOf = (ctx: Context): FrontObject => {
    const object = ctx.params.object as FrontObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, `Unknown resource ${ctx.path}`);
    return object;
  };
  const rowOf = (object: FrontObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${object === 'contacts' ? 'Contact' : 'Account'} not found`);
    return row;
  };
  const seconds = (ctx: Context, name: string): number | undefined => {
    const value = ctx.query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^\d+(\.\d{1,3})?$/.test(value)) {
      throw new FakeHttpError(400, `${name} must be a timestamp in seconds with up to 3 decimals`);
    }
    return Number(value);
  };

  const checkValues = (object: FrontObject, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Invalid body');
    const allowed =
      object === 'contacts'
        ? ['name', 'description', 'links', 'list_names', 'group_names', 'custom_fields', 'handles']
        : ['name', 'description', 'domains', 'external_id', 'custom_fields'];
    const values = body as Record<string, unknown>;
    for (const name of Object.keys(values)) {
      if (!allowed.includes(name) || (name === 'handles' && !creating)) {
        throw new FakeHttpError(400, `"${name}" is not allowed`);
      }
    }
    if (object === 'contacts' && creating) {
      const handles = values.handles;
      if (
        !Array.isArray(handles) ||
        !handles.length ||
        !handles.every(
          (h) => h && typeof h.handle === 'string' && h.handle && handleSources.includes(h.source),
        )
      ) {
        throw new FakeHttpError(400, '"handles" is required: [{handle, source}]');
      }
    }
    if (object === 'accounts' && (creating || 'name' in values) && typeof values.name !== 'string') {
      throw new FakeHttpError(400, '"name" is required');
    }
    if (values.custom_fields !== undefined)
      return { ...values, custom_fields: customValues(object, values.custom_fields) };
    return values;
  };

  const build = (object: FrontObject, values: Record<string, unknown>, ms: number): Row => {
    const record = buildRecord(object, values, ms);
    const row: Row = { record, modifiedMs: ms };
    stores[object].rows.set(record.id, row);
    return row;
  };
  const buildRecord = (object: FrontObject, values: Record<string, unknown>, ms: number): FrontRecord => {
    const id = `${prefixes[object]}_${(nextId++).toString(36)}`;
    if (object === 'contacts') {
      const links = {
        self: `${companyHost}/contacts/${id}`,
        related: {
          notes: `${companyHost}/contacts/${id}/notes`,
          conversations: `${companyHost}/contacts/${id}/conversations`,
          owner: null,
        },
      };
      return {
        _links: links,
        id,
        name: null,
        description: null,
        avatar_url: null,
        links: [],
        groups: [],
        lists: [],
        handles: [],
        custom_fields: {},
        is_private: false,
        ...values,
        updated_at: frontTime(ms),
      };
    }
    return {
      _links: {
        self: `${companyHost}/accounts/${id}`,
        related: { contacts: `${companyHost}/accounts/${id}/contacts` },
      },
      id,
      name: null,
      logo_url: null,
      description: null,
      domains: [],
      external_id: null,
      custom_fields: {},
      ...values,
      created_at: frontTime(ms),
      updated_at: frontTime(ms),
    };
  };

  router.get('/:object/custom_fields', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { _links: { self: `${companyHost}/${object}/custom_fields` }, _results: customFields[object] };
  });

  router.get('/:object', (ctx) => {
    let object = objectOf(ctx);
    let query: Record<string, unknown> = { ...ctx.query };
    let offset = 0;
    const token = ctx.query.page_token;
    if (typeof token === 'string') {
      const saved = tokens.get(token);
      if (!saved || saved.object !== object) throw new FakeHttpError(400, 'Invalid page_token');
      ({ object, query, offset } = saved);
      if (ctx.query.limit !== undefined) query.limit = ctx.query.limit;
    }
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new FakeHttpError(400, 'limit must be an integer between 1 and 100');
    }
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: 100 });
    const sortBy = query.sort_by === undefined ? undefined : String(query.sort_by);
    if (sortBy !== undefined && !['created_at', 'updated_at'].includes(sortBy)) {
      throw new FakeHttpError(400, 'sort_by must be created_at or updated_at');
    }
    const descending = query.sort_order === 'desc';
    const fakeCtx = { query } as unknown as Context;
    // Only contacts take the q object; accounts have no filter.
    const after = object === 'contacts' ? seconds(fakeCtx, 'q[updated_after]') : undefined;
    const before = object === 'contacts' ? seconds(fakeCtx, 'q[updated_before]') : undefined;
    const key = (record: FrontRecord) => Number(record[sortBy ?? 'created_at'] ?? record.updated_at);
    const found = stores[object]
      .live()
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .map((row) => row.record)
      .filter(
        (record) =>
          (after === undefined || record.updated_at > after) &&
          (before === undefined || record.updated_at < before),
      )
      .sort((a, b) => (key(a) - key(b) || a.id.localeCompare(b.id)) * (descending ? -1 : 1));
    const page = found.slice(offset, offset + limit);
    let next: string | null = null;
    if (offset + page.length < found.length) {
      const nextToken = randomBytes(16).toString('hex');
      tokens.set(nextToken, { object, query, offset: offset + page.length });
      next = `${companyHost}/${object}?page_token=${nextToken}`;
    }
    ctx.body = { _pagination: { next }, _links: { self: `${companyHost}/${object}` }, _results: page };
  });

  router.get('/:object/:id', (ctx) => {
    ctx.body = rowOf(objectOf(ctx), ctx.params.id).record;
  });

  router.post('/:object', (ctx) => {
    const object = objectOf(ctx);
    const row = build(object, checkValues(object, ctx.request.body, true), now());
    ctx.status = 201;
    ctx.body = row.record;
  });

  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record.updated_at = frontTime(ms);
  };

  router.patch('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    // custom_fields, when sent, replaces the record's: the fields left out are erased.
    Object.assign(row.record, checkValues(object, ctx.request.body, false));
    stamp(row, now());
    if (object === 'contacts') {
      ctx.status = 204;
      return;
    }
    ctx.body = row.record;
  });

  router.delete('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    rowOf(object, ctx.params.id);
    stores[object].rows.delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as FrontObject].rows.get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
    return row;
  };

  return {
    url: fake.url,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    seed: (object, times) =>
      times.map((ms) => {
        const front = object as FrontObject;
        const values =
          front === 'contacts'
            ? {
                name: `Contact ${nextId}`,
                handles: [{ handle: `c${nextId}@example.com`, source: 'email' }],
                custom_fields: { Tier: 'gold', VIP: false, City: 'Paris' },
              }
            : {
                name: `Account ${nextId}`,
                custom_fields: { Seats: 10, 'Renewal date': Math.floor(ms / 1000) },
              };
        return build(front, values, ms).record.id;
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      stores[object as FrontObject].rows.delete(id);
    },
    stored: (object, id) => stores[object as FrontObject].get(id)?.record,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
