import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Stripe's API (https://docs.stripe.com/api) as its reference describes it:
 * customers, products, prices, invoices and subscriptions under `/v1/<object>`, listed newest first
 * with `limit` (1–100), `starting_after` and `{object: "list", data, has_more}`; form-encoded writes
 * (`metadata[key]`, `items[0][price]`) answered with the object, unknown parameters refused,
 * `Idempotency-Key` replaying the first answer (and refusing other parameters under the same key);
 * deletions answered `{id, object, deleted: true}` (an invoice only while draft); every change
 * recorded as an event (`<object>.created/updated/deleted`, `data.object`, `data.previous_attributes`)
 * listed by `GET /v1/events` with `types[]` and `created[gte|gt|lte|lt]`; webhook endpoints issuing a
 * `whsec_` secret; errors as `{error: {type, code, message}}`. The 30-day retention of events is not
 * modelled: the conformance suite seeds records in the past. Only what Ferry uses.
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
  const records = new Map<string, Map<string, { record: StripeRecord; deleted: boolean; order: number }>>(
    Object.keys(kinds).map((object) => [object, new Map()]),
  );
  const events: StripeEvent[] = [];
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
    if (object === 'customers') Object.assign(record, { balance: 0, delinquent: false, currency: null });
    if (object === 'products') Object.assign(record, { active: true, images: [], updated: created });
    if (object === 'prices')
      Object.assign(record, { active: true, type: 'one_time', billing_scheme: 'per_unit' });
    if (object === 'invoices')
      Object.assign(record, {
        status: 'draft',
        amount_due: 0,
        amount_paid: 0,
        total: 0,
        number: null,
        currency: 'usd',
      });
    if (object === 'subscriptions')
      Object.assign(record, { status: 'active', start_date: created, currency: 'usd' });
    const { items, ...rest } = values;
    Object.assign(record, rest);
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
  const apply = (record: StripeRecord, values: Record<string, unknown>): Record<string, unknown> => {
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
    if (record.object === 'product') record.updated = seconds(Date.now());
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

  /** A page of a list sorted newest first, after `starting_after`. */
  const page = <T extends { id: string }>(ctx: Context, items: T[], url: string, object: string) => {
    const limit = pageSizeOf(ctx);
    let start = 0;
    const after = ctx.query.starting_after;
    if (typeof after === 'string' && after) {
      const index = items.findIndex((item) => item.id === after);
      if (index < 0) throw new FakeHttpError(400, `No such ${object}: '${after}'`, 'resource_missing');
      start = index + 1;
    }
    const data = items.slice(start, start + limit);
    ctx.body = { object: 'list', url, has_more: start + data.length < items.length, data };
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
    const found = events
      .map((event, index) => ({ event, index }))
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
    const status = typeof ctx.query.status === 'string' ? ctx.query.status : undefined;
    const live = [...records.get(object)!.values()]
      .filter((row) => !row.deleted)
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
    const found = [...records.get(object)!.values()]
      .filter((row) => !row.deleted)
      .filter((row) =>
        clauses.every(({ field, value }) => searchText(row.record[field]) === value.toLowerCase()),
      )
      .sort((a, b) => b.record.created - a.record.created || b.order - a.order)
      .map((row) => row.record);
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
    kindOf(ctx);
    ctx.body = rowOf(ctx.params.object, ctx.params.id).record;
  });

  router.post('/v1/:object', (ctx) =>
    once(ctx, () => {
      const kind = kindOf(ctx);
      const object = ctx.params.object;
      const record = build(object, paramsOf(kind, ctx.request.body, true), Date.now());
      records.get(object)!.set(record.id, { record, deleted: false, order: ++order });
      emit(object, 'created', record, Date.now(), undefined, ctx.get('idempotency-key') || undefined);
      return { status: 200, body: record };
    }),
  );

  router.post('/v1/:object/:id', (ctx) =>
    once(ctx, () => {
      const kind = kindOf(ctx);
      const object = ctx.params.object;
      const row = rowOf(object, ctx.params.id);
      const previous = apply(row.record, paramsOf(kind, ctx.request.body, false));
      if (Object.keys(previous).length) emit(object, 'updated', row.record, Date.now(), previous);
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
    row.deleted = true;
    emit(object, 'deleted', row.record, Date.now());
    ctx.body = { id: row.record.id, object: kind.type, deleted: true };
  });

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
      records.get(object)!.set(record.id, { record, deleted: false, order: ++order });
      emit(object, 'created', record, ms);
      return record.id;
    });

  const change = (object: string, id: string, values: Record<string, unknown>, atMs = Date.now()) => {
    const row = rowOf(object, id);
    const previous = apply(row.record, values);
    return emit(object, 'updated', row.record, atMs, previous);
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
    touch(object, id, modifiedMs) {
      change(object, id, { metadata: { touched: String(modifiedMs) } }, modifiedMs);
    },
    stored(object, id) {
      const row = records.get(object)!.get(id);
      return row && !row.deleted ? row.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
