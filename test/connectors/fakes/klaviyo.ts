import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider, type StoredRecord } from '../kit/fake-provider.js';

/**
 * A local stand-in for Klaviyo's JSON:API (https://developers.klaviyo.com/en/reference/api_overview),
 * written from its reference (API overview: filtering, sorting, sparse fieldsets, pagination;
 * profiles; lists; rate limits and errors) and its OpenAPI documents (klaviyo/openapi):
 *
 * - Every request names a `revision` header (`YYYY-MM-DD[.suffix]`); without one, a 400. OAuth
 *   access tokens as `Authorization: Bearer`.
 * - Resources `{type, id, attributes, relationships, links: {self}}`; times ISO 8601 to the second
 *   with an offset (`2022-11-08T00:00:00+00:00`); a stored time is truncated to its second.
 * - `GET /api/profiles`: `filter` (`greater-than(updated,2024-01-01T00:00:00Z)`, `less-than`,
 *   both strict, on `updated` and `created`; `equals`/`any` on `id`, `email`, `phone_number`,
 *   `external_id`; clauses joined by commas or `and(...)`), `sort` (`id`, `created`, `updated`,
 *   `email`, `-` for descending; id by default), `page[size]` 1 to 100 (default 20),
 *   `fields[profile]` (sparse fieldsets: only the attributes named), `page[cursor]`.
 * - `GET /api/lists`: the same, but at most 10 lists a page and no `page[size]`; `filter` only
 *   `greater-than` on `created`/`updated` and `equals`/`any` on `id`/`name`; `fields[list]`.
 * - Pages: `{data, links: {self, next, prev}}`; `links.next` is the whole next URL (the query and a
 *   `page[cursor]` that stands for the position after the page's last record in the sort), null
 *   on the last page.
 * - Writes take `{data: {type, attributes}}` (`id` too on a `PATCH`, equal to the path's):
 *   `POST /api/profiles` (201; an email, phone number or external id is required; an email taken
 *   is a 409 `duplicate_profile`), `PATCH /api/profiles/{id}` (custom `properties` merged key by
 *   key), `POST /api/lists` (201, `name` required), `PATCH /api/lists/{id}`, `DELETE
 *   /api/lists/{id}` (204). Profiles are deleted only by a data-privacy request, after which
 *   nothing lists them; a deleted list is gone too: no listing reveals deletions.
 * - Errors `{errors: [{id, status, code, title, detail, source: {pointer|parameter}}]}`;
 *   `RateLimit-Limit`/`-Remaining`/`-Reset` on answers, and a 429 `throttled` with `Retry-After`.
 */

type Resource = Record<string, unknown> & { type: string; id: string; attributes: Record<string, unknown> };
type Row = StoredRecord<Resource> & { seq: number; createdMs: number };

const objects = ['profiles', 'lists'] as const;
type KlaviyoObject = (typeof objects)[number];
const typeOf: Record<KlaviyoObject, string> = { profiles: 'profile', lists: 'list' };
const PAGE_MAX: Record<KlaviyoObject, number> = { profiles: 100, lists: 10 };
const PAGE_DEFAULT: Record<KlaviyoObject, number> = { profiles: 20, lists: 10 };
const profileAttributes = [
  'email',
  'phone_number',
  'external_id',
  'first_name',
  'last_name',
  'organization',
  'locale',
  'title',
  'image',
  'location',
  'properties',
];
/** Filter fields and the operators each takes, per object. */
const filterable: Record<KlaviyoObject, Record<string, string[]>> = {
  profiles: {
    id: ['equals', 'any'],
    email: ['equals', 'any'],
    phone_number: ['equals', 'any'],
    external_id: ['equals', 'any'],
    created: ['greater-than', 'less-than'],
    updated: ['greater-than', 'less-than'],
  },
  lists: {
    id: ['equals', 'any'],
    name: ['equals', 'any'],
    created: ['greater-than'],
    updated: ['greater-than'],
  },
};
const sortable: Record<KlaviyoObject, string[]> = {
  profiles: ['id', 'created', 'updated', 'email'],
  lists: ['id', 'created', 'updated', 'name'],
};

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const klaviyoTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace(/\.\d{3}Z$/, '+00:00');

interface Clause {
  op: string;
  field: string;
  value: unknown;
}

/** `and(greater-than(updated,2024-01-01T00:00:00Z),equals(email,"a@b.c"))` → its clauses. */
export function parseFilter(text: string): Clause[] {
  const clauses: Clause[] = [];
  let rest = text.trim();
  const and = /^and\((.*)\)$/s.exec(rest);
  if (and) rest = and[1];
  while (rest.length) {
    const match = /^([a-z-]+)\(([a-z_.]+),/.exec(rest);
    if (!match) throw invalid(`Invalid filter provided: ${text}`, 'filter');
    let at = match[0].length;
    let value: unknown;
    if (rest[at] === '"') {
      let end = at + 1;
      let out = '';
      while (end < rest.length && rest[end] !== '"') {
        if (rest[end] === '\\') end++;
        out += rest[end++];
      }
      value = out;
      at = end + 1;
    } else if (rest[at] === '[') {
      const end = rest.indexOf(']', at);
      value = JSON.parse(rest.slice(at, end + 1)) as unknown;
      at = end + 1;
    } else {
      const end = rest.indexOf(')', at);
      value = rest.slice(at, end);
      at = end;
    }
    if (rest[at] !== ')') throw invalid(`Invalid filter provided: ${text}`, 'filter');
    clauses.push({ op: match[1], field: match[2], value });
    rest = rest.slice(at + 1).replace(/^,/, '');
  }
  return clauses;
}

function invalid(detail: string, parameter?: string, status = 400, code = 'invalid'): FakeHttpError {
  return Object.assign(new FakeHttpError(status, detail, code), { parameter });
}

export async function startFakeKlaviyo(): Promise<ConformanceFake> {
  const stores: Record<KlaviyoObject, Map<string, Row>> = { profiles: new Map(), lists: new Map() };
  let seq = 1;
  let errorId = 1;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => {
      const code =
        error.status === 401
          ? 'not_authenticated'
          : error.status === 429
            ? 'throttled'
            : error.status >= 500
              ? 'error'
              : (error.code ?? 'invalid');
      const title =
        error.status === 401
          ? 'Incorrect authentication credentials.'
          : error.status === 429
            ? 'Request was throttled.'
            : error.status === 404
              ? 'Not found.'
              : error.status === 409
                ? 'Conflict.'
                : error.status >= 500
                  ? 'A server error occurred.'
                  : 'Invalid input.';
      const parameter = (error as { parameter?: string }).parameter;
      return {
        errors: [
          {
            id: `00000000-0000-4000-8000-${String(errorId++).padStart(12, '0')}`,
            status: error.status,
            code,
            title,
            detail:
              error.status === 429 ? 'Request was throttled. Expected available in 1 second.' : error.message,
            source: parameter ? { parameter } : { pointer: '/data/' },
            ...((error as { meta?: unknown }).meta !== undefined && {
              meta: (error as { meta?: unknown }).meta,
            }),
          },
        ],
      };
    },
    rateLimitHeaders: () => ({ 'ratelimit-limit': '75', 'ratelimit-remaining': '0', 'ratelimit-reset': '1' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    const revision = ctx.get('revision');
    if (!/^\d{4}-\d{2}-\d{2}(\.[a-z0-9]+)?$/.test(revision))
      throw invalid('A revision header (YYYY-MM-DD) is required.', 'revision');
    ctx.set('ratelimit-limit', '75');
    ctx.set('ratelimit-remaining', '74');
    ctx.set('ratelimit-reset', '1');
    await next();
    if (ctx.body !== undefined) ctx.type = 'application/vnd.api+json';
  });

  const origin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
  const selfLink = (ctx: Context, object: KlaviyoObject, id: string) => `${origin(ctx)}/api/${object}/${id}/`;

  const objectOf = (ctx: Context): KlaviyoObject => {
    const object = ctx.params.object as KlaviyoObject;
    if (!objects.includes(object)) throw invalid(`Not found.`, undefined, 404, 'not_found');
    return object;
  };
  const rowOf = (object: KlaviyoObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row || row.deleted)
      throw invalid(`A ${typeOf[object]} with id ${id} does not exist.`, undefined, 404, 'not_found');
    return row;
  };

  const newResource = (object: KlaviyoObject, attributes: Record<string, unknown>, ms: number): Row => {
    const n = seq++;
    const id =
      object === 'profiles' ? `01JK${String(n).padStart(22, '0')}` : `L${n.toString(36).padStart(5, '0')}`;
    const base =
      object === 'profiles'
        ? {
            email: null,
            phone_number: null,
            external_id: null,
            first_name: null,
            last_name: null,
            organization: null,
            locale: null,
            title: null,
            image: null,
            last_event_date: null,
            location: {
              address1: null,
              address2: null,
              city: null,
              country: null,
              region: null,
              zip: null,
              timezone: null,
            },
            properties: {},
          }
        : { name: null, opt_in_process: 'single_opt_in' };
    const record: Resource = {
      type: typeOf[object],
      id,
      attributes: { ...base, ...attributes, created: klaviyoTime(ms), updated: klaviyoTime(ms) },
    };
    const row: Row = { record, modifiedMs: wholeSecond(ms), createdMs: wholeSecond(ms), seq: n };
    stores[object].set(id, row);
    return row;
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.attributes.updated = klaviyoTime(ms);
  };

  /** The resource as listed or read: links, relationships and the sparse fieldset asked for. */
  const present = (ctx: Context, object: KlaviyoObject, row: Row, fields?: string[]) => {
    const attributes = fields
      ? Object.fromEntries(Object.entries(row.record.attributes).filter(([name]) => fields.includes(name)))
      : row.record.attributes;
    const relationships =
      object === 'profiles'
        ? {
            lists: { links: { self: `${selfLink(ctx, object, row.record.id)}relationships/lists/` } },
            segments: { links: { self: `${selfLink(ctx, object, row.record.id)}relationships/segments/` } },
          }
        : { profiles: { links: { self: `${selfLink(ctx, object, row.record.id)}relationships/profiles/` } } };
    return {
      ...row.record,
      attributes,
      relationships,
      links: { self: selfLink(ctx, object, row.record.id) },
    };
  };

  const matches = (object: KlaviyoObject, row: Row, clause: Clause): boolean => {
    const operators = filterable[object][clause.field];
    if (!operators?.includes(clause.op))
      throw invalid(`'${clause.op}' is not a valid operator for '${clause.field}'.`, 'filter');
    if (clause.field === 'updated' || clause.field === 'created') {
      const at = Date.parse(String(clause.value));
      if (Number.isNaN(at))
        throw invalid(`Invalid date value for '${clause.field}': ${String(clause.value)}`, 'filter');
      const time = clause.field === 'updated' ? row.modifiedMs : row.createdMs;
      return clause.op === 'greater-than' ? time > at : time < at;
    }
    const actual = clause.field === 'id' ? row.record.id : row.record.attributes[clause.field];
    if (clause.op === 'any') {
      if (!Array.isArray(clause.value)) throw invalid(`'any' takes a list.`, 'filter');
      return clause.value.includes(actual);
    }
    return actual === clause.value;
  };

  router.get('/api/:object', (ctx) => {
    const object = objectOf(ctx);
    const type = typeOf[object];
    const allowed = new Set(['filter', 'sort', 'page[cursor]', `fields[${type}]`, 'page[size]']);
    if (object === 'lists') allowed.delete('page[size]');
    for (const name of Object.keys(ctx.query)) {
      if (!allowed.has(name)) throw invalid(`'${name}' is not a valid query parameter.`, name);
    }
    const sizeText = ctx.query['page[size]'];
    const size = sizeText === undefined ? PAGE_DEFAULT[object] : Number(sizeText);
    if (!Number.isInteger(size) || size < 1 || size > PAGE_MAX[object])
      throw invalid(`page[size] must be between 1 and ${PAGE_MAX[object]}.`, 'page[size]');
    fake.logListing(ctx, { object, pageSize: size, maxPageSize: PAGE_MAX[object] });
    const clauses = ctx.query.filter === undefined ? [] : parseFilter(String(ctx.query.filter));
    const sortText = ctx.query.sort === undefined ? 'id' : String(ctx.query.sort);
    const descending = sortText.startsWith('-');
    const sortBy = sortText.replace(/^-/, '');
    if (!sortable[object].includes(sortBy)) throw invalid(`'${sortText}' is not a valid sort.`, 'sort');
    const fieldsText = ctx.query[`fields[${type}]`];
    const fields = fieldsText === undefined ? undefined : String(fieldsText).split(',');

    const key = (row: Row): [string | number, number] => {
      if (sortBy === 'updated') return [row.modifiedMs, row.seq];
      if (sortBy === 'created') return [row.createdMs, row.seq];
      if (sortBy === 'id') return [row.seq, row.seq];
      return [String(row.record.attributes[sortBy] ?? ''), row.seq];
    };
    const compare = (a: [string | number, number], b: [string | number, number]) =>
      (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) || a[1] - b[1];
    let after: [string | number, number] | undefined;
    const cursor = ctx.query['page[cursor]'];
    if (cursor !== undefined) {
      try {
        const decoded = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8')) as unknown;
        if (!Array.isArray(decoded) || decoded.length !== 2) throw new Error('cursor');
        after = decoded as [string | number, number];
      } catch {
        throw invalid('Invalid page cursor.', 'page[cursor]');
      }
    }
    const found = [...stores[object].values()]
      .filter((row) => !row.deleted && (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => clauses.every((clause) => matches(object, row, clause)))
      .map((row) => ({ row, at: key(row) }))
      .sort((a, b) => compare(a.at, b.at) * (descending ? -1 : 1))
      .filter(({ at }) => !after || compare(at, after) * (descending ? -1 : 1) > 0);
    const page = found.slice(0, size);
    const self = `${origin(ctx)}/api/${object}/`;
    let next: string | null = null;
    if (found.length > size) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(ctx.query)) {
        if (name !== 'page[cursor]') params.set(name, String(value));
      }
      params.set('page[cursor]', Buffer.from(JSON.stringify(page.at(-1)!.at)).toString('base64url'));
      next = `${self}?${params.toString()}`;
    }
    ctx.body = {
      data: page.map(({ row }) => present(ctx, object, row, fields)),
      links: { self: `${self}${ctx.querystring ? `?${ctx.querystring}` : ''}`, next, prev: null },
    };
  });

  router.get('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { data: present(ctx, object, rowOf(object, ctx.params.id)) };
  });

  /** `{data: {type, id?, attributes}}`, checked as Klaviyo checks it. */
  const documentOf = (ctx: Context, object: KlaviyoObject, id?: string): Record<string, unknown> => {
    const data = (ctx.request.body as { data?: Record<string, unknown> } | undefined)?.data;
    if (!data || typeof data !== 'object')
      throw invalid('The request body must be {data: {...}}.', undefined);
    if (data.type !== typeOf[object]) throw invalid(`'type' must be '${typeOf[object]}'.`);
    if (id !== undefined && data.id !== id)
      throw invalid('The id in the body must match the id in the path.');
    const attributes = data.attributes;
    if (!attributes || typeof attributes !== 'object' || Array.isArray(attributes))
      throw invalid("'attributes' is required.");
    const known = object === 'profiles' ? profileAttributes : ['name', 'opt_in_process'];
    for (const name of Object.keys(attributes)) {
      if (!known.includes(name))
        throw invalid(`'${name}' is not a valid field for the resource '${typeOf[object]}'.`);
    }
    return attributes as Record<string, unknown>;
  };

  const checkEmail = (email: unknown, exceptId?: string) => {
    if (email === undefined || email === null) return;
    if (typeof email !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))
      throw invalid(`Invalid email address: ${String(email)}`);
    const taken = [...stores.profiles.values()].find(
      (row) => !row.deleted && row.record.attributes.email === email && row.record.id !== exceptId,
    );
    if (taken)
      throw Object.assign(
        invalid(
          'A profile already exists with one of these identifiers.',
          undefined,
          409,
          'duplicate_profile',
        ),
        { meta: { duplicate_profile_id: taken.record.id } },
      );
  };

  router.post('/api/:object', (ctx) => {
    const object = objectOf(ctx);
    const attributes = documentOf(ctx, object);
    if (object === 'profiles') {
      if (!attributes.email && !attributes.phone_number && !attributes.external_id)
        throw invalid('One of email, phone_number or external_id is required.');
      checkEmail(attributes.email);
    } else if (typeof attributes.name !== 'string' || !attributes.name) {
      throw invalid("'name' is required.");
    }
    const row = newResource(object, attributes, now());
    ctx.status = 201;
    ctx.body = { data: present(ctx, object, row) };
  });

  router.patch('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const attributes = documentOf(ctx, object, ctx.params.id);
    if (object === 'profiles') checkEmail(attributes.email, row.record.id);
    const current = row.record.attributes;
    for (const [name, value] of Object.entries(attributes)) {
      // Custom properties are merged key by key; the rest replaced.
      current[name] =
        name === 'properties' && value && typeof value === 'object'
          ? { ...(current.properties as object), ...value }
          : value;
    }
    stamp(row, now());
    ctx.body = { data: present(ctx, object, row) };
  });

  router.delete('/api/lists/:id', (ctx) => {
    rowOf('lists', ctx.params.id);
    stores.lists.delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as KlaviyoObject].get(id);
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
        const name = object as KlaviyoObject;
        const n = seq;
        const attributes =
          name === 'profiles'
            ? {
                email: `p${n}@example.com`,
                first_name: `First${n}`,
                last_name: `Last${n}`,
                organization: `Org ${n}`,
                properties: { tier: 'gold' },
              }
            : { name: `List ${n}` };
        return newResource(name, attributes, ms).record.id;
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // A data-privacy deletion (profiles) or a deleted list: gone, listed nowhere.
      stores[object as KlaviyoObject].delete(id);
    },
    stored: (object, id) => {
      const row = stores[object as KlaviyoObject].get(id);
      return row && !row.deleted ? row.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
