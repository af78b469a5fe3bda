import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Front's Core API (https://dev.frontapp.com/reference, the OpenAPI document in
 * frontapp/front-api-specs): contacts listed with `q[updated_after]`/`q[updated_before]` (Unix
 * seconds with up to 3 decimals, both taken as strict bounds here), `sort_by`/`sort_order`, `limit`
 * (≤ 100); accounts listed with `sort_by`/`sort_order` and no filter; `{_pagination: {next},
 * _results}` whose next link names the company's own host (`https://<company>.api.frontapp.com/…
 * ?page_token=…`, the token standing for the whole query); writes `POST` (201 with the record),
 * `PATCH` (204 for contacts, 200 with the account), `DELETE` (204); custom field lists per object;
 * errors as `{_error: {status, title, message}}`; `x-ratelimit-*` headers on every answer.
 */

type FrontRecord = Record<string, unknown> & { id: string; updated_at: number };

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
  ],
  accounts: [
    { id: 'fld_3', name: 'Renewal date', description: 'Next renewal', type: 'datetime' },
    { id: 'fld_4', name: 'Seats', description: 'Licensed seats', type: 'number' },
  ],
};

/** Front writes times as Unix seconds with milliseconds as decimals. */
const frontTime = (ms: number) => Math.round(ms) / 1000;

export async function startFakeFront(): Promise<ConformanceFake> {
  const records: Record<FrontObject, Map<string, FrontRecord>> = { contacts: new Map(), accounts: new Map() };
  /** Page tokens: each stands for its query and the next offset. */
  const tokens = new Map<string, { object: FrontObject; query: Record<string, unknown>; offset: number }>();
  let nextId = 1;

  const fake = new FakeProvider({
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
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1),
    }),
  });

  const router = fake.router;
  router.use(async (ctx, next) => {
    ctx.set('x-ratelimit-limit', '50');
    ctx.set('x-ratelimit-remaining', '49');
    ctx.set('x-ratelimit-reset', String(Math.ceil(Date.now() / 1000) + 60));
    await next();
  });

  const objectOf = (ctx: Context): FrontObject => {
    const object = ctx.params.object as FrontObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, `Unknown resource ${ctx.path}`);
    return object;
  };
  const recordOf = (object: FrontObject, id: string): FrontRecord => {
    const record = records[object].get(id);
    if (!record) throw new FakeHttpError(404, `${object === 'contacts' ? 'Contact' : 'Account'} not found`);
    return record;
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
    return values;
  };

  const build = (object: FrontObject, values: Record<string, unknown>, ms: number): FrontRecord => {
    const id = `${prefixes[object]}_${(nextId++).toString(36)}`;
    const links = { self: `${companyHost}/${object}/${id}` };
    if (object === 'contacts') {
      return {
        _links: links,
        id,
        name: null,
        description: null,
        avatar_url: null,
        links: [],
        lists: [],
        handles: [],
        custom_fields: {},
        is_private: false,
        ...values,
        updated_at: frontTime(ms),
      };
    }
    return {
      _links: links,
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
    const found = [...records[object].values()]
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
    ctx.body = recordOf(objectOf(ctx), ctx.params.id);
  });

  router.post('/:object', (ctx) => {
    const object = objectOf(ctx);
    const record = build(object, checkValues(object, ctx.request.body, true), Date.now());
    records[object].set(record.id, record);
    ctx.status = 201;
    ctx.body = record;
  });

  router.patch('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    Object.assign(record, checkValues(object, ctx.request.body, false), {
      updated_at: frontTime(Date.now()),
    });
    if (object === 'contacts') {
      ctx.status = 204;
      return;
    }
    ctx.body = record;
  });

  router.delete('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.id);
    records[object].delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  return {
    url: fake.url,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    requests: fake.requests,
    seed: (object, times) =>
      times.map((ms) => {
        const front = object as FrontObject;
        const values =
          front === 'contacts'
            ? { name: `Contact ${nextId}`, handles: [{ handle: `c${nextId}@example.com`, source: 'email' }] }
            : { name: `Account ${nextId}` };
        const record = build(front, values, ms);
        records[front].set(record.id, record);
        return record.id;
      }),
    touch(object, id, modifiedMs) {
      recordOf(object as FrontObject, id).updated_at = frontTime(modifiedMs);
    },
    stored: (object, id) => records[object as FrontObject].get(id),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
