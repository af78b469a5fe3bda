import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Stripe's API (https://docs.stripe.com/api) as its reference describes it:
 * customers, products, prices, invoices and subscriptions under `/v1/<object>`, listed newest first
 * with `limit` (1–100, default 10), `starting_after` / `ending_before`, `created[gte|gt|lte|lt]`
 * and `{object: "list", data, has_more}`, unknown list parameters refused; times in whole unix
 * seconds; form-encoded writes (`metadata[key]`, `items[0][price]`) answered with the object,
 * unknown parameters refused, `Idempotency-Key` replaying the first answer (and refusing other
 * parameters under the same key); deletions answered `{id, object, deleted: true}` (an invoice
 * only while draft; prices cannot be deleted, only archived; a subscription is canceled, which
 * Stripe reports as `customer.subscription.deleted`); a deleted customer still answers a get as
 * `{id, object, deleted: true}`; every change recorded as an event (`<object>.created/updated/deleted`,
 * `data.object`, `data.previous_attributes`) listed by `GET /v1/events` (newest first, 30 days back,
 * `types[]`, `created[gte|gt|lte|lt]`); search (`/v1/<object>/search`) seeing a change only a minute
 * after it ("data is searchable in less than a minute"); webhook endpoints issuing a `whsec_`
 * secret; errors as `{error: {type, code, message}}`.
 */

export type StripeRecord = Record<string, unknown> & { id: string; object: string; created: number };

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
  data: { object: StripeRecord; previous_attributes?: Record<string, unknown> };
}

interface ObjectKind {
  prefix: string;
  type: string;
  event: string;
  /** Parameters a create or update takes (the reference's, as far as Ferry uses them). */
  params: string[];
  required: string[];
  deletable: 'always' | 'draft' | 'no';
}

const kinds: Record<string, ObjectKind> = {
  customers: {
    prefix: 'cus',
    type: 'customer',
    event: 'customer',
    params: [
      'name',
      'email',
      'phone',
      'description',
      'address',
      'shipping',
      'balance',
      'metadata',
      'preferred_locales',
      'tax_exempt',
    ],
    required: [],
    deletable: 'always',
  },
  products: {
    prefix: 'prod',
    type: 'product',
    event: 'product',
    params: [
      'name',
      'description',
      'active',
      'default_price',
      'images',
      'url',
      'unit_label',
      'tax_code',
      'metadata',
    ],
    required: ['name'],
    deletable: 'always',
  },
  prices: {
    prefix: 'price',
    type: 'price',
    event: 'price',
    params: [
      'product',
      'currency',
      'unit_amount',
      'active',
      'nickname',
      'lookup_key',
      'recurring',
      'billing_scheme',
      'tax_behavior',
      'metadata',
    ],
    required: ['product', 'currency'],
    deletable: 'no',
  },
  invoices: {
    prefix: 'in',
    type: 'invoice',
    event: 'invoice',
    params: [
      'customer',
      'description',
      'collection_method',
      'days_until_due',
      'due_date',
      'currency',
      'auto_advance',
      'metadata',
    ],
    required: ['customer'],
    deletable: 'draft',
  },
  subscriptions: {
    prefix: 'sub',
    type: 'subscription',
    event: 'customer.subscription',
    params: [
      'customer',
      'items',
      'cancel_at_period_end',
      'cancel_at',
      'collection_method',
      'description',
      'default_payment_method',
      'trial_end',
      'metadata',
    ],
    required: ['customer', 'items'],
    deletable: 'no',
  },
};

/** Records every seeded price, invoice and subscription points at. */
export const stripeFixture = { customer: 'cus_fixture', product: 'prod_fixture', price: 'price_fixture' };

/** Webhook endpoints the fake holds, by id, as `POST /v1/webhook_endpoints` took them. */
export const stripeWebhookEndpoints = new Map<
  string,
  {
    id: string;
    object: 'webhook_endpoint';
    url: string;
    enabled_events: string[];
    secret: string;
    status: string;
  }
>();

/**
 * A delivery as Stripe signs it: `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>" under the endpoint's whole secret>` (https://docs.stripe.com/webhooks#verify-manually).
 */
export function stripeWebhookDelivery(
  secret: string,
  event: StripeEvent | Record<string, unknown>,
  options: { timestamp?: number; extraSignatures?: string[] } = {},
): { headers: Record<string, string>; body: string } {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const body = JSON.stringify(event);
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  const v1 = [...(options.extraSignatures ?? []), signature].map((value) => `v1=${value}`).join(',');
  return {
    headers: { 'stripe-signature': `t=${timestamp},${v1}`, 'content-type': 'application/json' },
    body,
  };
}

let eventCounter = 0;
let idCounter = 0;

const newId = (prefix: string) => `${prefix}_${(++idCounter).toString(36).padStart(14, '0')}`;
const seconds = (ms: number) => Math.floor(ms / 1000);
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Form values arrive as text: numbers and booleans as Stripe reads them. */
function typed(name: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (['balance', 'unit_amount', 'days_until_due', 'due_date', 'cancel_at', 'trial_end'].includes(name)) {
    if (!/^-?\d+$/.test(value))
      throw new FakeHttpError(400, `Invalid integer: ${value}`, 'parameter_invalid_integer');
    return Number(value);
  }
  if (['active', 'auto_advance', 'cancel_at_period_end'].includes(name)) {
    if (value !== 'true' && value !== 'false')
      throw new FakeHttpError(400, `Invalid boolean: ${value}`, 'parameter_invalid_boolean');
    return value === 'true';
  }
  return value === '' ? null : value;
}

/**
 * An invoice's `days_until_due` is a parameter, not an attribute: Stripe answers with the
 * `due_date` it sets (that many days after the invoice's creation), and no `days_until_due`
 * (https://docs.stripe.com/api/invoices/create#create_invoice-days_until_due, https://docs.stripe.com/api/invoices/object).
 */
function dueDateOf(record: StripeRecord, values: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(values, 'days_until_due')) return values;
  const { days_until_due: days, ...rest } = values;
  if (values === record) delete record.days_until_due;
  return typeof days === 'number' ? { ...rest, due_date: record.created + days * 86_400 } : rest;
}

/**
 * An object's attributes when nothing sets them: Stripe's answers carry every attribute of the
 * object the reference documents (spec3's required properties, nullable ones as `null`), never
 * leaving one out (https://github.com/stripe/openapi, openapi/spec3.json; https://docs.stripe.com/api).
 */
function unsetAttributes(object: string, id: string, created: number): Record<string, unknown> {
  switch (object) {
    case 'customers':
      return {
        address: null,
        balance: 0,
        currency: null,
        default_source: null,
        delinquent: false,
        description: null,
        discount: null,
        email: null,
        invoice_prefix: id.slice(-8).toUpperCase(),
        invoice_settings: {
          custom_fields: null,
          default_payment_method: null,
          footer: null,
          rendering_options: null,
        },
        name: null,
        next_invoice_sequence: 1,
        phone: null,
        preferred_locales: [],
        shipping: null,
        tax_exempt: 'none',
        test_clock: null,
      };
    case 'products':
      return {
        active: true,
        default_price: null,
        description: null,
        images: [],
        marketing_features: [],
        package_dimensions: null,
        shippable: null,
        statement_descriptor: null,
        tax_code: null,
        type: 'service',
        unit_label: null,
        updated: created,
        url: null,
      };
    case 'prices':
      return {
        active: true,
        billing_scheme: 'per_unit',
        custom_unit_amount: null,
        lookup_key: null,
        nickname: null,
        recurring: null,
        tax_behavior: 'unspecified',
        tiers_mode: null,
        transform_quantity: null,
        type: 'one_time',
        unit_amount: null,
        unit_amount_decimal: null,
      };
    case 'invoices':
      return {
        account_country: 'US',
        account_name: null,
        account_tax_ids: null,
        amount_due: 0,
        amount_overpaid: 0,
        amount_paid: 0,
        amount_remaining: 0,
        amount_shipping: 0,
        application: null,
        attempt_count: 0,
        attempted: false,
        auto_advance: false,
        automatic_tax: {
          disabled_reason: null,
          enabled: false,
          liability: null,
          provider: null,
          status: null,
        },
        automatically_finalizes_at: null,
        billing_reason: 'manual',
        collection_method: 'charge_automatically',
        currency: 'usd',
        custom_fields: null,
        customer_account: null,
        customer_address: null,
        customer_email: null,
        customer_name: null,
        customer_phone: null,
        customer_shipping: null,
        customer_tax_exempt: 'none',
        customer_tax_ids: [],
        default_payment_method: null,
        default_source: null,
        default_tax_rates: [],
        description: null,
        discounts: [],
        due_date: null,
        effective_at: null,
        ending_balance: null,
        footer: null,
        from_invoice: null,
        hosted_invoice_url: null,
        invoice_pdf: null,
        issuer: { type: 'self' },
        last_finalization_error: null,
        latest_revision: null,
        lines: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/invoices/${id}/lines` },
        next_payment_attempt: null,
        number: null,
        on_behalf_of: null,
        parent: null,
        payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
        period_end: created,
        period_start: created,
        post_payment_credit_notes_amount: 0,
        pre_payment_credit_notes_amount: 0,
        receipt_number: null,
        rendering: null,
        shipping_cost: null,
        shipping_details: null,
        starting_balance: 0,
        statement_descriptor: null,
        status: 'draft',
        status_transitions: {
          finalized_at: null,
          marked_uncollectible_at: null,
          paid_at: null,
          voided_at: null,
        },
        subscription: null,
        subtotal: 0,
        subtotal_excluding_tax: 0,
        test_clock: null,
        total: 0,
        total_discount_amounts: [],
        total_excluding_tax: 0,
        total_pretax_credit_amounts: [],
        total_taxes: [],
        webhooks_delivered_at: null,
      };
    case 'subscriptions':
      return {
        application: null,
        application_fee_percent: null,
        automatic_tax: { disabled_reason: null, enabled: false, liability: null },
        billing_cycle_anchor: created,
        billing_cycle_anchor_config: null,
        billing_mode: { type: 'classic' },
        billing_schedules: [],
        billing_thresholds: null,
        cancel_at: null,
        cancel_at_period_end: false,
        canceled_at: null,
        cancellation_details: { comment: null, feedback: null, reason: null },
        collection_method: 'charge_automatically',
        currency: 'usd',
        customer_account: null,
        days_until_due: null,
        default_payment_method: null,
        default_source: null,
        default_tax_rates: [],
        description: null,
        discounts: [],
        ended_at: null,
        invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
        latest_invoice: null,
        managed_payments: null,
        next_pending_invoice_item_invoice: null,
        on_behalf_of: null,
        pause_collection: null,
        payment_settings: {
          payment_method_options: null,
          payment_method_types: null,
          save_default_payment_method: 'off',
        },
        pending_invoice_item_interval: null,
        pending_setup_intent: null,
        pending_update: null,
        schedule: null,
        start_date: created,
        status: 'active',
        test_clock: null,
        transfer_data: null,
        trial_end: null,
        trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
        trial_start: null,
      };
    default:
      return {};
  }
}

/** Stripe keeps events 30 days. */
const eventRetentionMs = 30 * 86_400_000;
/** "Under normal operating conditions, data is searchable in less than a minute": the worst case. */
const searchLagMs = 60_000;

/** Parameters each list takes besides paging and `created` (the reference's list parameters). */
const listParams: Record<string, string[]> = {
  customers: ['email', 'test_clock'],
  products: ['active', 'ids', 'shippable', 'url'],
  prices: ['active', 'currency', 'product', 'type', 'lookup_keys', 'recurring'],
  invoices: ['customer', 'status', 'subscription', 'collection_method', 'due_date'],
  subscriptions: [
    'customer',
    'price',
    'status',
    'collection_method',
    'current_period_end',
    'current_period_start',
    'test_clock',
    'automatic_tax',
  ],
};

export interface FakeStripe extends ConformanceFake {
  events: StripeEvent[];
  /** A change made at Stripe (the dashboard, another integration): the record and its event. */
  change(object: string, id: string, values: Record<string, unknown>): StripeEvent;
}

/** The fields each object's search takes (the reference's "query fields" pages). */
const searchFields: Record<string, string[]> = {
  customers: ['created', 'email', 'metadata', 'name', 'phone'],
  products: ['active', 'created', 'description', 'metadata', 'name', 'shippable', 'url'],
  prices: ['active', 'currency', 'lookup_key', 'metadata', 'product', 'type'],
  invoices: [
    'created',
    'currency',
    'customer',
    'metadata',
    'number',
    'receipt_number',
    'status',
    'subscription',
    'subtotal',
    'total',
  ],
  subscriptions: ['created', 'metadata', 'status'],
};

/** A field's value as a search compares it: text, case-insensitive. */
const searchText = (value: unknown): string | undefined =>
  value === null || value === undefined || typeof value === 'object'
    ? undefined
    : String(value).toLowerCase();

/**
 * `field:'value'` clauses joined with ` AND ` (at most 10), a backslash escaping the quote or itself
 * inside a value. Only the exact-match form Ferry sends; anything else, or a field the object's
 * search does not take, is refused as Stripe does.
 */
function parseSearchQuery(query: string, object: string): { field: string; value: string }[] {
  const clauses: { field: string; value: string }[] = [];
  let rest = query;
  const invalid = () => new FakeHttpError(400, `Invalid query: ${query}`, 'parameter_invalid_string');
  while (true) {
    const head = /^([a-z_]+):'/.exec(rest);
    if (!head) throw invalid();
    let i = head[0].length;
    let value = '';
    for (; i < rest.length && rest[i] !== "'"; i++) {
      if (rest[i] === '\\') i++;
      if (i >= rest.length) throw invalid();
      value += rest[i];
    }
    if (i >= rest.length) throw invalid();
    const field = head[1];
    if (!searchFields[object].includes(field) || field === 'metadata') {
      throw new FakeHttpError(
        400,
        `Field \`${field}\` is an unsupported search field for resource \`${object}\`.`,
        'parameter_invalid_string',
      );
    }
    clauses.push({ field, value });
    rest = rest.slice(i + 1);
    if (!rest) break;
    if (!rest.startsWith(' AND ')) throw invalid();
    rest = rest.slice(' AND '.length);
  }
  if (clauses.length > 10)
    throw new FakeHttpError(400, 'A query may have at most 10 clauses.', 'parameter_invalid_string');
  return clauses;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  interface Row {
    record: StripeRecord;
    deleted: boolean;
    order: number;
    /** What search sees: earlier versions (copies) and the live record, each from when it is searchable. */
    versions: { record: StripeRecord; fromMs: number }[];
  }
  const records = new Map<string, Map<string, Row>>(Object.keys(kinds).map((object) => [object, new Map()]));
  const events: StripeEvent[] = [];
  /** When each event shows in `/v1/events` (a change committed late shows late). */
  const eventVisibleFrom = new Map<string, number>();
  const addRow = (object: string, record: StripeRecord, createdMs: number) =>
    records.get(object)!.set(record.id, {
      record,
      deleted: false,
      order: ++order,
      versions: [{ record, fromMs: createdMs + searchLagMs }],
    });
  /** A new version of a row: search keeps seeing the old one until the new one is indexed. */
  const newVersion = (row: Row, fromMs: number) => {
    const newest = row.versions[row.versions.length - 1];
    newest.record = structuredClone(row.record);
    row.versions.push({ record: row.record, fromMs });
  };
  const idempotent = new Map<string, { params: string; status: number; body: unknown }>();
  let order = 0;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      error: {
        type:
          error.status === 401
            ? 'invalid_request_error'
            : error.status >= 500
              ? 'api_error'
              : 'invalid_request_error',
        ...(error.code && { code: error.code }),
        message:
          error.status === 401
            ? 'Invalid API Key provided: sk_test_****'
            : error.status === 429
              ? 'Too many requests hit the API too quickly.'
              : error.message,
        ...(error.status === 400 && { doc_url: 'https://docs.stripe.com/error-codes' }),
      },
    }),
    rateLimitCode: 'rate_limit',
  });

  const kindOf = (ctx: Context): ObjectKind => {
    const kind = kinds[ctx.params.object];
    if (!kind) throw new FakeHttpError(404, `Unrecognized request URL (${ctx.method}: ${ctx.path}).`);
    return kind;
  };
  const rowOf = (object: string, id: string) => {
    const row = records.get(object)!.get(id);
    if (!row || row.deleted)
      throw new FakeHttpError(404, `No such ${kinds[object].type}: '${id}'`, 'resource_missing');
    return row;
  };
  /** `created[gte|gt|lte|lt]` bounds (unix seconds) of a list, refused unless integers. */
  const createdBounds = (query: Record<string, unknown>) => {
    const bound = (name: string) => {
      const value = query[`created[${name}]`];
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || !/^\d+$/.test(value))
        throw new FakeHttpError(400, `Invalid timestamp: created[${name}]`, 'parameter_invalid_integer');
      return Number(value);
    };
    const [gte, gt, lte, lt] = ['gte', 'gt', 'lte', 'lt'].map(bound);
    const exact = query.created;
    if (exact !== undefined && (typeof exact !== 'string' || !/^\d+$/.test(exact)))
      throw new FakeHttpError(400, 'Invalid timestamp: created', 'parameter_invalid_integer');
    return (created: number) =>
      (gte === undefined || created >= gte) &&
      (gt === undefined || created > gt) &&
      (lte === undefined || created <= lte) &&
      (lt === undefined || created < lt) &&
      (exact === undefined || created === Number(exact));
  };

  const emit = (
    object: string,
    change: 'created' | 'updated' | 'deleted',
    record: StripeRecord,
    createdMs: number,
    previous?: Record<string, unknown>,
    idempotencyKey?: string,
  ): StripeEvent => {
    const event: StripeEvent = {
      id: `evt_${(++eventCounter).toString(36).padStart(22, '0')}`,
      object: 'event',
      api_version: '2024-06-20',
      created: seconds(createdMs),
      livemode: false,
      pending_webhooks: 0,
      request: { id: idempotencyKey ? `req_${eventCounter}` : null, idempotency_key: idempotencyKey ?? null },
      type: `${kinds[object].event}.${change}`,
      data: { object: structuredClone(record), ...(previous && { previous_attributes: previous }) },
    };
    events.push(event);
    return event;
  };

  /** Checks a create or update's parameters and returns them typed; Stripe refuses unknown ones. */
  const paramsOf = (kind: ObjectKind, body: unknown, creating: boolean): Record<string, unknown> => {
    const params = isPlainObject(body) ? body : {};
    for (const name of Object.keys(params)) {
      if (!kind.params.includes(name)) {
        throw new FakeHttpError(400, `Received unknown parameter: ${name}`, 'parameter_unknown');
      }
    }
    if (creating) {
      for (const name of kind.required) {
        if (params[name] === undefined || params[name] === '')
          throw new FakeHttpError(400, `Missing required param: ${name}.`, 'parameter_missing');
      }
    }
    if (params.metadata !== undefined && !isPlainObject(params.metadata) && params.metadata !== '') {
      throw new FakeHttpError(400, 'Invalid object: metadata', 'parameter_invalid_object');
    }
    return Object.fromEntries(Object.entries(params).map(([name, value]) => [name, typed(name, value)]));
  };

  const build = (object: string, values: Record<string, unknown>, createdMs: number): StripeRecord => {
    const kind = kinds[object];
    const created = seconds(createdMs);
    const record: StripeRecord = {
      id: newId(kind.prefix),
      object: kind.type,
      created,
      livemode: false,
      metadata: {},
    };
    // Every attribute the reference's object has, present and null (or its default) when unset,
    // as Stripe answers (stripe/openapi spec3, the `resources` of fixtures3.json).
    Object.assign(record, unsetAttributes(object, record.id, created));
    const { items, ...rest } = values;
    Object.assign(record, rest);
    if (object === 'prices' && typeof record.unit_amount === 'number')
      record.unit_amount_decimal = String(record.unit_amount);
    if (object === 'invoices') Object.assign(record, dueDateOf(record, record));
    if (object === 'subscriptions') {
      const list = Array.isArray(items) ? items : isPlainObject(items) ? Object.values(items) : [];
      if (!list.length) throw new FakeHttpError(400, 'Missing required param: items.', 'parameter_missing');
      record.items = {
        object: 'list',
        data: list.map((item) => ({
          id: newId('si'),
          object: 'subscription_item',
          price: { id: (item as any).price },
        })),
        has_more: false,
      };
    }
    return record;
  };

  /** Applies an update as Stripe does: metadata keys merged (an empty value unsets one). */
  const apply = (record: StripeRecord, given: Record<string, unknown>): Record<string, unknown> => {
    const values = record.object === 'invoice' ? dueDateOf(record, given) : given;
    const previous: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values)) {
      if (name === 'metadata') {
        const before = { ...(record.metadata as Record<string, string>) };
        const after = { ...before };
        for (const [key, item] of Object.entries(isPlainObject(value) ? value : {})) {
          if (item === '' || item === null) delete after[key];
          else after[key] = String(item);
        }
        if (JSON.stringify(before) !== JSON.stringify(after)) previous.metadata = before;
        record.metadata = after;
      } else if (JSON.stringify(record[name]) !== JSON.stringify(value)) {
        previous[name] = record[name] ?? null;
        record[name] = value;
      }
    }
    return previous;
  };

  /** Runs a POST once per Idempotency-Key: a retry gets the first answer, other parameters a 400. */
  const once = async (ctx: Context, run: () => { status: number; body: unknown }) => {
    const key = ctx.get('idempotency-key');
    const params = JSON.stringify({ path: ctx.path, body: ctx.request.body });
    if (key) {
      const earlier = idempotent.get(key);
      if (earlier) {
        if (earlier.params !== params) {
          throw new FakeHttpError(
            400,
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
            'idempotency_key_in_use',
          );
        }
        ctx.set('idempotent-replayed', 'true');
        ctx.status = earlier.status;
        ctx.body = earlier.body;
        return;
      }
    }
    const answer = run();
    if (key) idempotent.set(key, { params, ...answer });
    ctx.status = answer.status;
    ctx.body = answer.body;
  };

  const pageSizeOf = (ctx: Context): number => {
    const limit = ctx.query.limit === undefined ? 10 : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new FakeHttpError(
        400,
        'Invalid integer: limit must be between 1 and 100',
        'parameter_invalid_integer',
      );
    }
    return limit;
  };

  /** A page of a list sorted newest first, after `starting_after` (or before `ending_before`). */
  const page = <T extends { id: string }>(ctx: Context, items: T[], url: string, object: string) => {
    const limit = pageSizeOf(ctx);
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: 100 });
    let start = 0;
    let end = items.length;
    const after = ctx.query.starting_after;
    const before = ctx.query.ending_before;
    if (typeof after === 'string' && after) {
      const index = items.findIndex((item) => item.id === after);
      if (index < 0) throw new FakeHttpError(400, `No such ${object}: '${after}'`, 'resource_missing');
      start = index + 1;
    } else if (typeof before === 'string' && before) {
      const index = items.findIndex((item) => item.id === before);
      if (index < 0) throw new FakeHttpError(400, `No such ${object}: '${before}'`, 'resource_missing');
      end = index;
      start = Math.max(0, end - limit);
    }
    const data = items.slice(start, Math.min(end, start + limit));
    const more = typeof before === 'string' && before ? start > 0 : start + data.length < end;
    ctx.body = { object: 'list', url, has_more: more, data };
  };

  const router = fake.router;

  router.get('/v1/events', (ctx) => {
    const query = ctx.query as Record<string, string | string[] | undefined>;
    const types = Object.entries(query)
      .filter(([name]) => /^types\[\d*\]$/.test(name))
      .flatMap(([, value]) => (Array.isArray(value) ? value : [value!]));
    if (types.length > 20) throw new FakeHttpError(400, 'types: at most 20 event types', 'parameter_invalid');
    const bound = (name: string) => {
      const value = query[`created[${name}]`];
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || !/^\d+$/.test(value))
        throw new FakeHttpError(400, `Invalid timestamp: created[${name}]`, 'parameter_invalid_integer');
      return Number(value);
    };
    const [gte, gt, lte, lt] = ['gte', 'gt', 'lte', 'lt'].map(bound);
    const type = typeof query.type === 'string' ? query.type : undefined;
    const now = fake.now();
    const found = events
      .map((event, index) => ({ event, index }))
      // "List events, going back up to 30 days"; a late change shows only once committed.
      .filter(
        ({ event }) =>
          event.created * 1000 >= now - eventRetentionMs && (eventVisibleFrom.get(event.id) ?? 0) <= now,
      )
      .filter(({ event }) => (!types.length || types.includes(event.type)) && (!type || event.type === type))
      .filter(
        ({ event: { created } }) =>
          (gte === undefined || created >= gte) &&
          (gt === undefined || created > gt) &&
          (lte === undefined || created <= lte) &&
          (lt === undefined || created < lt),
      )
      .sort((a, b) => b.event.created - a.event.created || b.index - a.index)
      .map(({ event }) => event);
    page(ctx, found, '/v1/events', 'event');
  });

  router.post('/v1/webhook_endpoints', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const enabled = Array.isArray(body.enabled_events) ? body.enabled_events.map(String) : [];
    if (typeof body.url !== 'string' || !body.url)
      throw new FakeHttpError(400, 'Missing required param: url.', 'parameter_missing');
    if (!enabled.length)
      throw new FakeHttpError(400, 'Missing required param: enabled_events.', 'parameter_missing');
    const endpoint = {
      id: newId('we'),
      object: 'webhook_endpoint' as const,
      url: body.url,
      enabled_events: enabled,
      secret: `whsec_${randomBytes(24).toString('base64url')}`,
      status: 'enabled',
    };
    stripeWebhookEndpoints.set(endpoint.id, endpoint);
    ctx.body = endpoint;
  });
  router.post('/v1/webhook_endpoints/:id', (ctx) => {
    const endpoint = stripeWebhookEndpoints.get(ctx.params.id);
    if (!endpoint)
      throw new FakeHttpError(404, `No such webhook endpoint: '${ctx.params.id}'`, 'resource_missing');
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (typeof body.url === 'string') endpoint.url = body.url;
    if (Array.isArray(body.enabled_events)) endpoint.enabled_events = body.enabled_events.map(String);
    // The secret is returned only at creation.
    const { secret: _secret, ...shown } = endpoint;
    ctx.body = shown;
  });
  router.delete('/v1/webhook_endpoints/:id', (ctx) => {
    if (!stripeWebhookEndpoints.delete(ctx.params.id))
      throw new FakeHttpError(404, `No such webhook endpoint: '${ctx.params.id}'`, 'resource_missing');
    ctx.body = { id: ctx.params.id, object: 'webhook_endpoint', deleted: true };
  });

  router.get('/v1/:object', (ctx) => {
    const kind = kindOf(ctx);
    const object = ctx.params.object;
    const known = ['limit', 'starting_after', 'ending_before', 'created', ...listParams[object]];
    for (const name of Object.keys(ctx.query)) {
      const base = name.replace(/\[.*$/, '');
      if (!known.includes(base) && base !== 'expand') {
        throw new FakeHttpError(400, `Received unknown parameter: ${name}`, 'parameter_unknown');
      }
    }
    const inWindow = createdBounds(ctx.query as Record<string, unknown>);
    const status = typeof ctx.query.status === 'string' ? ctx.query.status : undefined;
    const equal = (name: string) =>
      typeof ctx.query[name] === 'string' && object !== 'subscriptions' ? String(ctx.query[name]) : undefined;
    const live = [...records.get(object)!.values()]
      .filter((row) => !row.deleted && inWindow(row.record.created))
      .filter((row) =>
        ['customer', 'email', 'product', 'currency', 'active'].every((name) => {
          const wanted = name === 'customer' && object === 'subscriptions' ? ctx.query.customer : equal(name);
          return typeof wanted !== 'string' || String(row.record[name]) === wanted;
        }),
      )
      // Subscriptions: canceled ones are listed only with `status=all` (or `canceled`).
      .filter(
        (row) =>
          object !== 'subscriptions' ||
          status === 'all' ||
          (status ? row.record.status === status : row.record.status !== 'canceled'),
      )
      .sort((a, b) => b.record.created - a.record.created || b.order - a.order)
      .map((row) => row.record);
    page(ctx, live, `/v1/${object}`, kind.type);
  });

  // Search (https://docs.stripe.com/search): `query` in the search query language, `limit`, and the
  // `page` cursor of the previous answer's `next_page`; answered `{object: "search_result", data,
  // has_more, next_page}`. Registered before `/v1/:object/:id`, which would take "search" as an id.
  router.get('/v1/:object/search', (ctx) => {
    kindOf(ctx);
    const object = ctx.params.object;
    const query = typeof ctx.query.query === 'string' ? ctx.query.query : '';
    if (!query) throw new FakeHttpError(400, 'Missing required param: query.', 'parameter_missing');
    const clauses = parseSearchQuery(query, object);
    const limit = pageSizeOf(ctx);
    const pageParam = typeof ctx.query.page === 'string' ? ctx.query.page : undefined;
    const start = pageParam === undefined ? 0 : Number(Buffer.from(pageParam, 'base64url').toString());
    if (!Number.isInteger(start) || start < 0)
      throw new FakeHttpError(400, `Invalid page: ${pageParam}`, 'parameter_invalid');
    // The index: each row as its newest searchable version shows it (deletions after a minute too).
    const now = fake.now();
    const found = [...records.get(object)!.values()]
      .map((row) => ({ row, seen: [...row.versions].reverse().find((version) => version.fromMs <= now) }))
      .filter(
        ({ row, seen }) => seen && !(row.deleted && row.versions[row.versions.length - 1].fromMs <= now),
      )
      .filter(({ seen }) =>
        clauses.every(({ field, value }) => searchText(seen!.record[field]) === value.toLowerCase()),
      )
      .sort((a, b) => b.row.record.created - a.row.record.created || b.row.order - a.row.order)
      .map(({ seen }) => seen!.record);
    fake.logListing(ctx, { object: `${object}/search`, pageSize: limit, maxPageSize: 100 });
    const data = found.slice(start, start + limit);
    const more = start + data.length < found.length;
    ctx.body = {
      object: 'search_result',
      url: `/v1/${object}/search`,
      has_more: more,
      data,
      next_page: more ? Buffer.from(String(start + data.length)).toString('base64url') : null,
    };
  });

  router.get('/v1/:object/:id', (ctx) => {
    const kind = kindOf(ctx);
    const row = records.get(ctx.params.object)!.get(ctx.params.id);
    // A deleted customer still answers, as `{id, object, deleted: true}` (the reference's
    // `deleted_customer`); other deleted objects are gone.
    if (row?.deleted && ctx.params.object === 'customers') {
      ctx.body = { id: row.record.id, object: kind.type, deleted: true };
      return;
    }
    ctx.body = rowOf(ctx.params.object, ctx.params.id).record;
  });

  router.post('/v1/:object', (ctx) =>
    once(ctx, () => {
      const kind = kindOf(ctx);
      const object = ctx.params.object;
      const now = fake.now();
      const record = build(object, paramsOf(kind, ctx.request.body, true), now);
      addRow(object, record, now);
      emit(object, 'created', record, now, undefined, ctx.get('idempotency-key') || undefined);
      return { status: 200, body: record };
    }),
  );

  router.post('/v1/:object/:id', (ctx) =>
    once(ctx, () => {
      const kind = kindOf(ctx);
      const object = ctx.params.object;
      const row = rowOf(object, ctx.params.id);
      const values = paramsOf(kind, ctx.request.body, false);
      const now = fake.now();
      newVersion(row, now + searchLagMs);
      const previous = apply(row.record, values);
      if (row.record.object === 'product') row.record.updated = seconds(now);
      if (Object.keys(previous).length) emit(object, 'updated', row.record, now, previous);
      return { status: 200, body: row.record };
    }),
  );

  router.delete('/v1/:object/:id', (ctx) => {
    const kind = kindOf(ctx);
    const object = ctx.params.object;
    if (kind.deletable === 'no')
      throw new FakeHttpError(404, `Unrecognized request URL (DELETE: ${ctx.path}).`);
    const row = rowOf(object, ctx.params.id);
    if (kind.deletable === 'draft' && row.record.status !== 'draft') {
      throw new FakeHttpError(400, 'You can only delete draft invoices.', 'invoice_not_editable');
    }
    remove(object, row, fake.now());
    ctx.body = { id: row.record.id, object: kind.type, deleted: true };
  });

  /**
   * Deleting as Stripe does: customers, products and draft invoices are deleted
   * (`<object>.deleted`); a price cannot be deleted, only archived (`active: false`,
   * `price.updated`); a subscription is canceled (`status: canceled`,
   * `customer.subscription.deleted`) and leaves the default list.
   */
  function remove(object: string, row: Row, atMs: number): void {
    newVersion(row, atMs + searchLagMs);
    if (object === 'prices') {
      const previous = apply(row.record, { active: false });
      emit(object, 'updated', row.record, atMs, previous);
      return;
    }
    if (object === 'subscriptions') {
      const previous = { status: row.record.status, canceled_at: row.record.canceled_at ?? null };
      Object.assign(row.record, { status: 'canceled', canceled_at: seconds(atMs), ended_at: seconds(atMs) });
      emit(object, 'deleted', row.record, atMs, previous);
      return;
    }
    row.deleted = true;
    emit(object, 'deleted', row.record, atMs);
  }

  await fake.start();

  const fixtures: Record<string, Record<string, unknown>> = {
    customers: {},
    products: {},
    prices: { product: stripeFixture.product, currency: 'usd', unit_amount: 1500 },
    invoices: { customer: stripeFixture.customer },
    subscriptions: { customer: stripeFixture.customer, items: [{ price: stripeFixture.price }] },
  };
  const seed = (object: string, modifiedTimes: number[]): string[] =>
    modifiedTimes.map((ms) => {
      const record = build(
        object,
        { ...fixtures[object], ...(object === 'products' && { name: 'Seeded' }) },
        ms,
      );
      addRow(object, record, ms);
      emit(object, 'created', record, ms);
      return record.id;
    });

  const change = (
    object: string,
    id: string,
    values: Record<string, unknown>,
    atMs = fake.now(),
    visibleFromMs?: number,
  ) => {
    const row = rowOf(object, id);
    newVersion(row, (visibleFromMs ?? atMs) + searchLagMs);
    const previous = apply(row.record, values);
    if (row.record.object === 'product') row.record.updated = seconds(atMs);
    const event = emit(object, 'updated', row.record, atMs, previous);
    if (visibleFromMs !== undefined) eventVisibleFrom.set(event.id, visibleFromMs);
    return event;
  };

  return {
    url: fake.url,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    requests: fake.requests,
    events,
    seed,
    change: (object, id, values) => change(object, id, values),
    setClock: (now) => fake.setClock(now),
    touch(object, id, modifiedMs, options) {
      change(object, id, { metadata: { touched: String(modifiedMs) } }, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      remove(object, rowOf(object, id), atMs);
    },
    stored(object, id) {
      const row = records.get(object)!.get(id);
      return row && !row.deleted ? row.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
