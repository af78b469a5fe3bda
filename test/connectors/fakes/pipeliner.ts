import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  basicUserCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Pipeliner CRM's REST API v100
 * (https://developers.pipelinersales.com/api-docs/overview/about-the-api, …/api-docs/reference):
 *
 * - Under `/api/v100/rest/spaces/<space id>/entities/<Entity>`; HTTP Basic with the API token as
 *   user name (its password beside it).
 * - `Accounts`, `Contacts`, `Opportunities`. `GET` lists `{success, total, page_info: {start_cursor,
 *   end_cursor, has_previous_page, has_next_page}, data}`: `first` (default 30, at most 100) and
 *   `after` (the previous page's `end_cursor`, a position in the order, so a record modified during
 *   the walk neither shifts nor repeats another); `order-by=<field>` (`-` descending, default `id`);
 *   `filter[<field>]=<value>` with its operator in `filter-op[<field>]=` (`eq` by default; `ne`,
 *   `gt`, `gte`, `lt`, `lte`: the reference names the parameter, not its operators), repeated
 *   pairs matched in order (`modified`/`created` compared to the microsecond: `gt` strict);
 *   `load-only=a,b` returns only the fields named; `include-deleted=true` (the parameters table
 *   writes `include_deleted`) lists soft-deleted records too (`is_deleted: true`).
 * - Times `2023-03-23 14:20:54.529536+00:00` (UTC, microseconds; this fake keeps milliseconds).
 * - `POST` (the record in the body), `PATCH /<Entity>/<id>` (only the fields sent change), each
 *   answering `{success: true, data}`; `DELETE` soft-deletes (`is_deleted`, `modified` set) and
 *   answers `{success: true}`; a deleted record answers 404 to `GET /<Entity>/<id>`.
 * - Custom fields are top-level `cf_<name>` values. `GET /entities/Fields?filter[entity_name]=
 *   <Entity>` describes fields: `{id, api_name, name, entity_name, type_id, system_type
 *   ('system'|'custom'), is_required, is_readonly, data_set: [{id, option_name}]}`.
 * - Errors: routing and auth `{status, message, errorcode, traceback}`; validation 422 `{code,
 *   name, message, entity_errors, field_errors: [{field_name, name, code, errors}], http_status,
 *   success: false}`; a 429 with `Retry-After`.
 */

type PipelinerRecord = Record<string, unknown> & { id: string; is_deleted: boolean };
type Row = StoredRecord<PipelinerRecord>;

const entities = ['Accounts', 'Contacts', 'Opportunities'] as const;
type Entity = (typeof entities)[number];
const singular: Record<Entity, string> = {
  Accounts: 'Account',
  Contacts: 'Contact',
  Opportunities: 'Opportunity',
};
const FIRST_MAX = 100;
const FIRST_DEFAULT = 30;
const OWNER = '00000000-0000-0000-0000-000000008e97';

type Field = {
  api_name: string;
  name: string;
  type_id: string;
  system_type: 'system' | 'custom';
  is_required: boolean;
  is_readonly: boolean;
  data_set?: { id: string; option_name: string }[];
};
const system = (api_name: string, name: string, type_id = 'input', extra: Partial<Field> = {}): Field => ({
  api_name,
  name,
  type_id,
  system_type: 'system',
  is_required: false,
  is_readonly: false,
  ...extra,
});
const common: Field[] = [
  system('id', 'ID', 'uuid', { is_readonly: true }),
  system('created', 'Created', 'datetime', { is_readonly: true }),
  system('modified', 'Modified', 'datetime', { is_readonly: true }),
  system('owner_id', 'Owner', 'relation'),
];
const fieldsOf: Record<Entity, Field[]> = {
  Accounts: [
    ...common,
    system('name', 'Name', 'input', { is_required: true }),
    system('email1', 'Email', 'input'),
    system('phone1', 'Phone', 'input'),
    system('city', 'City', 'input'),
    system('description', 'Description', 'text'),
    {
      api_name: 'cf_segment',
      name: 'Segment',
      type_id: 'dropdown',
      system_type: 'custom',
      is_required: false,
      is_readonly: false,
      data_set: [
        { id: 'a1f0c6d2-0001-4000-8000-000000000001', option_name: 'SMB' },
        { id: 'a1f0c6d2-0001-4000-8000-000000000002', option_name: 'Enterprise' },
      ],
    },
  ],
  Contacts: [
    ...common,
    system('first_name', 'First name'),
    system('last_name', 'Last name', 'input', { is_required: true }),
    system('email1', 'Email'),
    system('position', 'Position'),
    {
      api_name: 'cf_hobby',
      name: 'Hobby',
      type_id: 'input',
      system_type: 'custom',
      is_required: false,
      is_readonly: false,
    },
  ],
  Opportunities: [
    ...common,
    system('name', 'Name', 'input', { is_required: true }),
    system('closing_date', 'Closing date', 'date'),
    system('description', 'Description', 'text'),
    system('value', 'Value', 'currency'),
    {
      api_name: 'cf_source',
      name: 'Source',
      type_id: 'input',
      system_type: 'custom',
      is_required: false,
      is_readonly: false,
    },
  ],
};

/** `2023-03-23 14:20:54.529000+00:00`. */
const pipelinerTime = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.(\d{3})Z$/, '.$1000+00:00');
const parseTime = (text: string) => Date.parse(text.replace(' ', 'T').replace(/(\.\d{3})\d+/, '$1'));

function validation(entity: Entity, field: string, message: string): FakeHttpError {
  return Object.assign(new FakeHttpError(422, message, 'ERROR_ENTITY_VALIDATION'), { entity, field });
}

export async function startFakePipeliner(space: string): Promise<ConformanceFake> {
  const stores = Object.fromEntries(entities.map((e) => [e, new RecordStore<PipelinerRecord>()])) as Record<
    Entity,
    RecordStore<PipelinerRecord>
  >;
  let serial = 1;
  const newId = () => `0190978c-0000-4000-8000-${String(serial++).padStart(12, '0')}`;

  const fake = new FakeProvider({
    credentialOf: basicUserCredential,
    errorBody: (error) => {
      if (error.code === 'ERROR_ENTITY_VALIDATION') {
        const { entity, field } = error as unknown as { entity: Entity; field: string };
        return {
          code: 40000,
          name: 'ERROR_ENTITY_VALIDATION',
          message: error.message,
          entity_id: null,
          entity_name: singular[entity],
          entity_errors: [],
          field_errors: [
            {
              field_name: field,
              name: 'ERROR_FIELD_VALIDATION',
              code: 40002,
              errors: [
                { code: 119, name: 'ERROR_PARAMETER_MISSING', message: error.message, field_name: field },
              ],
            },
          ],
          step_checklist_errors: [],
          entity_index: null,
          http_status: 422,
          success: false,
        };
      }
      return { status: error.status, message: error.message, errorcode: error.code ?? null, traceback: null };
    },
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
  });
  const now = () => fake.now();
  const router = fake.router;
  const base = `/api/v100/rest/spaces/:space/entities`;

  router.use(async (ctx, next) => {
    const match = /^\/api\/v100\/rest\/spaces\/([^/]+)\//.exec(ctx.path);
    if (match && match[1] !== space) throw new FakeHttpError(403, `You have no access to space ${match[1]}.`);
    await next();
  });

  const entityOf = (name: string): Entity => {
    if (!entities.includes(name as Entity))
      throw new FakeHttpError(
        404,
        'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.',
      );
    return name as Entity;
  };
  const rowOf = (entity: Entity, id: string): Row => {
    const row = stores[entity].get(id);
    if (!row) throw new FakeHttpError(404, `${singular[entity]} ${id} not found.`, 'ERROR_ENTITY_NOT_FOUND');
    return row;
  };

  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record.modified = pipelinerTime(ms);
  };

  const create = (entity: Entity, values: Record<string, unknown>, ms: number): Row => {
    const id = newId();
    const record: PipelinerRecord = {
      ...Object.fromEntries(fieldsOf[entity].map((field) => [field.api_name, null])),
      is_delete_protected: false,
      ...values,
      id,
      is_deleted: false,
      owner_id: values.owner_id ?? OWNER,
      created: pipelinerTime(ms),
      modified: pipelinerTime(ms),
      revision: serial,
    };
    stores[entity].put(id, record, ms);
    return stores[entity].get(id)!;
  };

  const valueOf = (row: Row, field: string): unknown =>
    field === 'modified'
      ? row.modifiedMs
      : field === 'created'
        ? parseTime(String(row.record.created))
        : row.record[field];

  const filterOf = (ctx: Context, entity: Entity): ((row: Row) => boolean) => {
    const tests: ((row: Row) => boolean)[] = [];
    const ops = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
    for (const [name, raw] of Object.entries(ctx.query)) {
      if (name.startsWith('filter-op[')) {
        if (
          !/^filter-op\[[a-z0-9_]+\]$/.test(name) ||
          ctx.query[name.replace('filter-op', 'filter')] === undefined
        )
          throw new FakeHttpError(400, `Invalid filter operator ${name}.`, 'ERROR_INVALID_FILTER');
        continue;
      }
      if (!name.startsWith('filter[')) continue;
      const match = /^filter\[([a-z0-9_]+)\]$/.exec(name);
      if (!match) throw new FakeHttpError(400, `Invalid filter ${name}.`, 'ERROR_INVALID_FILTER');
      const [, field] = match;
      if (!fieldsOf[entity].some((candidate) => candidate.api_name === field) && field !== 'is_deleted')
        throw new FakeHttpError(
          400,
          `Unknown field ${field} of ${singular[entity]}.`,
          'ERROR_INVALID_FILTER',
        );
      // `filter[f]=v` with its operator in `filter-op[f]=op` (default eq); repeated, paired in order.
      const values = [raw].flat().map(String);
      const opsGiven = [ctx.query[`filter-op[${field}]`] ?? []].flat().map(String);
      if (opsGiven.length > values.length || opsGiven.some((op) => !ops.has(op)))
        throw new FakeHttpError(400, `Invalid filter operator for ${field}.`, 'ERROR_INVALID_FILTER');
      const time = field === 'modified' || field === 'created';
      values.forEach((text, index) => {
        const op = opsGiven[index] ?? 'eq';
        const bound: unknown = time ? parseTime(text) : text;
        if (time && Number.isNaN(bound))
          throw new FakeHttpError(400, `Invalid date ${text}.`, 'ERROR_INVALID_FILTER');
        tests.push((row) => {
          const value = valueOf(row, field);
          const left = time ? (value as number) : String(value);
          const right = bound as number | string;
          switch (op) {
            case 'gt':
              return left > right;
            case 'gte':
              return left >= right;
            case 'lt':
              return left < right;
            case 'lte':
              return left <= right;
            case 'ne':
              return left !== right;
            default:
              return left === right;
          }
        });
      });
    }
    return (row) => tests.every((test) => test(row));
  };

  router.get(`${base}/Fields`, (ctx) => {
    const name = String(ctx.query['filter[entity_name]'] ?? '');
    const entity = entities.find((candidate) => singular[candidate] === name);
    const listed = entity ? fieldsOf[entity].map((field) => ({ entity, field })) : [];
    ctx.body = {
      success: true,
      total: listed.length,
      page_info: { start_cursor: null, end_cursor: null, has_previous_page: false, has_next_page: false },
      data: listed.map(({ entity: owner, field }, index) => ({
        id: `f0000000-0000-4000-8000-${String(index + 1).padStart(12, '0')}`,
        entity_name: singular[owner],
        column_name: field.api_name,
        data_set: [],
        ...field,
      })),
    };
  });

  router.get(`${base}/:entity`, (ctx) => {
    const entity = entityOf(ctx.params.entity);
    const firstText = ctx.query.first;
    const first = firstText === undefined ? FIRST_DEFAULT : Number(firstText);
    if (!Number.isInteger(first) || first < 1 || first > FIRST_MAX)
      throw new FakeHttpError(
        400,
        `Parameter first must be between 1 and ${FIRST_MAX}.`,
        'ERROR_INVALID_PARAMETER',
      );
    fake.logListing(ctx, { object: entity, pageSize: first, maxPageSize: FIRST_MAX });
    const orderText = String(ctx.query['order-by'] ?? 'id');
    const descending = orderText.startsWith('-');
    const orderBy = orderText.replace(/^-/, '');
    if (!fieldsOf[entity].some((field) => field.api_name === orderBy))
      throw new FakeHttpError(400, `Unknown field ${orderBy} in order-by.`, 'ERROR_INVALID_PARAMETER');
    // The parameters table spells it `include_deleted`, its example `include-deleted`.
    const includeDeleted = ctx.query['include-deleted'] === 'true' || ctx.query.include_deleted === 'true';
    const matches = filterOf(ctx, entity);
    type Key = [number | string, string];
    const keyOf = (row: Row): Key => {
      const value = valueOf(row, orderBy);
      return [typeof value === 'number' ? value : String(value ?? ''), row.record.id];
    };
    const compare = (a: Key, b: Key) =>
      ((a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)) *
      (descending ? -1 : 1);
    let after: Key | undefined;
    if (ctx.query.after !== undefined) {
      try {
        after = JSON.parse(Buffer.from(String(ctx.query.after), 'base64').toString('utf8')) as Key;
      } catch {
        throw new FakeHttpError(400, 'Invalid cursor.', 'ERROR_INVALID_PARAMETER');
      }
    }
    const found = [...stores[entity].rows.values()]
      .filter((row) => (includeDeleted || !row.deleted) && (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter(matches)
      .map((row) => ({ row, key: keyOf(row) }))
      .sort((a, b) => compare(a.key, b.key));
    const remaining = found.filter(({ key }) => !after || compare(key, after) > 0);
    const page = remaining.slice(0, first);
    const cursor = (key: Key | undefined) =>
      key ? Buffer.from(JSON.stringify(key)).toString('base64') : null;
    const loadOnly =
      ctx.query['load-only'] === undefined ? undefined : String(ctx.query['load-only']).split(',');
    ctx.body = {
      success: true,
      total: found.length,
      page_info: {
        start_cursor: cursor(page[0]?.key),
        end_cursor: cursor(page.at(-1)?.key),
        has_previous_page: after !== undefined,
        has_next_page: remaining.length > first,
      },
      data: page.map(({ row }) =>
        loadOnly ? Object.fromEntries(loadOnly.map((name) => [name, row.record[name]])) : row.record,
      ),
    };
  });

  router.get(`${base}/:entity/:id`, (ctx) => {
    const entity = entityOf(ctx.params.entity);
    ctx.body = { success: true, data: rowOf(entity, ctx.params.id).record };
  });

  const valuesOf = (ctx: Context, entity: Entity): Record<string, unknown> => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'The request body must be a JSON object.', 'ERROR_INVALID_PARAMETER');
    for (const name of Object.keys(body)) {
      const field = fieldsOf[entity].find((candidate) => candidate.api_name === name);
      if (!field) throw validation(entity, name, `Unknown field '${name}' of ${singular[entity]}.`);
      if (field.is_readonly) throw validation(entity, name, `Field '${name}' is read-only.`);
    }
    return body as Record<string, unknown>;
  };

  router.post(`${base}/:entity`, (ctx) => {
    const entity = entityOf(ctx.params.entity);
    const values = valuesOf(ctx, entity);
    for (const field of fieldsOf[entity].filter((candidate) => candidate.is_required))
      if (
        values[field.api_name] === undefined ||
        values[field.api_name] === null ||
        values[field.api_name] === ''
      )
        throw validation(entity, field.api_name, `Non-null field '${field.api_name}' is null or empty.`);
    ctx.body = { success: true, data: create(entity, values, now()).record };
  });

  router.patch(`${base}/:entity/:id`, (ctx) => {
    const entity = entityOf(ctx.params.entity);
    const row = rowOf(entity, ctx.params.id);
    Object.assign(row.record, valuesOf(ctx, entity));
    row.record.revision = serial++;
    stamp(row, now());
    ctx.body = { success: true, data: row.record };
  });

  router.delete(`${base}/:entity/:id`, (ctx) => {
    const entity = entityOf(ctx.params.entity);
    const row = rowOf(entity, ctx.params.id);
    softDelete(entity, row.record.id, now());
    ctx.body = { success: true };
  });

  /** A deleted record stays, `is_deleted` and `modified` at the deletion, listed with `include-deleted`. */
  const softDelete = (entity: Entity, id: string, atMs: number) => {
    const row = stores[entity].remove(id, atMs);
    if (!row) return;
    row.record.is_deleted = true;
    row.record.modified = pipelinerTime(atMs);
  };

  await fake.start();

  const seedValues = (entity: Entity, n: number): Record<string, unknown> =>
    entity === 'Accounts'
      ? {
          name: `Account ${n}`,
          email1: `a${n}@example.com`,
          city: 'Brno',
          cf_segment: 'a1f0c6d2-0001-4000-8000-000000000001',
        }
      : entity === 'Contacts'
        ? { first_name: `First${n}`, last_name: `Last${n}`, email1: `c${n}@example.com`, position: 'Buyer' }
        : { name: `Opportunity ${n}`, closing_date: '2026-12-31', value: { base_value: 1000 + n } };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => create(entityOf(object), seedValues(entityOf(object), serial), ms).record.id),
    touch(object, id, modifiedMs, options) {
      stamp(rowOf(entityOf(object), id), modifiedMs, options?.visibleFromMs);
    },
    remove: (object, id, atMs) => softDelete(entityOf(object), id, atMs),
    stored: (object, id) => stores[entityOf(object)].get(id)?.record,
  });
}
