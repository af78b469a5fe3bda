import type { Context } from 'koa';
import { parse as parseQuery } from 'qs';
import type { ConformanceFake } from '../kit/conformance.js';
import { asConformanceFake, FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for SugarCRM's REST API v11 (https://support.sugarcrm.com/Documentation/Sugar_Developer/
 * Sugar_Developer_Guide_13.0/Integration/Web_Services/REST_API/, the endpoints `/<module> GET`,
 * `/<module>/filter GET|POST`, `/<module>/:record GET|PUT|DELETE`, `/<module> POST`, `/metadata GET`),
 * written from that reference:
 *
 * - Under `/rest/v11_24`; the OAuth 2 access token (password grant) travels in the `OAuth-Token`
 *   header, not `Authorization`. Errors are `{error, error_message}` (`invalid_grant` 401,
 *   `not_found` 404, `invalid_parameter` 422, `too_many_requests` 429 with `Retry-After` (verify: the
 *   reference names no rate limit)).
 * - Records are flat: `id` (a GUID), `name`, `date_entered`, `date_modified` (ISO 8601 with an offset,
 *   `2024-01-15T10:30:00+00:00`, whole seconds), `deleted`, the module's fields, custom fields
 *   (suffix `_c`) beside the standard ones, `_module` and `_acl`.
 * - Listing: `GET /<module>` or `GET /<module>/filter` with `filter` as bracketed parameters
 *   (`filter[0][date_modified][$gt]=…`) or one JSON string, or `POST /<module>/filter` with the same
 *   arguments in a JSON body. Operators `$equals`, `$not_equals`, `$gt`, `$gte`, `$lt`, `$lte`,
 *   `$in`, `$not_in`, `$starts`, `$and`, `$or`, and a bare value for equality; a time compared is
 *   cut to its second (Sugar stores whole seconds). `max_num` (default 20; a larger ask is cut to the
 *   instance's `max_record_fetch_size`, 1000 by default: verify), `offset`, `fields` (`id` and
 *   `date_modified` always come), `order_by` (`date_modified:DESC` by default; `id` breaks ties).
 *   The answer is `{next_offset, records}`, `next_offset` -1 on the last page.
 * - Deleting marks the record `deleted` and stamps `date_modified`; listings leave deleted records
 *   out unless `deleted=true` asks for them too (the filter API's `deleted` argument).
 * - `POST /<module>` creates (the record answered), `PUT /<module>/:id` changes only the fields sent,
 *   `DELETE /<module>/:id` answers `{id}`. Fields it does not know, and `id`, `date_entered`,
 *   `date_modified`, `deleted`, are ignored on writes.
 * - `GET /metadata?type_filter=modules&module_filter=<module>` describes fields under
 *   `modules.<module>.fields.<name>`: `{name, vname, type, required?, readonly?, len?, options?,
 *   source?}`; custom fields have `source: "custom_fields"`, link fields (`type: "link"`) are
 *   relationships no record carries; `options` names a dropdown list, not its values.
 */

type SugarRecord = Record<string, unknown> & { id: string };

const PREFIX = '/rest/v11_24';
const MAX_NUM_DEFAULT = 20;
const MAX_RECORD_FETCH_SIZE = 1000;

interface FieldDef {
  name: string;
  vname: string;
  type: string;
  required?: boolean;
  readonly?: boolean;
  len?: number;
  options?: string;
  source?: string;
  custom_module?: string;
}

const common: FieldDef[] = [
  { name: 'id', vname: 'LBL_ID', type: 'id', required: true },
  { name: 'date_entered', vname: 'LBL_DATE_ENTERED', type: 'datetime' },
  { name: 'date_modified', vname: 'LBL_DATE_MODIFIED', type: 'datetime' },
  { name: 'deleted', vname: 'LBL_DELETED', type: 'bool' },
  { name: 'description', vname: 'LBL_DESCRIPTION', type: 'text' },
];

const person: FieldDef[] = [
  { name: 'first_name', vname: 'LBL_FIRST_NAME', type: 'varchar', len: 100 },
  { name: 'last_name', vname: 'LBL_LAST_NAME', type: 'varchar', len: 100, required: true },
  { name: 'title', vname: 'LBL_TITLE', type: 'varchar', len: 100 },
  { name: 'email1', vname: 'LBL_EMAIL_ADDRESS', type: 'varchar', source: 'non-db' },
  { name: 'phone_work', vname: 'LBL_OFFICE_PHONE', type: 'phone', len: 100 },
];

const vardefs: Record<string, FieldDef[]> = {
  Accounts: [
    ...common,
    { name: 'name', vname: 'LBL_NAME', type: 'name', len: 150, required: true },
    { name: 'account_type', vname: 'LBL_TYPE', type: 'enum', len: 50, options: 'account_type_dom' },
    { name: 'website', vname: 'LBL_WEBSITE', type: 'url', len: 255 },
    { name: 'phone_office', vname: 'LBL_PHONE_OFFICE', type: 'phone', len: 100 },
    {
      name: 'tier_c',
      vname: 'LBL_TIER',
      type: 'varchar',
      len: 255,
      source: 'custom_fields',
      custom_module: 'Accounts',
    },
    { name: 'contacts', vname: 'LBL_CONTACTS', type: 'link', source: 'non-db' },
  ],
  Contacts: [
    ...common,
    ...person,
    { name: 'account_id', vname: 'LBL_ACCOUNT_ID', type: 'relate', source: 'non-db' },
    { name: 'accounts', vname: 'LBL_ACCOUNT', type: 'link', source: 'non-db' },
  ],
  Leads: [
    ...common,
    ...person,
    { name: 'account_name', vname: 'LBL_ACCOUNT_NAME', type: 'varchar', len: 255 },
    { name: 'status', vname: 'LBL_STATUS', type: 'enum', len: 100, options: 'lead_status_dom' },
    { name: 'converted', vname: 'LBL_CONVERTED', type: 'bool', readonly: true },
  ],
  Opportunities: [
    ...common,
    { name: 'name', vname: 'LBL_OPPORTUNITY_NAME', type: 'name', len: 50, required: true },
    { name: 'amount', vname: 'LBL_AMOUNT', type: 'currency' },
    { name: 'date_closed', vname: 'LBL_DATE_CLOSED', type: 'date', required: true },
    { name: 'sales_stage', vname: 'LBL_SALES_STAGE', type: 'enum', len: 255, options: 'sales_stage_dom' },
    { name: 'next_step', vname: 'LBL_NEXT_STEP', type: 'varchar', len: 100 },
  ],
};
const modules = Object.keys(vardefs);
const ignoredOnWrite = new Set(['id', 'date_entered', 'date_modified', 'deleted', '_module', '_acl']);

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const sugarTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', '+00:00');

function guid(n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `5e1f0000-0000-4000-8000-${hex}`;
}

const invalid = (message: string) => new FakeHttpError(422, message, 'invalid_parameter');

/** A filter value compared with a stored one: times to the second, numbers as numbers. */
function comparable(field: string, value: unknown): number | string {
  if (field === 'date_modified' || field === 'date_entered') {
    const ms = Date.parse(String(value));
    if (Number.isNaN(ms)) throw invalid(`Did not recognize ${String(value)} as a date for ${field}`);
    return wholeSecond(ms);
  }
  return typeof value === 'number' ? value : String(value ?? '');
}

type Predicate = (record: SugarRecord) => boolean;

/** Sugar's filter expression: a list of clauses, all of which hold. */
function predicateOf(filter: unknown): Predicate {
  if (filter === undefined || filter === '') return () => true;
  if (typeof filter === 'string') {
    try {
      return predicateOf(JSON.parse(filter));
    } catch (error) {
      if (error instanceof FakeHttpError) throw error;
      throw invalid('The filter is not valid JSON');
    }
  }
  const clauses = Array.isArray(filter) ? filter : typeof filter === 'object' ? Object.values(filter!) : null;
  if (!clauses) throw invalid('filter must be an array');
  const tests = clauses.map((clause) => clauseOf(clause));
  return (record) => tests.every((test) => test(record));
}

function clauseOf(clause: unknown): Predicate {
  if (!clause || typeof clause !== 'object' || Array.isArray(clause)) throw invalid('Invalid filter clause');
  const tests: Predicate[] = [];
  for (const [key, condition] of Object.entries(clause)) {
    if (key === '$and') tests.push(predicateOf(condition));
    else if (key === '$or') {
      const parts = (Array.isArray(condition) ? condition : Object.values(condition as object)).map(clauseOf);
      tests.push((record) => parts.some((part) => part(record)));
    } else if (key.startsWith('$')) throw invalid(`Unknown filter operator ${key}`);
    else tests.push(fieldTest(key, condition));
  }
  return (record) => tests.every((test) => test(record));
}

function fieldTest(field: string, condition: unknown): Predicate {
  const valueOf = (record: SugarRecord) => comparable(field, record[field]);
  if (condition === null || typeof condition !== 'object') {
    const wanted = comparable(field, condition);
    return (record) => valueOf(record) === wanted;
  }
  const tests = Object.entries(condition).map(([operator, operand]): Predicate => {
    const list = () =>
      (Array.isArray(operand) ? operand : Object.values(operand as object)).map((item) =>
        comparable(field, item),
      );
    switch (operator) {
      case '$equals':
        return (record) => valueOf(record) === comparable(field, operand);
      case '$not_equals':
        return (record) => valueOf(record) !== comparable(field, operand);
      case '$gt':
        return (record) => valueOf(record) > comparable(field, operand);
      case '$gte':
        return (record) => valueOf(record) >= comparable(field, operand);
      case '$lt':
        return (record) => valueOf(record) < comparable(field, operand);
      case '$lte':
        return (record) => valueOf(record) <= comparable(field, operand);
      case '$in':
        return (record) => list().includes(valueOf(record));
      case '$not_in':
        return (record) => !list().includes(valueOf(record));
      case '$starts':
        return (record) => String(valueOf(record)).startsWith(String(operand));
      default:
        throw invalid(`Unknown filter operator ${operator}`);
    }
  });
  return (record) => tests.every((test) => test(record));
}

const truthy = (value: unknown) => value === true || value === 'true' || value === '1' || value === 1;

export async function startFakeSugarCRM(): Promise<ConformanceFake> {
  const stores = new Map(modules.map((module) => [module, new RecordStore<SugarRecord>()]));
  let nextId = 1;

  const fake = new FakeProvider({
    prefix: PREFIX,
    credentialOf: (ctx) => ctx.get('oauth-token') || undefined,
    errorBody: (error) => ({
      error:
        error.status === 401
          ? 'invalid_grant'
          : error.status === 429
            ? 'too_many_requests'
            : error.status >= 500
              ? 'fatal_error'
              : (error.code ?? (error.status === 404 ? 'not_found' : 'invalid_parameter')),
      error_message: error.status === 401 ? 'The access token provided is invalid.' : error.message,
    }),
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
    rateLimitCode: 'too_many_requests',
  });
  const router = fake.router;

  const storeOf = (ctx: Context) => {
    const module = String(ctx.params.module);
    const store = stores.get(module);
    if (!store) throw new FakeHttpError(404, `Could not find module: ${module}`, 'not_found');
    return { module, store };
  };
  const rowOf = (module: string, id: string) => {
    const row = stores.get(module)!.get(id);
    if (!row) throw new FakeHttpError(404, `Could not find record: ${id} in module: ${module}`, 'not_found');
    return row;
  };

  const present = (module: string, record: SugarRecord, fields?: string[]) => {
    const chosen = fields
      ? Object.fromEntries(
          Object.entries(record).filter(
            ([name]) => name === 'id' || name === 'date_modified' || fields.includes(name),
          ),
        )
      : record;
    return { ...chosen, _module: module, _acl: { fields: {} } };
  };

  function list(ctx: Context, args: Record<string, unknown>) {
    const { module, store } = storeOf(ctx);
    const asked = args.max_num === undefined ? MAX_NUM_DEFAULT : Number(args.max_num);
    if (!Number.isInteger(asked) || asked < 1) throw invalid('max_num must be a positive integer');
    const size = Math.min(asked, MAX_RECORD_FETCH_SIZE);
    fake.logListing(ctx, { object: module, pageSize: size, maxPageSize: MAX_RECORD_FETCH_SIZE });
    const offset = args.offset === undefined ? 0 : Number(args.offset);
    if (!Number.isInteger(offset) || offset < 0) throw invalid('offset must be a non-negative integer');
    const matches = predicateOf(args.filter);
    const withDeleted = truthy(args.deleted);
    const fields =
      args.fields === undefined
        ? undefined
        : (Array.isArray(args.fields) ? args.fields.map(String) : String(args.fields).split(',')).filter(
            Boolean,
          );
    const orderText =
      args.order_by === undefined || args.order_by === '' ? 'date_modified:DESC' : String(args.order_by);
    const order = orderText.split(',').map((part) => {
      const [field, direction = 'ASC'] = part.split(':');
      if (!vardefs[module].some((def) => def.name === field && def.type !== 'link'))
        throw invalid(`Cannot order by ${field}`);
      return { field, sign: direction.toUpperCase() === 'DESC' ? -1 : 1 };
    });
    const tieSign = order[0].sign;
    const compare = (a: SugarRecord, b: SugarRecord) => {
      for (const { field, sign } of order) {
        const x = comparable(field, a[field]);
        const y = comparable(field, b[field]);
        if (x !== y) return (x < y ? -1 : 1) * sign;
      }
      return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * tieSign;
    };
    const now = fake.now();
    const found = [...store.rows.values()]
      .filter((row) => (withDeleted || !row.deleted) && (row.visibleFromMs ?? row.modifiedMs) <= now)
      .map((row) => row.record)
      .filter(matches)
      .sort(compare);
    const page = found.slice(offset, offset + size);
    ctx.body = {
      next_offset: found.length > offset + size ? offset + size : -1,
      records: page.map((record) => present(module, record, fields)),
    };
  }

  const queryArgs = (ctx: Context) =>
    parseQuery(ctx.querystring, { depth: 10, arrayLimit: 1000, parameterLimit: 5000 }) as Record<
      string,
      unknown
    >;

  router.get('/metadata', (ctx) => {
    const wanted = String(ctx.query.module_filter ?? '')
      .split(',')
      .filter((module) => modules.includes(module));
    ctx.body = {
      modules: Object.fromEntries(
        (wanted.length ? wanted : modules).map((module) => [
          module,
          { fields: Object.fromEntries(vardefs[module].map((def) => [def.name, def])) },
        ]),
      ),
      _hash: 'f00dfeed',
    };
  });

  router.get('/:module/filter', (ctx) => list(ctx, queryArgs(ctx)));
  router.post('/:module/filter', (ctx) =>
    list(ctx, { ...queryArgs(ctx), ...((ctx.request.body ?? {}) as object) }),
  );
  router.get('/:module', (ctx) => list(ctx, queryArgs(ctx)));

  router.get('/:module/:id', (ctx) => {
    const { module } = storeOf(ctx);
    ctx.body = present(module, rowOf(module, ctx.params.id).record);
  });

  const writable = (module: string, body: unknown) => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid('The request body must be an object');
    const known = new Set(
      vardefs[module].filter((def) => def.type !== 'link' && !def.readonly).map((def) => def.name),
    );
    return Object.fromEntries(
      Object.entries(body).filter(([name]) => known.has(name) && !ignoredOnWrite.has(name)),
    );
  };

  const blank = (module: string): Record<string, unknown> =>
    Object.fromEntries(
      vardefs[module]
        .filter(
          (def) =>
            def.type !== 'link' && !['id', 'date_entered', 'date_modified', 'deleted'].includes(def.name),
        )
        .map((def) => [def.name, def.type === 'bool' ? false : def.type === 'currency' ? '0' : '']),
    );

  const create = (module: string, values: Record<string, unknown>, ms: number): SugarRecord => {
    const id = guid(nextId++);
    const record: SugarRecord = {
      id,
      ...blank(module),
      ...values,
      date_entered: sugarTime(ms),
      date_modified: sugarTime(ms),
      deleted: false,
    };
    if (module === 'Contacts' || module === 'Leads')
      record.name = [record.first_name, record.last_name].filter(Boolean).join(' ');
    stores.get(module)!.put(id, record, wholeSecond(ms));
    return record;
  };

  const stamp = (module: string, id: string, ms: number, visibleFromMs?: number) => {
    const row = rowOf(module, id);
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.date_modified = sugarTime(ms);
    return row;
  };

  router.post('/:module', (ctx) => {
    const { module } = storeOf(ctx);
    ctx.body = present(module, create(module, writable(module, ctx.request.body), fake.now()));
  });

  router.put('/:module/:id', (ctx) => {
    const { module } = storeOf(ctx);
    const row = rowOf(module, ctx.params.id);
    Object.assign(row.record, writable(module, ctx.request.body));
    if (module === 'Contacts' || module === 'Leads')
      row.record.name = [row.record.first_name, row.record.last_name].filter(Boolean).join(' ');
    stamp(module, ctx.params.id, fake.now());
    ctx.body = present(module, row.record);
  });

  const markDeleted = (module: string, id: string, ms: number) => {
    const row = stores.get(module)!.remove(id, wholeSecond(ms));
    if (!row) throw new FakeHttpError(404, `Could not find record: ${id} in module: ${module}`, 'not_found');
    row.record.deleted = true;
    row.record.date_modified = sugarTime(ms);
  };

  router.delete('/:module/:id', (ctx) => {
    const { module } = storeOf(ctx);
    markDeleted(module, ctx.params.id, fake.now());
    ctx.body = { id: ctx.params.id };
  });

  await fake.start();

  return asConformanceFake(fake, {
    seed: (module, times) =>
      times.map((ms) => {
        const n = nextId;
        const values: Record<string, Record<string, unknown>> = {
          Accounts: {
            name: `Account ${n}`,
            website: `https://a${n}.example.com`,
            account_type: 'Customer',
            tier_c: 'gold',
            description: 'Seeded',
          },
          Contacts: {
            first_name: `First${n}`,
            last_name: `Last${n}`,
            email1: `c${n}@example.com`,
            title: 'Buyer',
            description: 'Seeded',
          },
          Leads: {
            first_name: `Lead${n}`,
            last_name: `Last${n}`,
            email1: `l${n}@example.com`,
            account_name: `Org ${n}`,
            status: 'New',
            description: 'Seeded',
          },
          Opportunities: {
            name: `Deal ${n}`,
            amount: '1000',
            date_closed: '2026-12-31',
            sales_stage: 'Prospecting',
            description: 'Seeded',
          },
        };
        return create(module, values[module], ms).id;
      }),
    touch: (module, id, modifiedMs, options) => void stamp(module, id, modifiedMs, options?.visibleFromMs),
    remove: (module, id, atMs) => markDeleted(module, id, atMs),
    stored: (module, id) => stores.get(module)?.get(id)?.record,
  });
}
