import type { ProviderRecord } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { ConnectorInputError } from '../errors.js';

/**
 * Shopify's quirks (the rest is `catalog/connectors/shopify.json`). Its Admin API is GraphQL, so:
 * - a query names every field it returns: a read without chosen fields asks for the object's
 *   declared standard fields, and every read asks for `id` and `updatedAt`. Names go into the query
 *   text, so only GraphQL names (and `namespace.key` custom fields) are let through.
 * - custom fields are metafields, described by `metafieldDefinitions` as `namespace.key`; a record
 *   carries them as a `metafields` connection, whose values are also set on the record under
 *   `namespace.key`, and a write's `namespace.key` values are sent as its `metafields` input.
 */

const alwaysRead = ['id', 'updatedAt'];
/** A record's metafields, as many as one query asks for (the connection's first page). */
const metafieldsSelection = 'metafields(first: 50) { nodes { namespace key value } }';
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

/** What a query names: the chosen fields (or the declared standard ones), `id`, `updatedAt`, metafields. */
function selection(connector: HookContext, objectName: string, wanted: string[] | undefined): string[] {
  const chosen = wanted?.length
    ? checkedFields(connector.provider, wanted)
    : Object.keys(connector.object(objectName).fields ?? {});
  const standard = chosen.filter((name) => !isMetafield(name));
  const custom = !wanted?.length || chosen.some(isMetafield);
  return [...new Set([...alwaysRead, ...standard]), ...(custom ? [metafieldsSelection] : [])];
}

function withMetafields(record: ProviderRecord): ProviderRecord {
  return record.raw.metafields === undefined
    ? record
    : { ...record, raw: { ...record.raw, ...metafieldsOf(record.raw) } };
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
  async readPage(connector, input, declared) {
    const page = input.pageToken
      ? await declared()
      : await connector.readDeclaredPage({
          ...input,
          fields: selection(connector, input.objectName, input.fields),
        });
    return { ...page, records: page.records.map(withMetafields) };
  },

  async search(connector, input, declared) {
    const page = input.pageToken
      ? await declared()
      : await connector.searchDeclared({
          ...input,
          filters: input.filters.map((filter) => ({
            ...filter,
            fieldName: searchName(connector.provider, filter.fieldName),
          })),
          fields: selection(connector, input.objectName, input.fields),
        });
    return { ...page, records: page.records.map(withMetafields) };
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
