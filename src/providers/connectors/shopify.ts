import type { ProviderRecord, ReadPageResult, SearchPageResult } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { ConnectorInputError } from '../errors.js';
import { decodePageToken, encodePageToken } from '../page-token.js';

/**
 * Shopify's quirks (the rest is `catalog/connectors/shopify.json`). Its Admin API is GraphQL, so:
 * - a query names every field it returns: a read without chosen fields asks for the object's
 *   declared standard fields, and every read asks for `id` and `updatedAt`. Names go into the query
 *   text, so only GraphQL names (and `namespace.key` custom fields) are let through.
 * - custom fields are metafields, described by `metafieldDefinitions` as `namespace.key`; a read
 *   asks for the defined ones (or those chosen) by key, as a `metafields` connection whose values
 *   are also given under `namespace.key` (the record's `values`, null where the record has none),
 *   and a write's `namespace.key` values are sent as its `metafields` input;
 * - one query may cost at most 1,000 points: a read asks for the largest page its selection fits.
 */

const alwaysRead = ['id', 'updatedAt'];
/** Most records a connection's page holds (`first`). */
const MAX_FIRST = 250;
/** Most points one query may cost, requested (before it runs). */
const MAX_QUERY_COST = 1000;
const graphqlName = /^[_A-Za-z][_0-9A-Za-z]*$/;
/** `namespace.key`; app-owned namespaces start `$app:` (verify the full alphabet). */
const metafieldName = /^[$\w:-]+\.[\w-]+$/;

function isMetafield(name: string): boolean {
  return name.includes('.');
}

function checkedFields(provider: string, fields: string[]): string[] {
  for (const name of fields) {
    if (!graphqlName.test(name) && !metafieldName.test(name)) {
      throw new ConnectorInputError(
        `"${name}" is not a Shopify field name (letters, digits and _, or namespace.key for a metafield).`,
        provider,
      );
    }
  }
  return fields;
}

function metafieldsOf(raw: Record<string, unknown>): Record<string, unknown> {
  const nodes = (raw.metafields as { nodes?: unknown } | undefined)?.nodes;
  const values: Record<string, unknown> = {};
  for (const node of Array.isArray(nodes) ? nodes : []) {
    const { namespace, key, value } = (node ?? {}) as Record<string, unknown>;
    if (typeof namespace === 'string' && typeof key === 'string') values[`${namespace}.${key}`] = value;
  }
  return values;
}

/** A read's selection: the fields a query names, and the metafields its records carry. */
interface Selection {
  fields: string[];
  metafields: string[];
}

/** The metafields the object's definitions describe (its custom fields in the metadata). */
async function definedMetafields(connector: HookContext, objectName: string): Promise<string[]> {
  const metadata = await connector.declaredMetadata(objectName);
  return Object.values(metadata.fields)
    .filter((field) => field.isCustom && isMetafield(field.fieldName))
    .map((field) => field.fieldName);
}

/**
 * What a query names: the chosen fields (or the declared standard ones and every defined
 * metafield), `id`, `updatedAt`, and the metafields asked for by key (`metafields(keys:)`).
 */
async function selection(
  connector: HookContext,
  objectName: string,
  wanted: string[] | undefined,
): Promise<Selection> {
  const chosen = wanted?.length
    ? checkedFields(connector.provider, wanted)
    : Object.keys(connector.object(objectName).fields ?? {});
  const standard = chosen.filter((name) => !isMetafield(name));
  const metafields = (
    wanted?.length ? chosen.filter(isMetafield) : await definedMetafields(connector, objectName)
  ).slice(0, MAX_FIRST);
  const keys = metafields.map((name) => JSON.stringify(name)).join(', ');
  return {
    fields: [
      ...new Set([...alwaysRead, ...standard]),
      ...(metafields.length
        ? [`metafields(first: ${metafields.length}, keys: [${keys}]) { nodes { namespace key value } }`]
        : []),
    ],
    metafields,
  };
}

/**
 * The largest page whose query costs at most 1,000 points: an object costs 1, a scalar nothing, a
 * connection 2 plus `first` times its node's cost. A record is 1, plus 2 + n for its n metafields;
 * the page's connection 2 and its `pageInfo` 1 (`MAX_FIRST` records without metafields: 253).
 */
function largestPage(metafields: number): number {
  const record = 1 + (metafields ? 2 + metafields : 0);
  return Math.min(MAX_FIRST, Math.floor((MAX_QUERY_COST - 3) / record));
}

/** A read's page size: as asked, no larger than its query's cost allows. */
function pageSizeOf(asked: number | undefined, chosen: Selection): number {
  return Math.min(asked ?? MAX_FIRST, largestPage(chosen.metafields.length));
}

/**
 * The record with its metafields' values under `namespace.key`, the names the metadata lists;
 * those it lacks are null.
 */
function withMetafields(record: ProviderRecord, asked: readonly string[]): ProviderRecord {
  if (record.raw.metafields === undefined && !asked.length) return record;
  const values: Record<string, unknown> = { ...record.raw };
  for (const name of asked) values[name] = null;
  return { ...record, values: { ...values, ...metafieldsOf(record.raw) } };
}

/** A page token of this hook: the declared one, and the metafields the read asked for. */
interface ShopifyToken extends Record<string, unknown> {
  o: string;
  t: string;
  m: string[];
}

function wrap(objectName: string, next: string | undefined, metafields: string[]): string | undefined {
  return next === undefined ? undefined : encodePageToken({ o: objectName, t: next, m: metafields });
}

/**
 * A field as the search syntax names it: GraphQL's `firstName` is `first_name` there. Metafields
 * are not searchable on every object, so they are refused rather than sent.
 */
function searchName(provider: string, field: string): string {
  if (!graphqlName.test(field)) {
    throw new ConnectorInputError(`Ferry cannot search Shopify records by "${field}".`, provider);
  }
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

export const shopifyHooks: ConnectorHooks = {
  async readPage(connector, input) {
    let page: ReadPageResult;
    let metafields: string[];
    if (input.pageToken) {
      const token = decodePageToken<ShopifyToken>(input.pageToken, connector.provider, input.objectName);
      page = await connector.readDeclaredPage({ objectName: input.objectName, pageToken: token.t });
      metafields = token.m;
    } else {
      const chosen = await selection(connector, input.objectName, input.fields);
      page = await connector.readDeclaredPage({
        ...input,
        fields: chosen.fields,
        pageSize: pageSizeOf(input.pageSize, chosen),
      });
      metafields = chosen.metafields;
    }
    return {
      ...page,
      records: page.deletions
        ? page.records
        : page.records.map((record) => withMetafields(record, metafields)),
      nextPageToken: wrap(input.objectName, page.nextPageToken, metafields),
    };
  },

  async search(connector, input) {
    let page: SearchPageResult;
    let metafields: string[];
    if (input.pageToken) {
      const token = decodePageToken<ShopifyToken>(input.pageToken, connector.provider, input.objectName);
      page = await connector.searchDeclared({ ...input, pageToken: token.t });
      metafields = token.m;
    } else {
      // Refused before any call: a filter Shopify cannot search by.
      const filters = input.filters.map((filter) => ({
        ...filter,
        fieldName: searchName(connector.provider, filter.fieldName),
      }));
      const chosen = await selection(connector, input.objectName, input.fields);
      page = await connector.searchDeclared({
        ...input,
        filters,
        fields: chosen.fields,
        pageSize: pageSizeOf(input.pageSize, chosen),
      });
      metafields = chosen.metafields;
    }
    return {
      ...page,
      records: page.records.map((record) => withMetafields(record, metafields)),
      nextPageToken: wrap(input.objectName, page.nextPageToken, metafields),
    };
  },

  async write(connector, input, declared) {
    if (input.type === 'delete' || !input.record) return declared();
    const record: Record<string, unknown> = {};
    const metafields: { namespace: string; key: string; value: string }[] = [];
    for (const [name, value] of Object.entries(input.record)) {
      if (!isMetafield(name)) {
        record[name] = value;
        continue;
      }
      const at = name.lastIndexOf('.');
      metafields.push({
        namespace: name.slice(0, at),
        key: name.slice(at + 1),
        // Metafield values are strings; lists and objects as JSON (verify per metafield type).
        value: typeof value === 'string' ? value : JSON.stringify(value),
      });
    }
    if (metafields.length) record.metafields = metafields;
    return connector.writeDeclared({ ...input, record });
  },
};
