import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import {
  GraphqlFieldError,
  GraphqlSyntaxError,
  parseGraphql,
  project,
  queryCost,
  type FieldSelection,
  type Selection,
} from './graphql-lite.js';
import { shopifyWebhookRoots } from './shopify-webhooks.js';
import { VersionedStore } from './versions.js';

/**
 * A local stand-in for Shopify's Admin GraphQL API (2025-10) as its public reference
 * (shopify.dev/docs/api/admin-graphql/2025-10, /docs/api/usage/search-syntax,
 * /docs/apps/build/apis/graphql-admin/rate-limits) describes it:
 *
 * - One endpoint, `POST /admin/api/2025-10/graphql.json`, authenticated by
 *   `X-Shopify-Access-Token`.
 * - `customers`, `products` and `orders` connections: `first`/`last` (at most 250), `after`,
 *   `reverse`, `sortKey` (`ID` by default; `UPDATED_AT`, `CREATED_AT`…; ties by id), a search
 *   `query` (`updated_at:>='…'`, `created_at:<…`, `field:'value'`, terms joined by AND; an unknown
 *   field ignored with a warning in `extensions.search`), answering `nodes`/`edges` and
 *   `pageInfo`; a cursor names the last node's sort value and id, so changes between pages shift
 *   nothing. Times to the second.
 * - `node(id:)`; `metafieldDefinitions(ownerType:)`; customer and product create / update /
 *   delete and `orderUpdate`, with failures as `userErrors`; a deleted record is gone (`node`
 *   answers null).
 * - Deletions revealed by `events(query: "action:destroy AND subject_type:PRODUCT …")`
 *   (BasicEvent `action`, `subjectType`, `subjectId`, `createdAt`; events appear some seconds
 *   after the action, 60 s here) and, for products, the deprecated `deletionEvents`.
 * - Calculated query cost: objects 1, scalars 0, a connection 2 + its page size × what it
 *   selects; a query above 1,000 points refused (`MAX_COST_EXCEEDED`); every answer carries
 *   `extensions.cost` with the bucket (2,000 points, 100 restored per second).
 * - Query errors and throttling inside a 200 answer (`errors[].extensions.code`), a 401 with
 *   `{errors: "[API] Invalid API key…"}`, and a 429 with `Retry-After`. Only what Ferry uses.
 * - Webhook subscriptions and their deliveries: see shopify-webhooks.ts.
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

/** A cursor, as Shopify's read: the last node's id and its value of the sort key. */
interface Cursor {
  last_id: number;
  last_value: string | number;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64');
}

function decodeCursor(text: string): Cursor {
  try {
    const cursor = JSON.parse(Buffer.from(text, 'base64').toString()) as Partial<Cursor>;
    if (typeof cursor.last_id === 'number' && cursor.last_value !== undefined) return cursor as Cursor;
  } catch {
    // fall through
  }
  throw new GraphqlFieldError('Invalid cursor for current pagination.', 'BAD_USER_INPUT');
}

/** The numeric id of a gid. */
function numericId(gid: string): number {
  return Number(gid.slice(gid.lastIndexOf('/') + 1));
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

/** One term of a search query: `field:value`, `field:>value`, quoted or not. */
interface SearchTerm {
  field: string;
  op: '' | '>' | '>=' | '<' | '<=';
  value: string;
}

/**
 * Shopify's search syntax, as far as the fake reads it: terms joined by `AND` (or a space), each
 * `field:` with an optional comparator and a value, quoted ('…' or "…", a backslash escaping the
 * next character) or bare.
 */
function parseSearch(query: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  let rest = query.trim();
  while (rest) {
    const head = /^(\w+):(>=|<=|>|<)?/.exec(rest);
    if (!head) throw new GraphqlFieldError(`Unsupported search syntax in the fake: ${rest}`);
    let i = head[0].length;
    let value = '';
    const quote = rest[i] === "'" || rest[i] === '"' ? rest[i] : undefined;
    if (quote) {
      for (i++; i < rest.length && rest[i] !== quote; i++) {
        if (rest[i] === '\\') i++;
        value += rest[i] ?? '';
      }
      if (i >= rest.length) throw new GraphqlFieldError(`Unterminated search value: ${rest}`);
      i++;
    } else {
      for (; i < rest.length && rest[i] !== ' '; i++) value += rest[i];
    }
    terms.push({ field: head[1], op: (head[2] ?? '') as SearchTerm['op'], value });
    rest = rest.slice(i).trim();
    if (rest.startsWith('AND ')) rest = rest.slice(4).trim();
    else if (rest && /^(OR|NOT)\b/.test(rest))
      throw new GraphqlFieldError(`The fake joins search terms with AND only: ${rest}`);
  }
  return terms;
}

/** A time comparison of a search term (`updated_at:>='…'`), times kept to the second by Shopify. */
function timeTest(term: SearchTerm, read: (record: Record<string, unknown>) => unknown) {
  const at = Date.parse(term.value);
  if (Number.isNaN(at))
    throw new GraphqlFieldError(`Invalid date in search term: ${term.field}:${term.op}${term.value}`);
  return (record: Record<string, unknown>) => {
    const time = Date.parse(String(read(record)));
    switch (term.op) {
      case '>=':
        return time >= at;
      case '>':
        return time > at;
      case '<=':
        return time <= at;
      case '<':
        return time < at;
      default:
        return time === at;
    }
  };
}

/**
 * A connection's `query` as a test of its records: `updated_at`/`created_at` compared as times, a
 * field the connection searches matched case-insensitively; an unknown field's term ignored with a
 * warning, as Shopify does, rather than refused.
 */
function searchFilter(
  object: string,
  query: unknown,
  warnings: SearchWarning[],
): (record: ShopifyRecord) => boolean {
  if (query === undefined || query === null || query === '') return () => true;
  const tests: ((record: ShopifyRecord) => boolean)[] = [];
  for (const term of parseSearch(String(query))) {
    if (term.field === 'updated_at' || term.field === 'created_at') {
      const field = term.field === 'updated_at' ? 'updatedAt' : 'createdAt';
      tests.push(timeTest(term, (record) => record[field]));
      continue;
    }
    const field = searchable[object][term.field];
    if (field) {
      tests.push((record) => String(record[field] ?? '').toLowerCase() === term.value.toLowerCase());
    } else {
      warnings.push({
        field: term.field,
        message: 'Invalid search field for this query.',
        code: 'invalid_field',
      });
    }
  }
  return (record) => tests.every((test) => test(record));
}

/** Events appear "a few seconds after the action", in rare cases minutes: 60 s here (verify). */
export const SHOPIFY_EVENT_LAG_MS = 60_000;
const MAX_PAGE = 250;
const MAX_QUERY_COST = 1000;
const BUCKET = 2000;
const RESTORE_RATE = 100;
const costRules = { scalar: 0, object: 1, defaultPage: 1, connection: 2 };

/**
 * For a query reading a listing (`customers`, `products`, `orders`), the largest `first` it could
 * ask for: at most 250, and no more than keeps its calculated cost within 1,000 points.
 */
function largestListingPage(selections: Selection[], variables: Record<string, unknown>): number | undefined {
  const index = selections.findIndex((selection) => 'name' in selection && selection.name in typeOf);
  if (index < 0) return undefined;
  const listing = selections[index] as FieldSelection;
  const costAt = (size: number) =>
    Math.ceil(
      queryCost(
        selections.map((selection, at) =>
          at === index ? { ...listing, args: { ...listing.args, first: { literal: size } } } : selection,
        ),
        variables,
        costRules,
      ),
    );
  let size = MAX_PAGE;
  while (size > 1 && costAt(size) > MAX_QUERY_COST) size--;
  return size;
}

/** Sort keys each connection takes, with the record value each reads. */
const sortKeys: Record<string, (record: ShopifyRecord) => string | number> = {
  ID: (record) => numericId(record.id),
  UPDATED_AT: (record) => Date.parse(record.updatedAt),
  CREATED_AT: (record) => Date.parse(String(record.createdAt)),
};

interface ShopifyEvent {
  id: number;
  atMs: number;
  action: string;
  subjectType: string;
  subjectId: string;
  message: string;
}

export async function startFakeShopify(): Promise<FakeShopify> {
  const stores = new Map<string, VersionedStore<ShopifyRecord>>(
    Object.keys(typeOf).map((object) => [
      object,
      new VersionedStore<ShopifyRecord>((record) => ({ ...record })),
    ]),
  );
  const metafieldValues = new Map<string, { namespace: string; key: string; value: string }[]>();
  const events: ShopifyEvent[] = [];
  let nextId = 1001;
  let nextEventId = 98_000_000_001;
  let throttled = 0;
  /** The current request's search warnings. */
  let warnings: SearchWarning[] = [];
  let listingCtx: Context | undefined;
  /**
   * The largest `first` the listing of the query being served could ask for: at most 250, and no
   * more than keeps the query's calculated cost within the single-query limit (nested connections
   * multiply), so the page size a client can reach is what the fake reports.
   */
  let listingMaxPage: number | undefined;

  const fake = new FakeProvider({
    credentialOf: (ctx: Context) => ctx.get('x-shopify-access-token') || undefined,
    errorBody: (error) =>
      error.status === 401
        ? { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' }
        : error.status === 429
          ? {
              errors:
                'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.',
            }
          : { errors: error.message },
    rateLimitHeaders: () => ({ 'retry-after': '2.0' }),
  });
  const now = () => fake.now();

  const store = (object: string) => stores.get(object)!;
  const find = (id: unknown): [string, ShopifyRecord] | undefined => {
    const type = /^gid:\/\/shopify\/(\w+)\/\d+$/.exec(String(id))?.[1];
    const object = type && objectOfType[type];
    const record = object ? store(object).get(String(id)) : undefined;
    return record && [object!, record];
  };

  const money = (amount: string) => ({
    __typename: 'MoneyBag',
    shopMoney: { __typename: 'MoneyV2', amount, currencyCode: 'USD' },
    presentmentMoney: { __typename: 'MoneyV2', amount, currencyCode: 'USD' },
  });

  const make = (object: string, values: Record<string, unknown>, modifiedMs: number): ShopifyRecord => {
    const id = `gid://shopify/${typeOf[object]}/${nextId++}`;
    const common = {
      __typename: typeOf[object],
      id,
      legacyResourceId: String(numericId(id)),
      createdAt: iso(modifiedMs),
      updatedAt: iso(modifiedMs),
      tags: [],
    };
    const shape: Record<string, Record<string, unknown>> = {
      customers: {
        firstName: null,
        lastName: null,
        displayName: '',
        email: null,
        phone: null,
        note: null,
        locale: 'en',
        state: 'DISABLED',
        verifiedEmail: false,
        taxExempt: false,
        numberOfOrders: '0',
        amountSpent: { __typename: 'MoneyV2', amount: '0.0', currencyCode: 'USD' },
        defaultAddress: null,
        lifetimeDuration: 'now',
      },
      products: {
        title: null,
        handle: null,
        description: '',
        descriptionHtml: '',
        vendor: 'Acme',
        productType: '',
        status: 'ACTIVE',
        totalInventory: 0,
        tracksInventory: false,
        publishedAt: null,
        onlineStoreUrl: null,
        templateSuffix: null,
        isGiftCard: false,
      },
      orders: {
        name: `#${nextId}`,
        email: null,
        phone: null,
        note: null,
        currencyCode: 'USD',
        displayFinancialStatus: 'PAID',
        displayFulfillmentStatus: 'UNFULFILLED',
        test: false,
        confirmed: true,
        closed: false,
        processedAt: iso(modifiedMs),
        cancelledAt: null,
        cancelReason: null,
        closedAt: null,
        totalPriceSet: money('0.0'),
        subtotalPriceSet: money('0.0'),
        customer: null,
      },
    };
    const record = { ...common, ...shape[object], ...values } as ShopifyRecord;
    if (object === 'customers')
      record.displayName =
        [record.firstName, record.lastName].filter(Boolean).join(' ') || String(record.email ?? '');
    // A connection of the record's metafields (HasMetafields.metafields): `first` or `last` (at most
    // 250) required, `keys` (`namespace.key`) and `namespace` narrowing it (first page only: enough
    // for the fake).
    record.metafields = (args: Record<string, unknown>) => {
      const size = args.first ?? args.last;
      if (size === undefined || size === null)
        throw new GraphqlFieldError('you must provide one of first or last', 'argumentLiteralsIncompatible');
      if (!Number.isInteger(size) || (size as number) < 0 || (size as number) > MAX_PAGE)
        throw new GraphqlFieldError(
          `The first argument must be between 0 and ${MAX_PAGE}.`,
          'BAD_USER_INPUT',
        );
      const keys = args.keys as unknown;
      if (
        keys !== undefined &&
        keys !== null &&
        (!Array.isArray(keys) || keys.some((key) => typeof key !== 'string'))
      )
        throw new GraphqlFieldError('keys must be a list of strings', 'argumentLiteralsIncompatible');
      const matching = (metafieldValues.get(id) ?? []).filter(
        (m) =>
          (!Array.isArray(keys) || keys.includes(`${m.namespace}.${m.key}`)) &&
          (typeof args.namespace !== 'string' || m.namespace === args.namespace),
      );
      const nodes = matching.slice(0, size as number);
      return {
        __typename: 'MetafieldConnection',
        nodes: nodes.map((m) => ({ __typename: 'Metafield', ...m })),
        pageInfo: {
          __typename: 'PageInfo',
          hasNextPage: matching.length > nodes.length,
          hasPreviousPage: false,
          startCursor: null,
          endCursor: null,
        },
      };
    };
    store(object).add(id, record, modifiedMs);
    return record;
  };

  const pageInfo = (nodes: { cursor: string }[], hasNextPage: boolean, hasPreviousPage: boolean) => ({
    __typename: 'PageInfo',
    hasNextPage,
    hasPreviousPage,
    startCursor: nodes[0]?.cursor ?? null,
    endCursor: nodes.at(-1)?.cursor ?? null,
  });

  /** A page of a sorted list, after a keyset cursor; `first`/`last` at most 250. */
  const paged = <T extends { id: string | number }>(
    list: T[],
    key: (item: T) => string | number,
    args: Record<string, unknown>,
    object?: string,
  ) => {
    const size = args.first ?? args.last;
    const first = Number(size);
    if (size === undefined || size === null)
      throw new GraphqlFieldError('you must provide one of first or last', 'argumentLiteralsIncompatible');
    if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE)
      throw new GraphqlFieldError(`The first argument must be between 1 and ${MAX_PAGE}.`, 'BAD_USER_INPUT');
    if (args.last !== undefined || args.before !== undefined)
      throw new GraphqlFieldError('The fake pages forward only (first, after)', 'BAD_USER_INPUT');
    if (object && listingCtx)
      fake.logListing(listingCtx, { object, pageSize: first, maxPageSize: listingMaxPage ?? MAX_PAGE });
    const idOf = (item: T) => (typeof item.id === 'number' ? item.id : numericId(item.id));
    const sign = args.reverse === true ? -1 : 1;
    const compare = (a: T, b: T) => {
      const [ka, kb] = [key(a), key(b)];
      return sign * (ka < kb ? -1 : ka > kb ? 1 : idOf(a) - idOf(b));
    };
    const sorted = [...list].sort(compare);
    let rest = sorted;
    if (typeof args.after === 'string') {
      const cursor = decodeCursor(args.after);
      const probe = { last_id: cursor.last_id, value: cursor.last_value };
      rest = sorted.filter((item) => {
        const k = key(item);
        const order = k < probe.value ? -1 : k > probe.value ? 1 : idOf(item) - probe.last_id;
        return sign * order > 0;
      });
    }
    const slice = rest.slice(0, first);
    const edges = slice.map((node) => ({
      __typename: 'Edge',
      node,
      cursor: encodeCursor({ last_id: idOf(node), last_value: key(node) }),
    }));
    return {
      nodes: slice,
      edges,
      pageInfo: pageInfo(edges, rest.length > first, rest.length < sorted.length),
    };
  };

  const connection = (object: string) => (args: Record<string, unknown>) => {
    const sortKey = args.sortKey === undefined || args.sortKey === null ? 'ID' : String(args.sortKey);
    const key = sortKeys[sortKey];
    if (!key)
      throw new GraphqlFieldError(
        `Argument 'sortKey' on Field '${object}' has an invalid value (${sortKey}). Expected type '${typeOf[object]}SortKeys'.`,
        'argumentLiteralsIncompatible',
      );
    const matches = searchFilter(object, args.query, warnings);
    const list = store(object)
      .listed(now())
      .map((version) => version.record)
      .filter(matches);
    return { __typename: `${typeOf[object]}Connection`, ...paged(list, key, args, object) };
  };

  /** Events (BasicEvent) the search query selects: `action`, `subject_type`, `created_at`, `id`. */
  const eventsConnection = (args: Record<string, unknown>) => {
    const tests = parseSearch(String(args.query ?? '')).map((term) => {
      if (term.field === 'created_at') return timeTest(term, (event) => iso(Number(event.atMs)));
      const read: Record<string, (event: ShopifyEvent) => string> = {
        action: (event) => event.action,
        subject_type: (event) => event.subjectType,
        id: (event) => String(event.id),
      };
      if (!read[term.field]) {
        warnings.push({
          field: term.field,
          message: 'Invalid search field for this query.',
          code: 'invalid_field',
        });
        return () => true;
      }
      return (event: Record<string, unknown>) =>
        read[term.field](event as unknown as ShopifyEvent).toLowerCase() === term.value.toLowerCase();
    });
    const sortKey = args.sortKey === undefined || args.sortKey === null ? 'ID' : String(args.sortKey);
    const key =
      sortKey === 'CREATED_AT' ? (event: ShopifyEvent) => event.atMs : (event: ShopifyEvent) => event.id;
    const visible = events.filter(
      (event) =>
        event.atMs + SHOPIFY_EVENT_LAG_MS <= now() &&
        tests.every((test) => test(event as unknown as Record<string, unknown>)),
    );
    const page = paged(visible, key, args);
    const view = (event: ShopifyEvent) => ({
      __typename: 'BasicEvent',
      id: `gid://shopify/BasicEvent/${event.id}`,
      action: event.action,
      subjectType: event.subjectType,
      subjectId: event.subjectId,
      createdAt: iso(event.atMs),
      message: event.message,
      appTitle: null,
      attributeToApp: false,
      attributeToUser: true,
      criticalAlert: false,
      additionalContent: null,
      arguments: null,
      hasAdditionalContent: false,
      secondaryMessage: null,
    });
    return {
      __typename: 'EventConnection',
      nodes: page.nodes.map(view),
      edges: page.edges.map((edge) => ({ ...edge, node: view(edge.node) })),
      pageInfo: page.pageInfo,
    };
  };

  /** The deprecated `deletionEvents`: products (and collections) only, filtered by `occurred_at`. */
  const deletionEvents = (args: Record<string, unknown>) => {
    const types = (args.subjectTypes as string[] | undefined) ?? ['PRODUCT', 'COLLECTION'];
    const tests = parseSearch(String(args.query ?? '')).map((term) => {
      if (term.field !== 'occurred_at') {
        warnings.push({
          field: term.field,
          message: 'Invalid search field for this query.',
          code: 'invalid_field',
        });
        return () => true;
      }
      return timeTest(term, (event) => iso(Number(event.atMs)));
    });
    const list = events.filter(
      (event) =>
        event.action === 'destroy' &&
        types.includes(event.subjectType) &&
        event.atMs + SHOPIFY_EVENT_LAG_MS <= now() &&
        tests.every((test) => test(event as unknown as Record<string, unknown>)),
    );
    const key =
      args.sortKey === 'CREATED_AT' ? (event: ShopifyEvent) => event.atMs : (event: ShopifyEvent) => event.id;
    const page = paged(list, key, args);
    const view = (event: ShopifyEvent) => ({
      __typename: 'DeletionEvent',
      occurredAt: iso(event.atMs),
      subjectId: event.subjectId,
      subjectType: event.subjectType,
    });
    return {
      __typename: 'DeletionEventConnection',
      nodes: page.nodes.map(view),
      edges: page.edges.map((edge) => ({ ...edge, node: view(edge.node) })),
      pageInfo: page.pageInfo,
    };
  };

  const record = (action: string, object: string, id: string, atMs: number, message: string) => {
    events.push({
      id: nextEventId++,
      atMs,
      action,
      subjectType: typeOf[object].toUpperCase(),
      subjectId: id,
      message,
    });
  };

  const userError = (field: string[], message: string) => ({ userErrors: [{ field, message }] });

  const applyValues = (stored: ShopifyRecord, input: Record<string, unknown>, at: number) => {
    for (const [name, value] of Object.entries(input)) {
      if (name === 'id') continue;
      if (name === 'metafields') {
        const list = metafieldValues.get(stored.id) ?? [];
        for (const entry of value as { namespace: string; key: string; value: string }[]) {
          const index = list.findIndex((m) => m.namespace === entry.namespace && m.key === entry.key);
          if (index >= 0) list.splice(index, 1);
          list.push({ namespace: entry.namespace, key: entry.key, value: entry.value });
        }
        metafieldValues.set(stored.id, list);
        continue;
      }
      stored[name] = value;
    }
    stored.updatedAt = iso(at);
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
    const at = now();
    store(object).change(
      found[1].id,
      Math.floor(at / 1000) * 1000,
      (stored) => applyValues(stored, input, at),
      {
        now: at,
      },
    );
    record('update', object, found[1].id, at, `${typeOf[object]} was updated.`);
    return { [payload]: found[1], userErrors: [] };
  };

  const removeRecord = (object: string, id: string, atMs: number) => {
    store(object).remove(id, atMs);
    record('destroy', object, id, atMs, `${typeOf[object]} was deleted.`);
  };

  const remove = (object: string, payload: string) => (args: Record<string, unknown>) => {
    const id = (args.input as { id?: unknown } | undefined)?.id ?? args.id;
    const found = find(id);
    if (!found || found[0] !== object)
      return { [payload]: null, ...userError(['id'], `${typeOf[object]} does not exist`) };
    removeRecord(object, found[1].id, now());
    return { [payload]: id, userErrors: [] };
  };

  const create =
    (
      object: string,
      payload: string,
      inputType: string,
      argument: string,
      check: (input: Record<string, unknown>) => { field: string[]; message: string } | undefined,
    ) =>
    (args: Record<string, unknown>) => {
      const input = checkInput(object, inputType, args[argument]);
      const refused = check(input);
      if (refused) return { [payload]: null, ...userError(refused.field, refused.message) };
      const at = now();
      const created = make(object, {}, at);
      applyValues(created, input, at);
      if (object === 'customers')
        created.displayName =
          [created.firstName, created.lastName].filter(Boolean).join(' ') || String(created.email ?? '');
      record('create', object, created.id, at, `${typeOf[object]} was created.`);
      return { [payload]: created, userErrors: [] };
    };

  // Webhook subscriptions (shopify-webhooks.ts).
  const webhooks = shopifyWebhookRoots(now, SHOPIFY_VERSION);

  const queryRoot = {
    __typename: 'QueryRoot',
    ...webhooks.queries,
    customers: connection('customers'),
    products: connection('products'),
    orders: connection('orders'),
    node: (args: Record<string, unknown>) => find(args.id)?.[1] ?? null,
    customer: (args: Record<string, unknown>) =>
      find(args.id)?.[0] === 'customers' ? find(args.id)![1] : null,
    product: (args: Record<string, unknown>) =>
      find(args.id)?.[0] === 'products' ? find(args.id)![1] : null,
    order: (args: Record<string, unknown>) => (find(args.id)?.[0] === 'orders' ? find(args.id)![1] : null),
    events: eventsConnection,
    deletionEvents,
    metafieldDefinitions: (args: Record<string, unknown>) => {
      const list = definitions[String(args.ownerType)];
      if (!list)
        throw new GraphqlFieldError(
          `Argument 'ownerType' has an invalid value (${String(args.ownerType)})`,
          'argumentLiteralsIncompatible',
        );
      return {
        __typename: 'MetafieldDefinitionConnection',
        nodes: list,
        pageInfo: {
          __typename: 'PageInfo',
          hasNextPage: false,
          hasPreviousPage: false,
          startCursor: null,
          endCursor: null,
        },
      };
    },
  };

  const mutationRoot = {
    __typename: 'Mutation',
    ...webhooks.mutations,
    customerCreate: create('customers', 'customer', 'CustomerInput', 'input', (input) =>
      !input.email && !input.phone && !input.firstName && !input.lastName
        ? { field: ['customer'], message: 'Customer must have a name, phone number or email address' }
        : undefined,
    ),
    customerUpdate: update('customers', 'customer', 'CustomerInput'),
    customerDelete: remove('customers', 'deletedCustomerId'),
    productCreate: create('products', 'product', 'ProductCreateInput', 'product', (input) =>
      typeof input.title !== 'string' || !input.title.trim()
        ? { field: ['title'], message: "Title can't be blank" }
        : undefined,
    ),
    productUpdate: update('products', 'product', 'ProductUpdateInput'),
    productDelete: remove('products', 'deletedProductId'),
    orderUpdate: update('orders', 'order', 'OrderInput'),
  };

  /** The `extensions.cost` of an answer. */
  const cost = (requested: number, actual: number | null, available: number) => ({
    requestedQueryCost: requested,
    actualQueryCost: actual,
    throttleStatus: { maximumAvailable: BUCKET, currentlyAvailable: available, restoreRate: RESTORE_RATE },
  });

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
        extensions: { cost: cost(252, null, 10) },
      };
      return;
    }
    const body = (ctx.request.body ?? {}) as { query?: unknown; variables?: unknown };
    if (typeof body.query !== 'string') throw new FakeHttpError(400, 'Parameter Missing or Invalid');
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    try {
      const document = parseGraphql(body.query);
      // Shopify's calculated cost: objects 1, scalars 0, a connection 2 + its page size × its selection.
      const requested = Math.ceil(queryCost(document.selections, variables, costRules));
      if (requested > MAX_QUERY_COST) {
        ctx.body = {
          errors: [
            {
              message: `Query cost is ${requested}, which exceeds the single query max cost limit (${MAX_QUERY_COST}).\n\nSee https://shopify.dev/concepts/about-apis/rate-limits for more information on how the\ncost of a query is calculated.\n\nTo query larger amounts of data with fewer limits, bulk operations should be used instead.\nSee https://shopify.dev/tutorials/perform-bulk-operations-with-admin-api for usage details.\n`,
              extensions: {
                code: 'MAX_COST_EXCEEDED',
                cost: requested,
                maxCost: MAX_QUERY_COST,
                documentation: 'https://shopify.dev/api/usage/rate-limits',
              },
            },
          ],
        };
        return;
      }
      const root = document.operation === 'mutation' ? mutationRoot : queryRoot;
      warnings = [];
      listingCtx = ctx;
      listingMaxPage = largestListingPage(document.selections, variables);
      const data = project(root, document.selections, variables);
      ctx.body = {
        data,
        extensions: {
          cost: cost(requested, Math.min(requested, 10), BUCKET - requested),
          ...(warnings.length && { search: [{ path: ['records'], query: variables.query, warnings }] }),
        },
      };
    } catch (error) {
      if (!(error instanceof GraphqlFieldError || error instanceof GraphqlSyntaxError)) throw error;
      const code = error instanceof GraphqlFieldError ? error.code : 'parseError';
      ctx.body = { errors: [{ message: error.message, ...(code && { extensions: { code } }) }] };
    } finally {
      listingCtx = undefined;
      listingMaxPage = undefined;
    }
  });

  await fake.start();

  const liveRecord = (object: string, id: string) => {
    const found = store(object).get(id);
    if (!found) throw new Error(`no ${object} ${id}`);
    return found;
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
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    setClock: (clock) => fake.setClock(clock),
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
        // Shopify keeps times to the second.
        const created = make(object, values[object], Math.floor(ms / 1000) * 1000);
        metafieldValues.set(
          created.id,
          object === 'customers' ? [{ namespace: 'custom', key: 'loyalty_tier', value: 'Gold' }] : [],
        );
        record('create', object, created.id, ms, `${typeOf[object]} was created.`);
        return created.id;
      });
    },
    edit(object, id, values) {
      Object.assign(liveRecord(object, id), values);
    },
    touch(object, id, modifiedMs, options) {
      liveRecord(object, id);
      const ms = Math.floor(modifiedMs / 1000) * 1000;
      store(object).change(
        id,
        ms,
        (stored) => {
          stored.updatedAt = iso(ms);
        },
        { now: now(), visibleFromMs: options?.visibleFromMs },
      );
      record('update', object, id, modifiedMs, `${typeOf[object]} was updated.`);
    },
    remove(object, id, atMs) {
      liveRecord(object, id);
      removeRecord(object, id, atMs);
    },
    stored(object, id) {
      const found = store(object).get(id);
      return found && { ...found, metafields: metafieldValues.get(id) ?? [] };
    },
    stop: () => fake.stop(),
  };
}
