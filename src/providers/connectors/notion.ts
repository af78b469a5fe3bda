import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * Notion's quirk (the rest is `catalog/connectors/notion.json`): a page's properties are written as
 * property value objects whose shape depends on the property's type (`{title: [{text: {content}}]}`,
 * `{select: {name}}`, `{number}`…), which only the database's schema says. Values given plainly
 * (text, a number, a flag, a list of names) are written in the shape their property's type takes;
 * objects are taken to be property values already and sent as they are.
 */

type PropertyTypes = Record<string, string>;

/** The database's property types by name (`GET /v1/databases/{id}`, the declared metadata request). */
async function propertyTypes(connector: HookContext, objectName: string): Promise<PropertyTypes> {
  const metadata = connector.object(objectName).metadata!;
  const response = await connector.send(
    objectName,
    connector.request(
      metadata.request,
      connector.templateValues(objectName, connector.object(objectName)),
      true,
    ),
  );
  const properties = valueAt(response.body, metadata.fields);
  const types: PropertyTypes = {};
  for (const [name, property] of Object.entries((properties ?? {}) as Record<string, { type?: unknown }>)) {
    if (typeof property?.type === 'string') types[name] = property.type;
  }
  return types;
}

const richText = (value: unknown) => [{ text: { content: String(value ?? '') } }];
const names = (value: unknown) =>
  (Array.isArray(value) ? value : String(value ?? '').split(','))
    .map((name) => String(name).trim())
    .filter(Boolean)
    .map((name) => ({ name }));

/** A plain value as the property value object its type takes; undefined for a type not written so. */
function propertyValue(type: string, value: unknown): unknown {
  const text = value === null || value === undefined || value === '' ? null : String(value);
  switch (type) {
    case 'title':
    case 'rich_text':
      return { [type]: text === null ? [] : richText(text) };
    case 'url':
    case 'email':
    case 'phone_number':
      return { [type]: text };
    case 'number':
      return { number: text === null ? null : Number(value) };
    case 'checkbox':
      return { checkbox: value === true || value === 'true' };
    case 'select':
    case 'status':
      return { [type]: text === null ? null : { name: text } };
    case 'multi_select':
      return { multi_select: text === null ? [] : names(value) };
    case 'date':
      return { date: text === null ? null : { start: text } };
    default:
      return undefined;
  }
}

const isPlain = (value: unknown) => value === null || typeof value !== 'object' || Array.isArray(value);

export const notionHooks: ConnectorHooks = {
  async write(connector, input, declared) {
    if (input.type === 'delete' || !input.record || !Object.values(input.record).some(isPlain))
      return declared();
    const types = await propertyTypes(connector, input.objectName);
    const record: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(input.record)) {
      const type = Object.hasOwn(types, name) ? types[name] : undefined;
      record[name] = (isPlain(value) && type !== undefined && propertyValue(type, value)) || value;
    }
    return connector.writeDeclared({ ...input, record });
  },
};
