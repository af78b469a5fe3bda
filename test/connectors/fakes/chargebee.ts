import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  basicUserCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Chargebee's API v2 (https://apidocs.chargebee.com/docs/api), written from its
 * reference (list operations, error handling, customers, subscriptions, invoices):
 *
 * - Auth: the site's API key as the Basic user name, no password. The site is the host
 *   (`https://{site}.chargebee.com/api/v2/...`); here the server's `/api`.
 * - Times are Unix seconds (`updated_at`, `created_at`); `resource_version` grows with every change
 *   (milliseconds). A stored time is truncated to its second.
 * - Lists (`GET /v2/customers`, `/v2/subscriptions`, `/v2/invoices`): `limit` 1 to 100 (default
 *   10), `offset` = the `next_offset` of the previous page, which is opaque and stands for the last
 *   record's position in the sort (`["<sort value ms>","<internal id>"]`), so a page continues after
 *   that record, not after a count; `sort_by[asc|desc]` (`created_at` or `updated_at`; invoices
 *   `date` or `updated_at`), created_at ascending by default; `updated_at[after|before]` strict
 *   bounds in seconds, `updated_at[between]` `[from,to]` both included; `include_deleted=true` lists
 *   deleted records with `deleted: true` (their `updated_at` the deletion's), without it they are
 *   left out. Each entry wraps its record: `{customer}`, `{subscription, customer}`, `{invoice}`;
 *   `next_offset` only while more follow.
 * - Writes take form-encoded parameters (`billing_address[city]=...`), never JSON: customers
 *   `POST /v2/customers` (create), `POST /v2/customers/{id}` (update), `POST
 *   /v2/customers/{id}/delete` (the answer is the customer, `deleted: true`); each answers
 *   `{customer}`. Custom fields are top-level `cf_*` attributes configured on the site; an unknown
 *   parameter is refused (a stricter reading than the reference states: it names each parameter).
 * - `GET /v2/{object}/{id}` answers `{customer}` etc.; a deleted or unknown id is a 404.
 * - Errors `{message, type, api_error_code, param, http_status_code, error_code, error_msg}`
 *   (`invalid_request`/`resource_not_found`, `api_authentication_failed` with 401,
 *   `api_request_limit_exceeded` with 429). No rate-limit headers are documented.
 */

type ChargebeeRecord = Record<string, unknown> & { id: string; updated_at: number };
type Row = StoredRecord<ChargebeeRecord> & { seq: number; createdMs: number };

const objects = ['customers', 'subscriptions', 'invoices'] as const;
type ChargebeeObject = (typeof objects)[number];
const singular: Record<ChargebeeObject, string> = {
  customers: 'customer',
  subscriptions: 'subscription',
  invoices: 'invoice',
};

const LIMIT_MAX = 100;
const LIMIT_DEFAULT = 10;
const FIXTURE_CUSTOMER = 'cbFixtureCustomer';
/** The site's custom fields for customers (Settings > Custom fields). */
const CUSTOM_FIELDS = ['cf_tier', 'cf_account_manager'];
const customerParams = [
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'company',
  'preferred_currency_code',
  'net_term_days',
  'auto_collection',
  'taxability',
  'locale',
  'vat_number',
  'billing_address',
  ...CUSTOM_FIELDS,
];
const addressParams = [
  'first_name',
  'last_name',
  'email',
  'company',
  'phone',
  'line1',
  'line2',
  'city',
  'state_code',
  'state',
  'zip',
  'country',
];

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const seconds = (ms: number) => Math.floor(ms / 1000);

function errorCode(error: FakeHttpError): string {
  if (error.status === 401) return 'api_authentication_failed';
  if (error.status === 429) return 'api_request_limit_exceeded';
  if (error.code) return error.code;
  if (error.status === 404) return 'resource_not_found';
  if (error.status >= 500) return 'internal_error';
  return 'param_wrong_value';
}

/** A 400 for one parameter, as Chargebee words it (`param : message`). */
const badParam = (param: string, message: string) =>
  Object.assign(new FakeHttpError(400, `${param} : ${message}`, 'param_wrong_value'), { param });

export async function startFakeChargebee(): Promise<ConformanceFake> {
  const stores: Record<ChargebeeObject, RecordStore<ChargebeeRecord>> = {
    customers: new RecordStore(),
    subscriptions: new RecordStore(),
    invoices: new RecordStore(),
  };
  let seq = 1;

  const fake = new FakeProvider({
    prefix: '/api',
    credentialOf: basicUserCredential,
    errorBody: (error) => {
      const code = errorCode(error);
      const message =
        error.status === 401
          ? 'Sorry, authentication failed. Invalid api key'
          : error.status === 429
            ? 'Sorry, access has been blocked temporarily due to request count exceeding acceptable limits. Please try after some time.'
            : error.message;
      return {
        message,
        ...(error.status !== 401 &&
          error.status !== 429 &&
          error.status < 500 && { type: 'invalid_request' }),
        ...(error.status >= 500 && { type: 'operation_failed' }),
        api_error_code: code,
        ...((error as { param?: string }).param && { param: (error as { param?: string }).param }),
        http_status_code: error.status,
        error_code: code,
        error_msg: message,
      };
    },
  });
  const now = () => fake.now();
  const router = fake.router;

  const put = (object: ChargebeeObject, record: ChargebeeRecord, ms: number): Row => {
    const row: Row = { record, modifiedMs: wholeSecond(ms), seq: seq++, createdMs: wholeSecond(ms) };
    stores[object].rows.set(record.id, row);
    return row;
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.updated_at = seconds(ms);
    row.record.resource_version = Math.max(Number(row.record.resource_version ?? 0) + 1, ms);
  };

  const newCustomer = (id: string, values: Record<string, unknown>, ms: number): ChargebeeRecord => ({
    id,
    auto_collection: 'on',
    net_term_days: 0,
    allow_direct_debit: false,
    created_at: seconds(ms),
    taxability: 'taxable',
    updated_at: seconds(ms),
    pii_cleared: 'active',
    channel: 'web',
    resource_version: ms,
    deleted: false,
    object: 'customer',
    card_status: 'no_card',
    promotional_credits: 0,
    refundable_credits: 0,
    excess_payments: 0,
    unbilled_charges: 0,
    preferred_currency_code: 'USD',
    mrr: 0,
    ...values,
  });
  // The customer the seeded subscriptions and invoices belong to.
  put(
    'customers',
    newCustomer(
      FIXTURE_CUSTOMER,
      { first_name: 'Fixture', email: 'fixture@example.com' },
      Date.UTC(2020, 0, 1),
    ),
    Date.UTC(2020, 0, 1),
  );

  const buildSubscription = (id: string, ms: number): ChargebeeRecord => ({
    id,
    billing_period: 1,
    billing_period_unit: 'month',
    customer_id: FIXTURE_CUSTOMER,
    status: 'active',
    current_term_start: seconds(ms),
    current_term_end: seconds(ms) + 30 * 86_400,
    next_billing_at: seconds(ms) + 30 * 86_400,
    created_at: seconds(ms),
    started_at: seconds(ms),
    activated_at: seconds(ms),
    updated_at: seconds(ms),
    has_scheduled_changes: false,
    channel: 'web',
    resource_version: ms,
    deleted: false,
    object: 'subscription',
    currency_code: 'USD',
    subscription_items: [
      {
        item_price_id: 'basic-USD-monthly',
        item_type: 'plan',
        quantity: 1,
        unit_price: 1000,
        amount: 1000,
        object: 'subscription_item',
      },
    ],
    due_invoices_count: 0,
    mrr: 1000,
  });
  const buildInvoice = (id: string, ms: number): ChargebeeRecord => ({
    id,
    customer_id: FIXTURE_CUSTOMER,
    recurring: true,
    status: 'paid',
    price_type: 'tax_exclusive',
    date: seconds(ms),
    due_date: seconds(ms),
    net_term_days: 0,
    exchange_rate: 1,
    total: 1000,
    amount_paid: 1000,
    amount_adjusted: 0,
    write_off_amount: 0,
    credits_applied: 0,
    amount_due: 0,
    paid_at: seconds(ms),
    updated_at: seconds(ms),
    resource_version: ms,
    deleted: false,
    object: 'invoice',
    first_invoice: false,
    currency_code: 'USD',
    base_currency_code: 'USD',
    line_items: [],
  });

  const objectOf = (ctx: Context): ChargebeeObject => {
    const object = ctx.params.object as ChargebeeObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, `Sorry, we couldn't find that resource`);
    return object;
  };
  const liveRow = (object: ChargebeeObject, id: string): Row => {
    const row = stores[object].get(id) as Row | undefined;
    if (!row) throw new FakeHttpError(404, `Sorry, we couldn't find that resource`, 'resource_not_found');
    return row;
  };

  /** The entry a list or write answers with: the record under its singular name (and its customer). */
  const entry = (object: ChargebeeObject, record: ChargebeeRecord): Record<string, unknown> => {
    if (object !== 'subscriptions') return { [singular[object]]: record };
    return { subscription: record, customer: stores.customers.rows.get(String(record.customer_id))?.record };
  };

  const timeParam = (ctx: Context, name: string): number | undefined => {
    const value = ctx.query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^\d{1,10}$/.test(value))
      throw badParam(name, 'invalid timestamp value');
    return Number(value) * 1000;
  };

  router.get('/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const known = new Set(['limit', 'offset', 'include_deleted', 'sort_by[asc]', 'sort_by[desc]']);
    for (const name of Object.keys(ctx.query)) {
      if (!known.has(name) && !/^updated_at\[(after|before|between)\]$/.test(name))
        throw badParam(name, 'is not a supported parameter');
    }
    const limitText = ctx.query.limit;
    const limit = limitText === undefined ? LIMIT_DEFAULT : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX)
      throw badParam('limit', `should be between 1 and ${LIMIT_MAX}`);
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: LIMIT_MAX });

    const asc = ctx.query['sort_by[asc]'];
    const desc = ctx.query['sort_by[desc]'];
    if (asc !== undefined && desc !== undefined) throw badParam('sort_by', 'only one sort order is allowed');
    const sortBy = String(asc ?? desc ?? 'created_at');
    const sortable = object === 'invoices' ? ['date', 'updated_at'] : ['created_at', 'updated_at'];
    if (!(asc === undefined && desc === undefined) && !sortable.includes(sortBy))
      throw badParam(
        `sort_by[${asc !== undefined ? 'asc' : 'desc'}]`,
        `${sortBy} is not a sortable attribute`,
      );
    const descending = desc !== undefined;
    const after = timeParam(ctx, 'updated_at[after]');
    const before = timeParam(ctx, 'updated_at[before]');
    let between: [number, number] | undefined;
    const betweenText = ctx.query['updated_at[between]'];
    if (betweenText !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(betweenText));
      } catch {
        parsed = undefined;
      }
      if (!Array.isArray(parsed) || parsed.length !== 2 || !parsed.every((n) => /^\d{1,10}$/.test(String(n))))
        throw badParam('updated_at[between]', 'invalid value');
      between = [Number(parsed[0]) * 1000, Number(parsed[1]) * 1000];
    }
    const includeDeleted = ctx.query.include_deleted === 'true';

    const key = (row: Row) =>
      sortBy === 'updated_at'
        ? row.modifiedMs
        : sortBy === 'date'
          ? Number(row.record.date) * 1000
          : row.createdMs;
    const compare = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];
    let position: [number, number] | undefined;
    if (ctx.query.offset !== undefined) {
      try {
        const parsed = JSON.parse(String(ctx.query.offset)) as unknown;
        if (!Array.isArray(parsed) || parsed.length !== 2) throw new Error('bad');
        position = [Number(parsed[0]), Number(parsed[1])];
        if (position.some((n) => !Number.isFinite(n))) throw new Error('bad');
      } catch {
        throw badParam('offset', 'invalid value');
      }
    }
    const found = [...stores[object].rows.values()]
      .map((row) => row as Row)
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => includeDeleted || !row.deleted)
      .filter(
        (row) =>
          (after === undefined || row.modifiedMs > after) &&
          (before === undefined || row.modifiedMs < before) &&
          (between === undefined || (row.modifiedMs >= between[0] && row.modifiedMs <= between[1])),
      )
      .map((row) => ({ row, at: [key(row), row.seq] as [number, number] }))
      .sort((a, b) => compare(a.at, b.at) * (descending ? -1 : 1))
      .filter(({ at }) => !position || compare(at, position) * (descending ? -1 : 1) > 0);
    const page = found.slice(0, limit);
    const last = page.at(-1);
    ctx.body = {
      list: page.map(({ row }) => entry(object, row.record)),
      ...(found.length > limit &&
        last && { next_offset: JSON.stringify([String(last.at[0]), String(last.at[1])]) }),
    };
  });

  router.get('/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = entry(object, liveRow(object, ctx.params.id).record);
  });

  /** Form parameters of a customer write, checked and typed as Chargebee stores them. */
  const customerValues = (ctx: Context, creating: boolean): Record<string, unknown> => {
    if (!ctx.is('application/x-www-form-urlencoded'))
      throw new FakeHttpError(
        400,
        'Request body must be application/x-www-form-urlencoded',
        'invalid_request',
      );
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const values: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      if (!customerParams.includes(name) || (name === 'id' && !creating))
        throw badParam(name, 'is not a valid parameter');
      if (name === 'billing_address') {
        if (!value || typeof value !== 'object') throw badParam(name, 'invalid value');
        for (const member of Object.keys(value)) {
          if (!addressParams.includes(member))
            throw badParam(`billing_address[${member}]`, 'is not a valid parameter');
        }
        values[name] = { ...(value as object), object: 'billing_address' };
        continue;
      }
      if (typeof value !== 'string') throw badParam(name, 'invalid value');
      if (name === 'net_term_days') {
        if (!/^\d+$/.test(value)) throw badParam(name, 'invalid integer value');
        values[name] = Number(value);
      } else if (name === 'auto_collection' && !['on', 'off'].includes(value)) {
        throw badParam(name, 'invalid value');
      } else if (name === 'taxability' && !['taxable', 'exempt'].includes(value)) {
        throw badParam(name, 'invalid value');
      } else if (name === 'email' && value && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) {
        throw badParam(name, 'invalid email format');
      } else {
        values[name] = value;
      }
    }
    return values;
  };

  router.post('/v2/customers', (ctx) => {
    const values = customerValues(ctx, true);
    const id =
      typeof values.id === 'string' && values.id ? values.id : `Azq${(seq + 1000).toString(36)}Cb${seq}`;
    if (stores.customers.rows.has(id)) throw badParam('id', 'The value is already present');
    const ms = now();
    const row = put('customers', newCustomer(id, values, ms), ms);
    ctx.body = { customer: row.record };
  });

  router.post('/v2/customers/:id', (ctx) => {
    const row = liveRow('customers', ctx.params.id);
    Object.assign(row.record, customerValues(ctx, false));
    stamp(row, now());
    ctx.body = { customer: row.record };
  });

  const remove = (object: ChargebeeObject, id: string, ms: number) => {
    const row = stores[object].remove(id, wholeSecond(ms));
    if (!row) return undefined;
    row.record.deleted = true;
    row.record.updated_at = seconds(ms);
    row.record.resource_version = Math.max(Number(row.record.resource_version ?? 0) + 1, ms);
    return row;
  };

  router.post('/v2/customers/:id/delete', (ctx) => {
    liveRow('customers', ctx.params.id);
    ctx.body = { customer: remove('customers', ctx.params.id, now())!.record };
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as ChargebeeObject].rows.get(id) as Row | undefined;
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
        const name = object as ChargebeeObject;
        const n = seq;
        const record =
          name === 'customers'
            ? newCustomer(
                `cbCust${n}`,
                {
                  first_name: `First${n}`,
                  last_name: `Last${n}`,
                  email: `c${n}@example.com`,
                  company: `Company ${n}`,
                  cf_tier: 'gold',
                },
                wholeSecond(ms),
              )
            : name === 'subscriptions'
              ? buildSubscription(`cbSub${n}`, wholeSecond(ms))
              : buildInvoice(String(n), wholeSecond(ms));
        return put(name, record, ms).record.id;
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      remove(object as ChargebeeObject, id, atMs);
    },
    stored: (object, id) => stores[object as ChargebeeObject].get(id)?.record,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
