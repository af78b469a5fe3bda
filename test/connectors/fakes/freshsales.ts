import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for the Freshsales (Freshworks CRM) REST API
 * (https://developers.freshworks.com/crm/api/), under `<bundle alias>/api`:
 *
 * - Each user's API key as `Authorization: Token token=<key>`; a wrong one answers 401
 *   `{login: "failed", message}`.
 * - `contacts`, `sales_accounts`, `deals`. Lists go through a saved view:
 *   `GET /api/<object>/filters` lists the account's views (`{filters: [{id, name, ...}]}`; ids differ
 *   per account, "All Contacts" is one of them), `GET /api/<object>/view/<view_id>` lists its records
 *   with `page` (from 1), `per_page` (default 25, at most 100), `sort` (a field, default the view's
 *   own order) and `sort_type` (`asc`/`desc`): `{<object>: [...], meta: {total_pages, total}}`.
 * - `POST /api/filtered_search/<contact|sales_account|deal>` with `{filter_rule: [{attribute,
 *   operator, value}], sort, sort_type}` and `page`/`per_page` (query or body): operators `is_in`
 *   (equal to any of a value or list), `is_after`/`is_before` on `updated_at`/`created_at` (compared
 *   at the second, both strict) and `contains`; an unknown attribute is a 400. An empty `filter_rule`
 *   matches every record (verify).
 * - Times at the second in the account's time zone, with its offset (`2016-07-20T12:50:09+05:30`).
 * - Records come bare in lists and wrapped in the singular on single reads and writes
 *   (`{contact: {...}}`); custom field values under `custom_field: {cf_<name>: value}`.
 *   `POST /api/<object>` creates, `PUT /api/<object>/<id>` updates only what it is sent (a
 *   `custom_field` object merges), `DELETE` answers 200 `true`: the record goes to the recycle bin,
 *   which no API lists, so deletions are not revealed.
 * - `GET /api/settings/<object>/fields`: `{fields: [{id, name, label, type, default, required,
 *   base_model, choices: [{id, value}]}]}`, `default: false` for custom fields.
 * - Errors `{errors: {code, message: [...]}}`; `x-ratelimit-limit`/`x-ratelimit-remaining` on every
 *   answer, and a 429 with `Retry-After` when throttled.
 */

type FreshsalesRecord = Record<string, unknown> & { id: number; custom_field: Record<string, unknown> };
type Row = StoredRecord<FreshsalesRecord>;

const objects = ['contacts', 'sales_accounts', 'deals'] as const;
type FreshsalesObject = (typeof objects)[number];
const singular: Record<FreshsalesObject, string> = {
  contacts: 'contact',
  sales_accounts: 'sales_account',
  deals: 'deal',
};
const modelOf: Record<FreshsalesObject, string> = {
  contacts: 'Contact',
  sales_accounts: 'SalesAccount',
  deals: 'Deal',
};
const PER_PAGE_MAX = 100;
const PER_PAGE_DEFAULT = 25;
const OFFSET = '+05:30';
const OFFSET_MS = (5 * 60 + 30) * 60_000;
const readOnly = new Set(['id', 'created_at', 'updated_at', 'display_name']);

type FieldDescription = {
  id: number;
  name: string;
  label: string;
  type: string;
  default: boolean;
  required: boolean;
  choices?: { id: number; value: string }[];
};
const tierChoices = [
  { id: 1, value: 'Gold' },
  { id: 2, value: 'Silver' },
];
const fieldsOf: Record<FreshsalesObject, FieldDescription[]> = {
  contacts: [
    { id: 1, name: 'first_name', label: 'First name', type: 'text', default: true, required: false },
    { id: 2, name: 'last_name', label: 'Last name', type: 'text', default: true, required: true },
    { id: 3, name: 'email', label: 'Emails', type: 'text', default: true, required: false },
    { id: 4, name: 'job_title', label: 'Job title', type: 'text', default: true, required: false },
    { id: 5, name: 'city', label: 'City', type: 'text', default: true, required: false },
    {
      id: 6,
      name: 'cf_tier',
      label: 'Tier',
      type: 'dropdown',
      default: false,
      required: false,
      choices: tierChoices,
    },
    { id: 7, name: 'cf_notes', label: 'Notes', type: 'textarea', default: false, required: false },
  ],
  sales_accounts: [
    { id: 11, name: 'name', label: 'Name', type: 'text', default: true, required: true },
    { id: 12, name: 'website', label: 'Website', type: 'text', default: true, required: false },
    { id: 13, name: 'city', label: 'City', type: 'text', default: true, required: false },
    {
      id: 14,
      name: 'number_of_employees',
      label: 'Employees',
      type: 'number',
      default: true,
      required: false,
    },
    { id: 15, name: 'cf_region', label: 'Region', type: 'text', default: false, required: false },
  ],
  deals: [
    { id: 21, name: 'name', label: 'Name', type: 'text', default: true, required: true },
    { id: 22, name: 'amount', label: 'Deal value', type: 'number', default: true, required: true },
    {
      id: 23,
      name: 'expected_close',
      label: 'Expected close date',
      type: 'date',
      default: true,
      required: false,
    },
    {
      id: 24,
      name: 'cf_source_detail',
      label: 'Source detail',
      type: 'text',
      default: false,
      required: false,
    },
  ],
};

const views: Record<FreshsalesObject, { id: number; name: string; mine: boolean }[]> = {
  contacts: [
    { id: 31000001201, name: 'My Contacts', mine: true },
    { id: 31000001202, name: 'All Contacts', mine: false },
  ],
  sales_accounts: [
    { id: 31000001301, name: 'My Accounts', mine: true },
    { id: 31000001302, name: 'All Accounts', mine: false },
  ],
  deals: [
    { id: 31000001401, name: 'My Deals', mine: true },
    { id: 31000001402, name: 'All Deals', mine: false },
  ],
};
const ME = 7001;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
/** `2016-07-20T12:50:09+05:30`: the account's zone, to the second. */
const freshsalesTime = (ms: number) =>
  new Date(wholeSecond(ms) + OFFSET_MS).toISOString().replace(/\.\d{3}Z$/, OFFSET);

export async function startFakeFreshsales(): Promise<ConformanceFake> {
  const stores = Object.fromEntries(objects.map((o) => [o, new RecordStore<FreshsalesRecord>()])) as Record<
    FreshsalesObject,
    RecordStore<FreshsalesRecord>
  >;
  let nextId = 5000;

  const fake = new FakeProvider({
    credentialOf: (ctx) => /^Token token=(.+)$/.exec(ctx.get('authorization'))?.[1],
    errorBody: (error) =>
      error.status === 401
        ? { login: 'failed', message: 'Incorrect or expired API key' }
        : { errors: { code: error.status, message: [error.message] } },
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '0',
      'Retry-After': '1',
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    ctx.set('x-ratelimit-limit', '1000');
    ctx.set('x-ratelimit-remaining', '999');
    await next();
  });

  const objectOf = (name: string): FreshsalesObject => {
    if (!objects.includes(name as FreshsalesObject)) throw new FakeHttpError(404, 'Page not found');
    return name as FreshsalesObject;
  };
  const rowOf = (object: FreshsalesObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${modelOf[object]} not found`);
    return row;
  };
  const visible = (row: Row) => (row.visibleFromMs ?? row.modifiedMs) <= now();

  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.updated_at = freshsalesTime(ms);
  };

  const blank = (object: FreshsalesObject): Record<string, unknown> => ({
    ...Object.fromEntries(fieldsOf[object].filter((f) => f.default).map((f) => [f.name, null])),
    custom_field: Object.fromEntries(fieldsOf[object].filter((f) => !f.default).map((f) => [f.name, null])),
  });

  const create = (object: FreshsalesObject, values: Record<string, unknown>, ms: number): Row => {
    const id = nextId++;
    const record = {
      ...blank(object),
      ...values,
      custom_field: { ...(blank(object).custom_field as object), ...((values.custom_field as object) ?? {}) },
      id,
      owner_id: id % 2 ? ME : ME + 1,
      created_at: freshsalesTime(ms),
      updated_at: freshsalesTime(ms),
    } as FreshsalesRecord;
    if (object === 'contacts')
      record.display_name = [record.first_name, record.last_name].filter(Boolean).join(' ');
    stores[object].put(String(id), record, wholeSecond(ms));
    return stores[object].get(String(id))!;
  };

  const pageOf = (ctx: Context) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const pageText = ctx.query.page ?? body.page;
    const perText = ctx.query.per_page ?? body.per_page;
    const page = pageText === undefined ? 1 : Number(pageText);
    const perPage = perText === undefined ? PER_PAGE_DEFAULT : Number(perText);
    if (!Number.isInteger(page) || page < 1) throw new FakeHttpError(400, 'Invalid page');
    // Freshsales caps a larger per_page at its maximum rather than refusing it.
    return {
      page,
      perPage: Math.min(Math.max(1, perPage || PER_PAGE_DEFAULT), PER_PAGE_MAX),
      asked: perPage,
    };
  };

  const sortRows = (rows: Row[], sort: unknown, sortType: unknown) => {
    const field = sort === undefined ? 'id' : String(sort);
    const descending = String(sortType ?? 'desc') === 'desc' && sort !== undefined;
    const key = (row: Row): number | string =>
      field === 'updated_at'
        ? row.modifiedMs
        : field === 'created_at'
          ? Date.parse(String(row.record.created_at))
          : field === 'id'
            ? row.record.id
            : String(row.record[field] ?? '');
    return rows.sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      const order = (x < y ? -1 : x > y ? 1 : 0) || a.record.id - b.record.id;
      return descending ? -order : order;
    });
  };

  const answerPage = (ctx: Context, object: FreshsalesObject, rows: Row[]) => {
    const { page, perPage, asked } = pageOf(ctx);
    fake.logListing(ctx, {
      object,
      pageSize: Number.isFinite(asked) ? asked : PER_PAGE_DEFAULT,
      maxPageSize: PER_PAGE_MAX,
    });
    const slice = rows.slice((page - 1) * perPage, page * perPage);
    ctx.body = {
      [object]: slice.map((row) => row.record),
      meta: { total_pages: Math.ceil(rows.length / perPage), total: rows.length },
    };
  };

  router.get('/api/:object/filters', (ctx) => {
    const object = objectOf(ctx.params.object);
    ctx.body = {
      filters: views[object].map((view) => ({
        id: view.id,
        name: view.name,
        model_class_name: modelOf[object],
        user_id: ME,
        is_default: !view.mine,
        is_public: true,
        updated_at: freshsalesTime(Date.UTC(2023, 0, 1)),
      })),
    };
  });

  router.get('/api/:object/view/:viewId', (ctx) => {
    const object = objectOf(ctx.params.object);
    const view = views[object].find((candidate) => String(candidate.id) === ctx.params.viewId);
    if (!view) throw new FakeHttpError(404, 'View not found');
    const rows = stores[object]
      .live()
      .filter((row) => visible(row) && (!view.mine || row.record.owner_id === ME));
    answerPage(ctx, object, sortRows(rows, ctx.query.sort, ctx.query.sort_type));
  });

  const entityObject: Record<string, FreshsalesObject> = {
    contact: 'contacts',
    sales_account: 'sales_accounts',
    deal: 'deals',
  };
  type Rule = { attribute?: unknown; operator?: unknown; value?: unknown };
  const predicateOf = (object: FreshsalesObject, rule: Rule): ((row: Row) => boolean) => {
    const attribute = String(rule.attribute);
    const operator = String(rule.operator);
    if (attribute === 'updated_at' || attribute === 'created_at') {
      const bound = wholeSecond(Date.parse(String(rule.value)));
      if (Number.isNaN(bound)) throw new FakeHttpError(400, `Invalid value for ${attribute}`);
      const time = (row: Row) =>
        attribute === 'updated_at' ? row.modifiedMs : Date.parse(String(row.record.created_at));
      if (operator === 'is_after') return (row) => time(row) > bound;
      if (operator === 'is_before') return (row) => time(row) < bound;
      throw new FakeHttpError(400, `Invalid operator ${operator} for ${attribute}`);
    }
    const name = attribute === 'contact_email.email' ? 'email' : attribute;
    const field = fieldsOf[object].find((candidate) => candidate.name === name);
    if (!field && name !== 'id') throw new FakeHttpError(400, `Invalid attribute ${attribute}`);
    const valueOf = (row: Row) =>
      field && !field.default ? row.record.custom_field[name] : row.record[name];
    const wanted = [rule.value].flat().map(String);
    if (operator === 'is_in') return (row) => wanted.includes(String(valueOf(row)));
    if (operator === 'contains')
      return (row) => wanted.some((item) => String(valueOf(row) ?? '').includes(item));
    throw new FakeHttpError(400, `Invalid operator ${operator}`);
  };

  router.post('/api/filtered_search/:entity', (ctx) => {
    const object = entityObject[ctx.params.entity];
    if (!object) throw new FakeHttpError(404, 'Page not found');
    const body = (ctx.request.body ?? {}) as { filter_rule?: unknown; sort?: unknown; sort_type?: unknown };
    const rules = body.filter_rule ?? [];
    if (!Array.isArray(rules)) throw new FakeHttpError(400, 'filter_rule must be a list');
    const tests = (rules as Rule[]).map((rule) => predicateOf(object, rule));
    const rows = stores[object].live().filter((row) => visible(row) && tests.every((test) => test(row)));
    answerPage(
      ctx,
      object,
      sortRows(rows, body.sort ?? ctx.query.sort, body.sort_type ?? ctx.query.sort_type),
    );
  });

  router.get('/api/settings/:object/fields', (ctx) => {
    const object = objectOf(ctx.params.object);
    ctx.body = {
      fields: fieldsOf[object].map((field) => ({
        ...field,
        base_model: modelOf[object],
        visible: true,
        choices: field.choices ?? [],
      })),
    };
  });

  router.get('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx.params.object);
    ctx.body = { [singular[object]]: rowOf(object, ctx.params.id).record };
  });

  const valuesOf = (ctx: Context, object: FreshsalesObject): Record<string, unknown> => {
    const values = (ctx.request.body as Record<string, unknown> | undefined)?.[singular[object]];
    if (!values || typeof values !== 'object' || Array.isArray(values))
      throw new FakeHttpError(400, `${singular[object]} is missing`);
    const record = values as Record<string, unknown>;
    for (const name of Object.keys(record))
      if (readOnly.has(name)) throw new FakeHttpError(400, `${name} cannot be set`);
    if (record.custom_field !== undefined) {
      if (typeof record.custom_field !== 'object' || Array.isArray(record.custom_field))
        throw new FakeHttpError(400, 'custom_field must be an object');
      for (const name of Object.keys(record.custom_field as object))
        if (!fieldsOf[object].some((field) => !field.default && field.name === name))
          throw new FakeHttpError(400, `Unknown custom field ${name}`);
    }
    return record;
  };

  router.post('/api/:object', (ctx) => {
    const object = objectOf(ctx.params.object);
    const values = valuesOf(ctx, object);
    for (const field of fieldsOf[object].filter((f) => f.required && f.default))
      if (values[field.name] === undefined || values[field.name] === null || values[field.name] === '')
        throw new FakeHttpError(400, `${field.label} can't be blank`);
    const row = create(object, values, now());
    ctx.body = { [singular[object]]: row.record };
  });

  router.put('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx.params.object);
    const row = rowOf(object, ctx.params.id);
    const { custom_field: custom, ...values } = valuesOf(ctx, object);
    Object.assign(row.record, values);
    if (custom) Object.assign(row.record.custom_field, custom);
    if (object === 'contacts')
      row.record.display_name = [row.record.first_name, row.record.last_name].filter(Boolean).join(' ');
    stamp(row, now());
    ctx.body = { [singular[object]]: row.record };
  });

  router.delete('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx.params.object);
    rowOf(object, ctx.params.id);
    stores[object].remove(ctx.params.id, now());
    ctx.body = true;
  });

  await fake.start();

  const seedValues = (object: FreshsalesObject, n: number): Record<string, unknown> =>
    object === 'contacts'
      ? {
          first_name: `First${n}`,
          last_name: `Last${n}`,
          email: `c${n}@example.com`,
          job_title: 'Buyer',
          city: 'Chennai',
          custom_field: { cf_tier: 'Gold' },
        }
      : object === 'sales_accounts'
        ? {
            name: `Account ${n}`,
            website: `https://a${n}.example.com`,
            city: 'Austin',
            number_of_employees: 50,
          }
        : { name: `Deal ${n}`, amount: 1000 + n, expected_close: '2026-12-31' };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => String(create(objectOf(object), seedValues(objectOf(object), nextId), ms).record.id)),
    touch(object, id, modifiedMs, options) {
      stamp(rowOf(objectOf(object), id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      stores[objectOf(object)].remove(id, atMs);
    },
    stored: (object, id) => stores[objectOf(object)].get(id)?.record,
  });
}
