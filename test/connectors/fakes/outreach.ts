import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  type StoredRecord,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Outreach's REST API v2 (https://developers.outreach.io/api/making-requests),
 * written from its reference (making requests: content negotiation, filter and sort, sparse
 * fieldsets, pagination, errors; getting started: OAuth, rate limiting) and its published OpenAPI
 * document (prospect and account attributes):
 *
 * - JSON:API 1.0 under `/api/v2`, OAuth access tokens as `Authorization: Bearer`. A request with a
 *   body must say `Content-Type: application/vnd.api+json`, else a 415 `unsupportedMediaType`.
 * - Resources `{type, id, attributes, relationships, links: {self}}`, `id` an integer; times ISO
 *   8601 UTC to the second with zero milliseconds (`2025-01-15T10:30:00.000Z`): a stored time is
 *   truncated to its second. `createdAt`/`updatedAt` are read-only.
 * - `GET /api/v2/prospects`, `/api/v2/accounts`: `filter[<attribute>]` takes a value, a list
 *   (`1,2,3`) or a range `from..to`, both ends inclusive, `inf`/`neginf` for an open end
 *   (`filter[updatedAt]=2024-01-01T00:00:00..inf`: updated at or after); with
 *   `newFilterSyntax=true`, `filter[updatedAt][gte]=`/`[lte]=`. A date alone means its midnight UTC.
 *   `sort=<attribute>` (`-` descending, default `id`); `fields[prospect|account]` sparse fieldsets;
 *   `page[size]` 1 to 1000 (default 50), cursor pages: `links.next` is the whole next URL carrying an
 *   opaque `page[after]`, left out on the last page. `count=true` adds `meta.count` (new
 *   applications default to no count).
 * - `POST` (201), `PATCH` (only the attributes sent change; `type` and `id` must match the URL),
 *   `DELETE` (204) at `/api/v2/<plural>[/{id}]`, the document as `{data: {type, id?, attributes}}`.
 *   A deleted prospect or account is gone: no listing reveals it. Accounts need a `name`.
 * - Errors `{errors: [{id, title, detail, source?: {pointer}}]}` (`validationError` 422,
 *   `resourceNotFound` 404, `unauthorized` 401, `rateLimitExceeded` 429). Every answer carries
 *   `X-RateLimit-Limit` (10,000 an hour per user), `-Remaining` and `-Reset` (epoch seconds); a 429
 *   adds `Retry-After`.
 */

type Resource = { type: string; id: number; attributes: Record<string, unknown> };
type Row = StoredRecord<Resource>;

const objects = ['prospects', 'accounts'] as const;
type OutreachObject = (typeof objects)[number];
const typeOf: Record<OutreachObject, string> = { prospects: 'prospect', accounts: 'account' };
const PAGE_MAX = 1000;
const PAGE_DEFAULT = 50;
const HOURLY_LIMIT = 10_000;
const readOnly: Record<OutreachObject, string[]> = {
  prospects: [
    'callsOptedAt',
    'clickCount',
    'contactHistogram',
    'createdAt',
    'emailsOptedAt',
    'engagedAt',
    'engagedScore',
    'linkedInSlug',
    'name',
    'openCount',
    'optedOutAt',
    'replyCount',
    'timeZoneIana',
    'timeZoneInferred',
    'touchedAt',
    'updatedAt',
  ],
  accounts: ['createdAt', 'touchedAt', 'updatedAt'],
};
/** Attributes the fake filters and sorts on (the reference marks them filterable/sortable). */
const filterable: Record<OutreachObject, string[]> = {
  prospects: ['id', 'createdAt', 'updatedAt', 'firstName', 'lastName', 'emails', 'title', 'externalSource'],
  accounts: ['id', 'createdAt', 'updatedAt', 'name', 'domain', 'named'],
};
const timeAttributes = new Set(['createdAt', 'updatedAt']);

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const outreachTime = (ms: number) => new Date(wholeSecond(ms)).toISOString();

function failure(status: number, id: string, detail: string, pointer?: string): FakeHttpError {
  return Object.assign(new FakeHttpError(status, detail, id), { pointer });
}
const titles: Record<string, string> = {
  validationError: 'Validation Error',
  resourceNotFound: 'Resource Not Found',
  unauthorized: 'Unauthorized',
  rateLimitExceeded: 'Rate Limit Exceeded',
  unsupportedMediaType: 'Unsupported Media Type',
  badRequest: 'Bad Request',
  serverError: 'Internal Server Error',
};

/** A filter bound: `inf`, `neginf`, a date (midnight UTC) or a time; numbers for `id`. */
function boundOf(attribute: string, text: string): number {
  if (text === 'inf') return Infinity;
  if (text === 'neginf') return -Infinity;
  const value = timeAttributes.has(attribute)
    ? Date.parse(
        /^\d{4}-\d{2}-\d{2}$/.test(text)
          ? `${text}T00:00:00Z`
          : /[zZ]|[+-]\d{2}:?\d{2}$/.test(text)
            ? text
            : `${text}Z`,
      )
    : Number(text);
  if (Number.isNaN(value))
    throw failure(400, 'badRequest', `Invalid filter value '${text}' for '${attribute}'.`);
  return value;
}

export async function startFakeOutreach(): Promise<ConformanceFake> {
  const stores: Record<OutreachObject, Map<string, Row>> = { prospects: new Map(), accounts: new Map() };
  let nextId = 1;
  const budget = new RequestWindow(HOURLY_LIMIT, 3_600_000);

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => {
      const id =
        error.status === 401
          ? 'unauthorized'
          : error.status === 429
            ? 'rateLimitExceeded'
            : error.status >= 500
              ? 'serverError'
              : (error.code ?? (error.status === 404 ? 'resourceNotFound' : 'badRequest'));
      const pointer = (error as { pointer?: string }).pointer;
      const detail =
        error.status === 429
          ? `You have exceeded your permitted rate limit of ${HOURLY_LIMIT}; please try again later.`
          : error.message;
      return {
        errors: [{ id, title: titles[id] ?? 'Error', detail, ...(pointer && { source: { pointer } }) }],
      };
    },
    rateLimitHeaders: () => ({
      'X-RateLimit-Limit': String(HOURLY_LIMIT),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 1),
      'Retry-After': '1',
    }),
    rateLimitCode: 'rateLimitExceeded',
  });
  const now = () => fake.now();
  const router = fake.router;

  // The per-user hourly budget, counted on the fake's own (real) time.
  router.use(async (ctx, next) => {
    const taken = budget.take();
    ctx.set('X-RateLimit-Limit', String(HOURLY_LIMIT));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, HOURLY_LIMIT - taken.used)));
    ctx.set('X-RateLimit-Reset', String(Math.ceil(taken.resetMs / 1000)));
    if (!taken.allowed) {
      throw new FakeHttpError(429, 'Rate limit exceeded', 'rateLimitExceeded', {
        'Retry-After': String(taken.retryAfterSeconds),
      });
    }
    if (ctx.request.length && !/^application\/vnd\.api\+json/i.test(ctx.get('content-type'))) {
      throw failure(
        415,
        'unsupportedMediaType',
        "Expected Content-Type header to be 'application/vnd.api+json'.",
      );
    }
    await next();
    if (ctx.body !== undefined) ctx.type = 'application/vnd.api+json';
  });

  const origin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
  const objectOf = (ctx: Context): OutreachObject => {
    const object = ctx.params.object as OutreachObject;
    if (!objects.includes(object))
      throw failure(404, 'resourceNotFound', `Unknown resource '${ctx.params.object}'.`);
    return object;
  };
  const rowOf = (object: OutreachObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row || row.deleted)
      throw failure(404, 'resourceNotFound', `Could not find '${typeOf[object]}' with ID '${id}'.`);
    return row;
  };

  const present = (ctx: Context, object: OutreachObject, row: Row, fields?: string[]) => {
    const attributes = fields
      ? Object.fromEntries(Object.entries(row.record.attributes).filter(([name]) => fields.includes(name)))
      : row.record.attributes;
    const self = `${origin(ctx)}/api/v2/${object}/${row.record.id}`;
    const relationships =
      object === 'prospects'
        ? {
            account: { data: null },
            mailings: {
              links: { related: `${origin(ctx)}/api/v2/mailings?filter[prospect][id]=${row.record.id}` },
            },
          }
        : {
            prospects: {
              links: { related: `${origin(ctx)}/api/v2/prospects?filter[account][id]=${row.record.id}` },
            },
          };
    return { ...row.record, attributes, relationships, links: { self } };
  };

  const valueOf = (row: Row, attribute: string): unknown =>
    attribute === 'id'
      ? row.record.id
      : attribute === 'updatedAt'
        ? row.modifiedMs
        : attribute === 'createdAt'
          ? Date.parse(String(row.record.attributes.createdAt))
          : row.record.attributes[attribute];

  /** `filter[...]` parameters → a predicate. */
  const filterOf = (ctx: Context, object: OutreachObject): ((row: Row) => boolean) => {
    const tests: ((row: Row) => boolean)[] = [];
    const newSyntax = ctx.query.newFilterSyntax === 'true';
    for (const [name, raw] of Object.entries(ctx.query)) {
      const match = /^filter\[([A-Za-z0-9]+)\](?:\[(gte|lte|gt|lt)\]|\[\])?$/.exec(name);
      if (!match) {
        if (name.startsWith('filter[')) throw failure(400, 'badRequest', `Unsupported filter '${name}'.`);
        continue;
      }
      const [, attribute, operator] = match;
      if (!filterable[object].includes(attribute))
        throw failure(
          400,
          'badRequest',
          `'${attribute}' is not a filterable attribute of '${typeOf[object]}'.`,
        );
      const text = String(Array.isArray(raw) ? raw.join(',') : raw);
      const numeric = attribute === 'id' || timeAttributes.has(attribute);
      if (operator) {
        if (!newSyntax) throw failure(400, 'badRequest', `'${name}' needs newFilterSyntax=true.`);
        const bound = boundOf(attribute, text);
        tests.push((row) => {
          const value = valueOf(row, attribute) as number;
          return operator === 'gte'
            ? value >= bound
            : operator === 'lte'
              ? value <= bound
              : operator === 'gt'
                ? value > bound
                : value < bound;
        });
      } else if (!newSyntax && numeric && text.includes('..')) {
        const [from, to] = text.split('..');
        if (from === 'inf' || to === 'neginf') throw failure(400, 'badRequest', `Invalid range '${text}'.`);
        const low = boundOf(attribute, from);
        const high = boundOf(attribute, to);
        tests.push((row) => {
          const value = valueOf(row, attribute) as number;
          return value >= low && value <= high;
        });
      } else {
        const wanted = Array.isArray(raw) && newSyntax ? raw.map(String) : text.split(',');
        tests.push((row) => {
          const value = valueOf(row, attribute);
          if (Array.isArray(value)) return value.some((item) => wanted.includes(String(item)));
          if (numeric) return wanted.some((item) => boundOf(attribute, item) === value);
          return wanted.includes(String(value));
        });
      }
    }
    return (row) => tests.every((test) => test(row));
  };

  router.get('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const sizeText = ctx.query['page[size]'];
    const size = sizeText === undefined ? PAGE_DEFAULT : Number(sizeText);
    if (!Number.isInteger(size) || size < 1 || size > PAGE_MAX)
      throw failure(400, 'badRequest', `page[size] must be between 1 and ${PAGE_MAX}.`);
    fake.logListing(ctx, { object, pageSize: size, maxPageSize: PAGE_MAX });
    const matches = filterOf(ctx, object);
    const sortText = ctx.query.sort === undefined ? 'id' : String(ctx.query.sort);
    const descending = sortText.startsWith('-');
    const sortBy = sortText.replace(/^-/, '');
    if (!filterable[object].includes(sortBy) || sortBy === 'emails')
      throw failure(400, 'badRequest', `'${sortText}' is not a sortable attribute.`);
    const fieldsText = ctx.query[`fields[${typeOf[object]}]`];
    const fields = fieldsText === undefined ? undefined : String(fieldsText).split(',').filter(Boolean);

    type Key = [string | number, number];
    const key = (row: Row): Key => {
      const value = valueOf(row, sortBy);
      return [typeof value === 'number' ? value : String(value ?? ''), row.record.id];
    };
    const compare = (a: Key, b: Key) =>
      ((a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) || a[1] - b[1]) * (descending ? -1 : 1);
    let after: Key | undefined;
    const cursor = ctx.query['page[after]'];
    if (cursor !== undefined) {
      try {
        after = JSON.parse(Buffer.from(String(cursor), 'base64').toString('utf8')) as Key;
        if (!Array.isArray(after) || after.length !== 2) throw new Error('cursor');
      } catch {
        throw failure(400, 'badRequest', 'Invalid page[after] cursor.');
      }
    }
    const found = [...stores[object].values()]
      .filter((row) => !row.deleted && (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter(matches)
      .map((row) => ({ row, at: key(row) }))
      .sort((a, b) => compare(a.at, b.at))
      .filter(({ at }) => !after || compare(at, after) > 0);
    const page = found.slice(0, size);
    const base = `${origin(ctx)}/api/v2/${object}`;
    const link = (params: Record<string, string>) => {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(ctx.query)) {
        if (name !== 'page[after]') for (const item of [value].flat()) query.append(name, String(item));
      }
      for (const [name, value] of Object.entries(params)) query.set(name, value);
      const text = query.toString();
      return text ? `${base}?${text}` : base;
    };
    const links: Record<string, string> = { first: link({}) };
    if (found.length > size)
      links.next = link({ 'page[after]': Buffer.from(JSON.stringify(page.at(-1)!.at)).toString('base64') });
    ctx.body = {
      data: page.map(({ row }) => present(ctx, object, row, fields)),
      links,
      ...(ctx.query.count === 'true' && { meta: { count: found.length, count_truncated: false } }),
    };
  });

  router.get('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { data: present(ctx, object, rowOf(object, ctx.params.id)) };
  });

  /** `{data: {type, id?, attributes}}`, checked as Outreach checks it. */
  const attributesOf = (ctx: Context, object: OutreachObject, id?: string): Record<string, unknown> => {
    const data = (ctx.request.body as { data?: Record<string, unknown> } | undefined)?.data;
    if (!data || typeof data !== 'object')
      throw failure(422, 'validationError', 'The document has no data.', '/data');
    if (data.type !== typeOf[object])
      throw failure(422, 'validationError', `Expected type '${typeOf[object]}'.`, '/data/type');
    if (id !== undefined && String(data.id) !== id)
      throw failure(422, 'validationError', 'The id must match the id in the URL.', '/data/id');
    const attributes = (data.attributes ?? {}) as Record<string, unknown>;
    if (typeof attributes !== 'object' || Array.isArray(attributes))
      throw failure(422, 'validationError', 'attributes must be an object.', '/data/attributes');
    for (const name of Object.keys(attributes)) {
      if (readOnly[object].includes(name))
        throw failure(422, 'validationError', `${name} is read-only.`, `/data/attributes/${name}`);
      if (/^custom\d+$/.test(name) && Number(name.slice(6)) > 150)
        throw failure(
          422,
          'validationError',
          `${name} is not an attribute of ${typeOf[object]}.`,
          `/data/attributes/${name}`,
        );
    }
    if (object === 'prospects' && attributes.emails !== undefined && !Array.isArray(attributes.emails))
      throw failure(422, 'validationError', 'Emails must be a list.', '/data/attributes/emails');
    return attributes;
  };

  const fullName = (attributes: Record<string, unknown>) =>
    [attributes.firstName, attributes.lastName]
      .filter((part) => typeof part === 'string' && part)
      .join(' ') || null;

  const create = (object: OutreachObject, attributes: Record<string, unknown>, ms: number): Row => {
    const id = nextId++;
    const base =
      object === 'prospects'
        ? {
            firstName: null,
            lastName: null,
            emails: [],
            title: null,
            company: null,
            tags: [],
            trashedAt: null,
          }
        : { name: null, domain: null, description: null, named: true, tags: [] };
    const record: Resource = {
      type: typeOf[object],
      id,
      attributes: { ...base, ...attributes, createdAt: outreachTime(ms), updatedAt: outreachTime(ms) },
    };
    if (object === 'prospects') record.attributes.name = fullName(record.attributes);
    const row: Row = { record, modifiedMs: wholeSecond(ms) };
    stores[object].set(String(id), row);
    return row;
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.attributes.updatedAt = outreachTime(ms);
  };

  router.post('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const attributes = attributesOf(ctx, object);
    if (object === 'accounts' && (typeof attributes.name !== 'string' || !attributes.name))
      throw failure(422, 'validationError', "Name can't be blank.", '/data/attributes/name');
    const row = create(object, attributes, now());
    ctx.status = 201;
    ctx.body = { data: present(ctx, object, row) };
  });

  router.patch('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const attributes = attributesOf(ctx, object, ctx.params.id);
    Object.assign(row.record.attributes, attributes);
    if (object === 'prospects') row.record.attributes.name = fullName(row.record.attributes);
    stamp(row, now());
    ctx.body = { data: present(ctx, object, row) };
  });

  router.delete('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    rowOf(object, ctx.params.id);
    stores[object].delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as OutreachObject].get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
    return row;
  };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const n = nextId;
        const attributes =
          object === 'prospects'
            ? {
                firstName: `First${n}`,
                lastName: `Last${n}`,
                emails: [`p${n}@example.com`],
                title: 'Buyer',
                company: `Org ${n}`,
              }
            : { name: `Account ${n}`, domain: `a${n}.example.com`, description: 'Seeded' };
        return String(create(object as OutreachObject, attributes, ms).record.id);
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // Deleted through the API or the app: gone, listed nowhere.
      stores[object as OutreachObject].delete(id);
    },
    stored: (object, id) => stores[object as OutreachObject].get(id)?.record,
  });
}
