import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { asConformanceFake, bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Attio's REST API v2, written from its reference
 * (https://docs.attio.com/rest-api/endpoint-reference/records/list-records, …/create-a-record,
 * …/update-a-record-append-multiselect-values, …/get-a-record, …/delete-a-record,
 * …/attributes/list-attributes, …/attributes/list-select-options, the guides on filtering and
 * sorting, attribute types, errors and rate limiting under https://docs.attio.com/rest-api/):
 *
 * - Bearer tokens. Records of an object (`people`, `companies`) are listed by
 *   `POST /v2/objects/{object}/records/query {filter?, sorts?, limit?, offset?}` (`limit` at most
 *   500, by default 500: verify the maximum), answering `{data: [...]}` with no cursor: the walk goes
 *   on by `offset` while a page is full. Without `sorts` records come oldest first.
 * - A record is `{id: {workspace_id, object_id, record_id}, created_at, web_url, values}`: `values`
 *   holds every attribute by its `api_slug`, each an array of the active values (`[]` when unset), a
 *   value `{active_from, active_until, created_by_actor, attribute_type, ...}` (`value` for text,
 *   `first_name`/`last_name`/`full_name` for a personal name, `email_address` for an address,
 *   `domain` for a domain, `option: {title}` for a select). No attribute says when a record changed:
 *   only `created_at` can be filtered (`$gt`, `$gte`, `$lt`, `$lte`) or sorted on; an edit shows as
 *   a value's new `active_from`. Times ISO 8601 UTC with nanoseconds
 *   (`2024-01-01T00:00:00.000000000Z`).
 * - `POST /v2/objects/{object}/records {data: {values}}` (a text value as a string, a multiselect
 *   as a value or a list, a personal name as `{first_name, last_name, full_name}` or text),
 *   `PATCH …/records/{record_id}` (only the attributes sent change; multiselect values are added),
 *   `GET …/records/{record_id}`, `DELETE …/records/{record_id}` (`{}`; gone from every listing, no
 *   listing reveals it). Unique attributes (`email_addresses`, `domains`) refuse a duplicate.
 * - `GET /v2/objects/{object}/attributes` lists attributes (`{api_slug, title, type,
 *   is_system_attribute, is_writable, is_required, is_unique, is_multiselect, is_archived}`);
 *   `…/attributes/{attribute}/options` a select's options (`{title, is_archived}`).
 * - Errors `{status_code, type, code, message}`; 429 `rate_limit_error` with `Retry-After` past 100
 *   reads or 25 writes a second.
 */

type Value = Record<string, unknown>;
type AttioRecord = {
  id: { workspace_id: string; object_id: string; record_id: string };
  created_at: string;
  web_url: string;
  values: Record<string, Value[]>;
};
type Row = { record: AttioRecord; createdMs: number; modifiedMs: number };
type AttioObject = 'people' | 'companies';

interface Attribute {
  api_slug: string;
  title: string;
  type: string;
  is_system_attribute: boolean;
  is_writable: boolean;
  is_required: boolean;
  is_unique: boolean;
  is_multiselect: boolean;
  is_archived: boolean;
  options?: string[];
}
const attribute = (
  api_slug: string,
  title: string,
  type: string,
  flags: Partial<Omit<Attribute, 'api_slug' | 'title' | 'type'>> = {},
): Attribute => ({
  api_slug,
  title,
  type,
  is_system_attribute: true,
  is_writable: true,
  is_required: false,
  is_unique: false,
  is_multiselect: false,
  is_archived: false,
  ...flags,
});
const system = [
  attribute('record_id', 'Record ID', 'text', { is_writable: false }),
  attribute('created_at', 'Created at', 'timestamp', { is_writable: false }),
];
const attributes: Record<AttioObject, Attribute[]> = {
  people: [
    ...system,
    attribute('name', 'Name', 'personal-name'),
    attribute('email_addresses', 'Email addresses', 'email-address', {
      is_unique: true,
      is_multiselect: true,
    }),
    attribute('job_title', 'Job title', 'text'),
    attribute('description', 'Description', 'text'),
    attribute('tier', 'Tier', 'select', {
      is_system_attribute: false,
      options: ['Gold', 'Silver', 'Bronze'],
    }),
  ],
  companies: [
    ...system,
    attribute('name', 'Name', 'text'),
    attribute('domains', 'Domains', 'domain', { is_unique: true, is_multiselect: true }),
    attribute('description', 'Description', 'text'),
    attribute('tier', 'Tier', 'select', {
      is_system_attribute: false,
      options: ['Gold', 'Silver', 'Bronze'],
    }),
  ],
};

const QUERY_MAX = 500;
const READS_PER_SECOND = 100;
const WRITES_PER_SECOND = 25;
const WORKSPACE = '5f1a0c3e-0000-4000-8000-00000000a771';
const objectIds: Record<AttioObject, string> = {
  people: '5f1a0c3e-0000-4000-8000-000000000001',
  companies: '5f1a0c3e-0000-4000-8000-000000000002',
};

/** Attio's timestamps: nanoseconds, of which it knows milliseconds here. */
const attioTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');

function failure(status: number, code: string, message: string): FakeHttpError {
  return new FakeHttpError(status, message, code);
}
const typeOf = (status: number) =>
  status === 401
    ? 'auth_error'
    : status === 429
      ? 'rate_limit_error'
      : status >= 500
        ? 'internal_server_error'
        : 'invalid_request_error';

export async function startFakeAttio(): Promise<ConformanceFake> {
  const stores: Record<AttioObject, Map<string, Row>> = { people: new Map(), companies: new Map() };
  const calls = { read: [] as number[], write: [] as number[] };
  const actor = { type: 'api-token', id: '5f1a0c3e-0000-4000-8000-0000000000ac' };

  const fake: FakeProvider = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      status_code: error.status,
      type: typeOf(error.status),
      code:
        error.code ??
        (error.status === 401
          ? 'unauthorized'
          : error.status === 429
            ? 'rate_limit_exceeded'
            : error.status >= 500
              ? 'internal_server_error'
              : error.status === 404
                ? 'not_found'
                : 'validation_type'),
      message: error.message,
    }),
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
    rateLimitCode: 'rate_limit_exceeded',
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    // A query is a read though it is a POST.
    const kind = ctx.method === 'GET' || ctx.path.endsWith('/records/query') ? 'read' : 'write';
    const limit = kind === 'read' ? READS_PER_SECOND : WRITES_PER_SECOND;
    const at = Date.now();
    const recent = calls[kind];
    while (recent.length && recent[0] <= at - 1000) recent.shift();
    if (recent.length >= limit)
      throw new FakeHttpError(429, `You have exceeded the ${kind} rate limit.`, 'rate_limit_exceeded', {
        'Retry-After': '1',
      });
    recent.push(at);
    await next();
  });

  const objectOf = (ctx: Context): AttioObject => {
    const object = ctx.params.object;
    if (object !== 'people' && object !== 'companies')
      throw failure(404, 'not_found', `Object with slug/ID "${object}" not found.`);
    return object;
  };
  const rowOf = (object: AttioObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row) throw failure(404, 'not_found', `Record with ID "${id}" not found.`);
    return row;
  };
  const attributeOf = (object: AttioObject, slug: string) => {
    const found = attributes[object].find((item) => item.api_slug === slug);
    if (!found) throw failure(400, 'value_not_found', `Cannot find attribute with slug/ID "${slug}".`);
    return found;
  };

  /** One input value as Attio stores it, per attribute type. */
  const valueFor = (object: AttioObject, slug: string, input: unknown, atMs: number): Value => {
    const described = attributeOf(object, slug);
    const base = {
      active_from: attioTime(atMs),
      active_until: null,
      created_by_actor: actor,
      attribute_type: described.type,
    };
    const text = (what: string) => {
      if (typeof input !== 'string')
        throw failure(400, 'validation_type', `Invalid value for "${slug}": expected ${what}.`);
      return input;
    };
    switch (described.type) {
      case 'text':
        return { ...base, value: text('a string') };
      case 'personal-name': {
        if (typeof input === 'string') {
          // Text is read as "Last name(s), First name(s)", or a whole name.
          const [last, first] = input.includes(',')
            ? input.split(',').map((part) => part.trim())
            : ['', input];
          return {
            ...base,
            first_name: first,
            last_name: last,
            full_name: [first, last].filter(Boolean).join(' '),
          };
        }
        const name = (input ?? {}) as Record<string, unknown>;
        const first = String(name.first_name ?? '');
        const last = String(name.last_name ?? '');
        return {
          ...base,
          first_name: first,
          last_name: last,
          full_name: String(name.full_name ?? `${first} ${last}`.trim()),
        };
      }
      case 'email-address': {
        const address =
          typeof input === 'object' && input !== null
            ? (input as { email_address?: unknown }).email_address
            : input;
        if (typeof address !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(address))
          throw failure(
            400,
            'validation_type',
            `Invalid value for "${slug}": "${String(address)}" is not an email address.`,
          );
        const [local, domain] = address.split('@');
        return {
          ...base,
          original_email_address: address,
          email_address: address.toLowerCase(),
          email_domain: domain,
          email_root_domain: domain,
          email_local_specifier: local,
        };
      }
      case 'domain': {
        const domain =
          typeof input === 'object' && input !== null ? (input as { domain?: unknown }).domain : input;
        return { ...base, domain: String(domain), root_domain: String(domain) };
      }
      case 'select': {
        const title = text('an option title');
        if (!described.options!.includes(title))
          throw failure(400, 'validation_type', `Invalid option "${title}" for "${slug}".`);
        return {
          ...base,
          option: {
            id: { workspace_id: WORKSPACE, attribute_id: slug, option_id: title.toLowerCase() },
            title,
            is_archived: false,
          },
        };
      }
      default:
        throw failure(400, 'immutable_value', `Attribute "${slug}" cannot be written.`);
    }
  };

  const uniqueKey = (value: Value) => String(value.email_address ?? value.domain ?? '');

  /** Writes `values` into `row` (a create or a PATCH): multiselect values are added, others replaced. */
  const apply = (object: AttioObject, row: Row, values: unknown, atMs: number) => {
    if (typeof values !== 'object' || values === null || Array.isArray(values))
      throw failure(400, 'validation_type', 'Body payload validation error: data.values must be an object.');
    const changes = Object.entries(values as Record<string, unknown>).map(([slug, input]) => {
      const described = attributeOf(object, slug);
      if (!described.is_writable)
        throw failure(
          400,
          'immutable_value',
          `Cannot update the value of attribute "${slug}": it is not writable.`,
        );
      const inputs = Array.isArray(input) ? input : input === null ? [] : [input];
      if (inputs.length > 1 && !described.is_multiselect)
        throw failure(400, 'validation_type', `Attribute "${slug}" takes one value.`);
      const made = inputs.map((item) => valueFor(object, slug, item, atMs));
      if (described.is_unique)
        for (const value of made)
          for (const other of stores[object].values())
            if (
              other !== row &&
              (other.record.values[slug] ?? []).some((existing) => uniqueKey(existing) === uniqueKey(value))
            )
              throw failure(
                400,
                'uniqueness_conflict',
                `A record with ${slug} "${uniqueKey(value)}" already exists.`,
              );
      return { slug, made, multiselect: described.is_multiselect };
    });
    for (const { slug, made, multiselect } of changes) {
      const current = row.record.values[slug] ?? [];
      row.record.values[slug] = multiselect
        ? [
            ...current,
            ...made.filter((value) => !current.some((existing) => uniqueKey(existing) === uniqueKey(value))),
          ]
        : made;
    }
    row.modifiedMs = atMs;
  };

  const create = (object: AttioObject, atMs: number): Row => {
    const recordId = randomUUID();
    const record: AttioRecord = {
      id: { workspace_id: WORKSPACE, object_id: objectIds[object], record_id: recordId },
      created_at: attioTime(atMs),
      web_url: `https://app.attio.com/example/${object === 'people' ? 'person' : 'company'}/${recordId}`,
      values: Object.fromEntries(attributes[object].map((item) => [item.api_slug, []])),
    };
    record.values.record_id = [
      {
        active_from: attioTime(atMs),
        active_until: null,
        created_by_actor: actor,
        attribute_type: 'text',
        value: recordId,
      },
    ];
    record.values.created_at = [
      {
        active_from: attioTime(atMs),
        active_until: null,
        created_by_actor: actor,
        attribute_type: 'timestamp',
        value: attioTime(atMs),
      },
    ];
    const row: Row = { record, createdMs: atMs, modifiedMs: atMs };
    stores[object].set(recordId, row);
    return row;
  };

  const dataOf = (ctx: Context) => {
    const data = (ctx.request.body as { data?: { values?: unknown } } | undefined)?.data;
    if (!data || typeof data !== 'object')
      throw failure(400, 'validation_type', 'Body payload validation error: data is required.');
    return data;
  };

  /** A filter: `{slug: value}`, `{slug: {$eq|$gt|$gte|$lt|$lte: value}}`, `$and`/`$or` lists. */
  const matcher = (object: AttioObject, filter: unknown): ((row: Row) => boolean) => {
    if (filter === undefined || filter === null) return () => true;
    if (typeof filter !== 'object' || Array.isArray(filter))
      throw failure(400, 'validation_type', 'Body payload validation error: filter must be an object.');
    const tests = Object.entries(filter as Record<string, unknown>).map(
      ([key, condition]): ((row: Row) => boolean) => {
        if (key === '$and' || key === '$or') {
          if (!Array.isArray(condition)) throw failure(400, 'validation_type', `${key} takes a list.`);
          const parts = condition.map((part) => matcher(object, part));
          return key === '$and'
            ? (row) => parts.every((part) => part(row))
            : (row) => parts.some((part) => part(row));
        }
        const described = attributes[object].find((item) => item.api_slug === key);
        if (!described)
          throw failure(400, 'unknown_filter_attribute_slug', `Unknown attribute slug in filter: "${key}".`);
        const operations =
          typeof condition === 'object' && condition !== null && !Array.isArray(condition)
            ? Object.entries(condition as Record<string, unknown>)
            : [['$eq', condition] as [string, unknown]];
        return (row) =>
          operations.every(([operator, wanted]) => {
            const values = row.record.values[key] ?? [];
            if (described.type === 'timestamp') {
              const at = Date.parse(String(values[0]?.value));
              const bound = Date.parse(String(wanted));
              if (Number.isNaN(bound))
                throw failure(400, 'validation_type', `Invalid timestamp "${String(wanted)}".`);
              return (
                { $eq: at === bound, $gt: at > bound, $gte: at >= bound, $lt: at < bound, $lte: at <= bound }[
                  operator
                ] ?? false
              );
            }
            if (operator !== '$eq' && operator !== '$contains')
              throw failure(
                400,
                'unknown_filter_operator',
                `Operator "${operator}" is not supported for "${key}".`,
              );
            return values.some((value) => {
              const text = String(
                value.value ??
                  value.email_address ??
                  value.domain ??
                  value.full_name ??
                  (value.option as { title?: string })?.title ??
                  '',
              );
              return operator === '$eq' ? text === String(wanted) : text.includes(String(wanted));
            });
          });
      },
    );
    return (row) => tests.every((test) => test(row));
  };

  router.post('/v2/objects/:object/records/query', (ctx) => {
    const object = objectOf(ctx);
    const body = (ctx.request.body ?? {}) as {
      filter?: unknown;
      sorts?: unknown;
      limit?: unknown;
      offset?: unknown;
    };
    const limit = body.limit === undefined ? QUERY_MAX : Number(body.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > QUERY_MAX)
      throw failure(
        400,
        'validation_type',
        `Body payload validation error: limit must be between 1 and ${QUERY_MAX}.`,
      );
    const offset = body.offset === undefined ? 0 : Number(body.offset);
    if (!Number.isInteger(offset) || offset < 0)
      throw failure(
        400,
        'validation_type',
        'Body payload validation error: offset must be a non-negative integer.',
      );
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: QUERY_MAX });
    const matches = matcher(object, body.filter);
    const sorts = (body.sorts ?? []) as { attribute?: string; direction?: string }[];
    if (!Array.isArray(sorts)) throw failure(400, 'validation_type', 'sorts must be a list.');
    for (const sort of sorts) {
      const described = attributes[object].find((item) => item.api_slug === sort.attribute);
      if (!described || !['text', 'timestamp', 'personal-name'].includes(described.type))
        throw failure(400, 'validation_type', `Cannot sort by "${String(sort.attribute)}".`);
      if (sort.direction !== 'asc' && sort.direction !== 'desc')
        throw failure(400, 'validation_type', 'A sort direction is "asc" or "desc".');
    }
    const sortText = (row: Row, slug: string) => {
      const value = row.record.values[slug]?.[0];
      return String(value?.value ?? value?.last_name ?? '');
    };
    const rows = [...stores[object].values()]
      .filter((row) => row.createdMs <= now())
      .filter(matches)
      .sort((a, b) => {
        for (const sort of sorts) {
          const left = sortText(a, sort.attribute!);
          const right = sortText(b, sort.attribute!);
          if (left !== right) return (left < right ? -1 : 1) * (sort.direction === 'desc' ? -1 : 1);
        }
        return a.createdMs - b.createdMs || a.record.id.record_id.localeCompare(b.record.id.record_id);
      });
    ctx.body = { data: rows.slice(offset, offset + limit).map((row) => row.record) };
  });

  router.get('/v2/objects/:object/records/:id', (ctx) => {
    ctx.body = { data: rowOf(objectOf(ctx), ctx.params.id).record };
  });
  router.post('/v2/objects/:object/records', (ctx) => {
    const object = objectOf(ctx);
    const data = dataOf(ctx);
    // Checked on a scratch record first: a refused create leaves nothing behind.
    const row = create(object, now());
    try {
      apply(object, row, data.values ?? {}, now());
    } catch (error) {
      stores[object].delete(row.record.id.record_id);
      throw error;
    }
    ctx.body = { data: row.record };
  });
  router.patch('/v2/objects/:object/records/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    apply(object, row, dataOf(ctx).values ?? {}, now());
    ctx.body = { data: row.record };
  });
  router.delete('/v2/objects/:object/records/:id', (ctx) => {
    const object = objectOf(ctx);
    rowOf(object, ctx.params.id);
    stores[object].delete(ctx.params.id);
    ctx.body = {};
  });

  const describe = (object: AttioObject, item: Attribute) => {
    const { options: _options, ...rest } = item;
    return {
      id: {
        workspace_id: WORKSPACE,
        object_id: objectIds[object],
        attribute_id: `${object}-${item.api_slug}`,
      },
      ...rest,
      description: null,
      is_default_value_enabled: false,
      default_value: null,
      relationship: null,
      created_at: attioTime(Date.UTC(2023, 0, 1)),
      config: {
        currency: { default_currency_code: null, display_type: null },
        record_reference: { allowed_object_ids: null },
      },
    };
  };
  router.get('/v2/objects/:object/attributes', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { data: attributes[object].map((item) => describe(object, item)) };
  });
  router.get('/v2/objects/:object/attributes/:attribute/options', (ctx) => {
    const object = objectOf(ctx);
    const described = attributeOf(object, ctx.params.attribute);
    if (!described.options)
      throw failure(400, 'validation_type', `Attribute "${described.api_slug}" has no options.`);
    ctx.body = {
      data: described.options.map((title) => ({
        id: {
          workspace_id: WORKSPACE,
          object_id: objectIds[object],
          attribute_id: `${object}-${described.api_slug}`,
          option_id: title.toLowerCase(),
        },
        title,
        is_archived: false,
      })),
    };
  });

  await fake.start();

  let seeded = 0;
  const storedRow = (object: string, id: string) => rowOf(object as AttioObject, id);

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const n = ++seeded;
        const row = create(object as AttioObject, ms);
        apply(
          object as AttioObject,
          row,
          object === 'people'
            ? {
                name: { first_name: `First${n}`, last_name: `Last${n}`, full_name: `First${n} Last${n}` },
                email_addresses: [`p${n}-${row.record.id.record_id.slice(0, 8)}@example.com`],
                job_title: 'Buyer',
                description: `Seeded person ${n}`,
                tier: 'Gold',
              }
            : {
                name: `Company ${n}`,
                domains: [`c${n}-${row.record.id.record_id.slice(0, 8)}.example.com`],
                description: `Seeded company ${n}`,
                tier: 'Silver',
              },
          ms,
        );
        return row.record.id.record_id;
      }),
    touch(object, id, modifiedMs) {
      // An edit in the app: the description gets a new active value.
      const row = storedRow(object, id);
      apply(object as AttioObject, row, { description: `Edited at ${modifiedMs}` }, modifiedMs);
    },
    remove(object, id) {
      stores[object as AttioObject].delete(id);
    },
    stored: (object, id) => stores[object as AttioObject].get(id)?.record,
  });
}
