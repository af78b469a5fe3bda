import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { GraphqlFieldError, GraphqlSyntaxError, parseGraphql, project } from './graphql-lite.js';

/**
 * A local stand-in for Shopify's Admin GraphQL API (2025-10) as its public reference describes it:
 * one endpoint, `POST /admin/api/2025-10/graphql.json`, authenticated by `X-Shopify-Access-Token`;
 * `customers`, `products` and `orders` connections with `first` (≤ 250), `after`, `sortKey` and a
 * search `query` (`updated_at:>='…' AND updated_at:<'…'`, `field:'value'`, an unknown field ignored
 * with a warning in `extensions.search`), answering `nodes` and
 * `pageInfo {hasNextPage endCursor}`; `node(id:)`; `metafieldDefinitions(ownerType:)`; customer
 * and product create / update / delete and `orderUpdate`, with failures as `userErrors`; query
 * errors and throttling inside a 200 answer (`errors[].extensions.code`), a 401 with
 * `{errors: "[API] Invalid API key…"}`, and a 429 with `Retry-After`. Only what Ferry uses.
 */

export const SHOPIFY_VERSION = '2025-10';
const endpoint = `/admin/api/${SHOPIFY_VERSION}/graphql.json`;

type ShopifyRecord = Record<string, unknown> & { __typename: string; id: string; updatedAt: string };

export interface FakeShopify extends ConformanceFake {
  /** The next GraphQL request is answered 200 with a THROTTLED error, as Shopify throttles queries. */
  throttleNext(count: number): void;
  /** Sets a record's fields, as an edit in Shopify's admin would. */
  edit(object: string, id: string, values: Record<string, unknown>): void;
}

const typeOf: Record<string, string> = { customers: 'Customer', products: 'Product', orders: 'Order' };
const objectOfType = Object.fromEntries(Object.entries(typeOf).map(([object, type]) => [type, object]));

/** What each mutation's input may set (a subset of CustomerInput, ProductCreateInput/ProductUpdateInput, OrderInput). */
const writable: Record<string, string[]> = {
  customers: ['firstName', 'lastName', 'email', 'phone', 'note', 'tags', 'taxExempt', 'metafields'],
  products: ['title', 'handle', 'descriptionHtml', 'vendor', 'productType', 'status', 'tags', 'metafields'],
  orders: ['email', 'note', 'tags', 'metafields'],
};

const definitions: Record<string, Record<string, unknown>[]> = {
  CUSTOMER: [
    {
      namespace: 'custom',
      key: 'loyalty_tier',
      name: 'Loyalty tier',
      type: { name: 'single_line_text_field' },
      validations: [{ name: 'choices', value: '["Gold","Silver"]' }],
    },
    { namespace: 'custom', key: 'birthday', name: 'Birthday', type: { name: 'date' }, validations: [] },
  ],
  PRODUCT: [
    {
      namespace: 'specs',
      key: 'weight_kg',
      name: 'Weight (kg)',
      type: { name: 'number_decimal' },
      validations: [],
    },
  ],
  ORDER: [],
};

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ last: offset })).toString('base64url');
}

function decodeCursor(cursor: string): number {
  try {
    const offset = (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { last?: unknown }).last;
    if (typeof offset === 'number' && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw new GraphqlFieldError('Invalid cursor for current pagination.', 'BAD_USER_INPUT');
}

/**
 * The search fields each connection's `query` takes, as far as the fake keeps them (the reference's
 * `query` argument lists more), with the record field each one reads.
 */
const searchable: Record<string, Record<string, string>> = {
  customers: {
    email: 'email',
    phone: 'phone',
    first_name: 'firstName',
    last_name: 'lastName',
    state: 'state',
  },
  products: {
    title: 'title',
    handle: 'handle',
    vendor: 'vendor',
    product_type: 'productType',
    status: 'status',
  },
  orders: { name: 'name', email: 'email' },
};

/** A search warning, as Shopify returns in `extensions.search` when it ignores part of a query. */
export interface SearchWarning {
  field: string;
  message: string;
  code: string;
}

/**
 * Shopify's search syntax, as far as Ferry writes it: terms joined by AND, each `updated_at` with a
 * comparator and a quoted time, or `field:'value'` (a backslash escaping the next character) for a
 * field the connection searches, matched case-insensitively. An unknown field's term is ignored
 * with a warning, as Shopify does, rather than refused.
 */
function searchFilter(
  object: string,
  query: unknown,
  warnings: SearchWarning[],
): (record: ShopifyRecord) => boolean {
  if (query === undefined || query === null || query === '') return () => true;
  const tests: ((record: ShopifyRecord) => boolean)[] = [];
  let rest = String(query);
  while (rest) {
    const range = /^updated_at:(>=|<=|>|<)'([^']+)'/.exec(rest);
    if (range) {
      const at = Date.parse(range[2]);
      if (Number.isNaN(at)) throw new GraphqlFieldError(`Unsupported search term in the fake: ${range[0]}`);
      const op = range[1];
      tests.push((record) => {
        const time = Date.parse(record.updatedAt);
        return op === '>=' ? time >= at : op === '>' ? time > at : op === '<=' ? time <= at : time < at;
      });
      rest = rest.slice(range[0].length);
    } else {
      const head = /^(\w+):'/.exec(rest);
      if (!head) throw new GraphqlFieldError(`Unsupported search term in the fake: ${rest}`);
      let i = head[0].length;
      let value = '';
      for (; i < rest.length && rest[i] !== "'"; i++) {
        if (rest[i] === '\\') i++;
        value += rest[i] ?? '';
      }
      if (i >= rest.length) throw new GraphqlFieldError(`Unterminated search value: ${rest}`);
      const field = searchable[object][head[1]];
      if (field) {
        tests.push((record) => String(record[field] ?? '').toLowerCase() === value.toLowerCase());
      } else {
        warnings.push({
          field: head[1],
          message: 'Invalid search field for this query.',
          code: 'invalid_field',
        });
      }
      rest = rest.slice(i + 1);
    }
    if (rest && !rest.startsWith(' AND ')) throw new GraphqlFieldError(`Unsupported search syntax: ${rest}`);
    rest = rest.slice(' AND '.length);
  }
  return (record) => tests.every((test) => test(record));
}

export async function startFakeShopify(): Promise<FakeShopify> {
  const records = new Map<string, ShopifyRecord[]>(Object.keys(typeOf).map((object) => [object, []]));
  const metafieldValues = new Map<string, { namespace: string; key: string; value: string }[]>();
  let nextId = 1001;
  let throttled = 0;
  /** The current request's search warnings. */
  let warnings: SearchWarning[] = [];

  const fake = new FakeProvider({
    credentialOf: (ctx: Context) => ctx.get('x-shopify-access-token') || undefined,
    errorBody: (error) =>
      error.status === 401
        ? { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' }
        : error.status === 429
          ? { errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }] }
          : { errors: error.message },
  });

  const live = (object: string) => records.get(object)!;
  const find = (id: unknown): [string, ShopifyRecord] | undefined => {
    const type = /^gid:\/\/shopify\/(\w+)\/\d+$/.exec(String(id))?.[1];
    const object = type && objectOfType[type];
    const record = object ? live(object).find((r) => r.id === id) : undefined;
    return record && [object!, record];
  };

  const make = (object: string, values: Record<string, unknown>, modifiedMs: number): ShopifyRecord => {
    const id = `gid://shopify/${typeOf[object]}/${nextId++}`;
    const common = {
      __typename: typeOf[object],
      id,
      createdAt: iso(modifiedMs),
      updatedAt: iso(modifiedMs),
      tags: [],
    };
    const shape: Record<string, Record<string, unknown>> = {
      customers: {
        firstName: null,
        lastName: null,
        email: null,
        phone: null,
        note: null,
        state: 'DISABLED',
        verifiedEmail: false,
        taxExempt: false,
        numberOfOrders: '0',
      },
      products: {
        title: null,
        handle: null,
        descriptionHtml: '',
        vendor: 'Acme',
        productType: '',
        status: 'ACTIVE',
        totalInventory: 0,
        publishedAt: null,
      },
      orders: {
        name: `#${nextId}`,
        email: null,
        note: null,
        currencyCode: 'USD',
        displayFinancialStatus: 'PAID',
        displayFulfillmentStatus: 'UNFULFILLED',
        test: false,
        processedAt: iso(modifiedMs),
        cancelledAt: null,
        closedAt: null,
      },
    };
    const record = { ...common, ...shape[object], ...values } as ShopifyRecord;
    // A connection of the record's metafields (first page only: enough for the fake).
    record.metafields = (args: Record<string, unknown>) => ({
      nodes: (metafieldValues.get(id) ?? []).slice(0, Number(args.first ?? 50)),
      pageInfo: { hasNextPage: false, endCursor: null },
    });
    live(object).push(record);
    return record;
  };

  const connection = (object: string) => (args: Record<string, unknown>) => {
    const first = Number(args.first);
    if (!Number.isInteger(first) || first < 1 || first > 250) {
      throw new GraphqlFieldError('The first argument must be between 1 and 250.', 'BAD_USER_INPUT');
    }
    const matches = searchFilter(object, args.query, warnings);
    const found = live(object)
      .filter(matches)
      .sort((a, b) =>
        args.sortKey === 'UPDATED_AT'
          ? Date.parse(a.updatedAt) - Date.parse(b.updatedAt) || a.id.localeCompare(b.id)
          : 0,
      );
    const offset = typeof args.after === 'string' ? decodeCursor(args.after) : 0;
    const nodes = found.slice(offset, offset + first);
    const end = offset + nodes.length;
    return {
      nodes,
      pageInfo: { hasNextPage: end < found.length, endCursor: nodes.length ? encodeCursor(end) : null },
    };
  };

  const userError = (field: string[], message: string) => ({ userErrors: [{ field, message }] });

  const setValues = (object: string, record: ShopifyRecord, input: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(input)) {
      if (name === 'id') continue;
      if (name === 'metafields') {
        const list = metafieldValues.get(record.id) ?? [];
        for (const entry of value as { namespace: string; key: string; value: string }[]) {
          const at = list.findIndex((m) => m.namespace === entry.namespace && m.key === entry.key);
          if (at >= 0) list.splice(at, 1);
          list.push({ namespace: entry.namespace, key: entry.key, value: entry.value });
        }
        metafieldValues.set(record.id, list);
        continue;
      }
      record[name] = value;
    }
    record.updatedAt = iso(Date.now());
    return object;
  };

  /** GraphQL variable coercion: a member the input type does not define fails the whole request. */
  const checkInput = (object: string, inputType: string, input: unknown): Record<string, unknown> => {
    if (!input || typeof input !== 'object') {
      throw new GraphqlFieldError(
        `Variable of type ${inputType}! was provided invalid value`,
        'INVALID_VARIABLE',
      );
    }
    for (const name of Object.keys(input)) {
      if (name !== 'id' && !writable[object].includes(name)) {
        throw new GraphqlFieldError(
          `Variable $input of type ${inputType}! was provided invalid value for ${name} (Field is not defined on ${inputType})`,
          'INVALID_VARIABLE',
        );
      }
    }
    return input as Record<string, unknown>;
  };

  const update = (object: string, payload: string, inputType: string) => (args: Record<string, unknown>) => {
    const input = checkInput(object, inputType, args.input ?? args.product);
    const found = find(input.id);
    if (!found || found[0] !== object)
      return { [payload]: null, ...userError(['id'], `${typeOf[object]} does not exist`) };
    setValues(object, found[1], input);
    return { [payload]: found[1], userErrors: [] };
  };

  const remove = (object: string, payload: string) => (args: Record<string, unknown>) => {
    const id = (args.input as { id?: unknown } | undefined)?.id;
    const found = find(id);
    if (!found || found[0] !== object)
      return { [payload]: null, ...userError(['id'], `${typeOf[object]} does not exist`) };
    records.set(
      object,
      live(object).filter((record) => record !== found[1]),
    );
    return { [payload]: id, userErrors: [] };
  };

  const queryRoot = {
    __typename: 'QueryRoot',
    customers: connection('customers'),
    products: connection('products'),
    orders: connection('orders'),
    node: (args: Record<string, unknown>) => find(args.id)?.[1] ?? null,
    metafieldDefinitions: (args: Record<string, unknown>) => {
      const list = definitions[String(args.ownerType)];
      if (!list)
        throw new GraphqlFieldError(
          `Argument 'ownerType' has an invalid value (${String(args.ownerType)})`,
          'argumentLiteralsIncompatible',
        );
      return { nodes: list, pageInfo: { hasNextPage: false, endCursor: null } };
    },
  };

  const mutationRoot = {
    __typename: 'Mutation',
    customerCreate: (args: Record<string, unknown>) => {
      const input = checkInput('customers', 'CustomerInput', args.input);
      if (!input.email && !input.phone && !input.firstName && !input.lastName) {
        return {
          customer: null,
          ...userError(['customer'], 'Customer must have a name, phone number or email address'),
        };
      }
      const record = make('customers', {}, Date.now());
      setValues('customers', record, input);
      return { customer: record, userErrors: [] };
    },
    customerUpdate: update('customers', 'customer', 'CustomerInput'),
    customerDelete: remove('customers', 'deletedCustomerId'),
    productCreate: (args: Record<string, unknown>) => {
      const input = checkInput('products', 'ProductCreateInput', args.product);
      if (typeof input.title !== 'string' || !input.title.trim()) {
        return { product: null, ...userError(['title'], "Title can't be blank") };
      }
      const record = make('products', {}, Date.now());
      setValues('products', record, input);
      return { product: record, userErrors: [] };
    },
    productUpdate: update('products', 'product', 'ProductUpdateInput'),
    productDelete: remove('products', 'deletedProductId'),
    orderUpdate: update('orders', 'order', 'OrderInput'),
  };

  fake.router.post(endpoint, (ctx) => {
    if (throttled > 0) {
      throttled--;
      ctx.body = {
        errors: [
          {
            message: 'Throttled',
            extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
          },
        ],
        extensions: {
          cost: {
            requestedQueryCost: 252,
            actualQueryCost: null,
            throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 10, restoreRate: 100 },
          },
        },
      };
      return;
    }
    const body = (ctx.request.body ?? {}) as { query?: unknown; variables?: unknown };
    if (typeof body.query !== 'string') throw new FakeHttpError(400, 'Parameter Missing or Invalid');
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    try {
      const document = parseGraphql(body.query);
      const root = document.operation === 'mutation' ? mutationRoot : queryRoot;
      warnings = [];
      const data = project(root, document.selections, variables);
      ctx.body = {
        data,
        ...(warnings.length && {
          extensions: { search: [{ path: ['records'], query: variables.query, warnings }] },
        }),
      };
    } catch (error) {
      if (!(error instanceof GraphqlFieldError || error instanceof GraphqlSyntaxError)) throw error;
      const code = error instanceof GraphqlFieldError ? error.code : 'parseError';
      ctx.body = { errors: [{ message: error.message, ...(code && { extensions: { code } }) }] };
    }
  });

  await fake.start();

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    requests: fake.requests,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    throttleNext(count) {
      throttled += count;
    },
    seed(object, modifiedTimes) {
      return modifiedTimes.map((ms, index) => {
        const values: Record<string, Record<string, unknown>> = {
          customers: { firstName: 'Ada', lastName: `Customer ${index}`, email: `ada${nextId}@example.com` },
          products: { title: `Product ${nextId}`, handle: `product-${nextId}` },
          orders: { email: `buyer${nextId}@example.com`, note: 'Gift wrap' },
        };
        const record = make(object, values[object], ms);
        metafieldValues.set(
          record.id,
          object === 'customers' ? [{ namespace: 'custom', key: 'loyalty_tier', value: 'Gold' }] : [],
        );
        return record.id;
      });
    },
    edit(object, id, values) {
      const record = live(object).find((r) => r.id === id);
      if (!record) throw new Error(`no ${object} ${id}`);
      Object.assign(record, values);
    },
    touch(object, id, modifiedMs) {
      const record = live(object).find((r) => r.id === id);
      if (!record) throw new Error(`no ${object} ${id}`);
      record.updatedAt = iso(modifiedMs);
    },
    stored(object, id) {
      const record = live(object).find((r) => r.id === id);
      return record && { ...record, metafields: metafieldValues.get(id) ?? [] };
    },
    stop: () => fake.stop(),
  };
}
