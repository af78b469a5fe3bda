import type { ConnectorHooks } from '../declarative/connector.js';
import type { ProviderRecord } from '../connector.js';
import { valueAt } from '../declarative/json-pointer.js';
import type { FieldMetadata } from '../../schemas/object-metadata.js';

/**
 * Pipedrive's quirks (the rest is `catalog/connectors/pipedrive.json`):
 * - Its search (`/api/v2/<object>/search`) looks for one term in one kind of field and answers
 *   reduced items (emails as plain strings, no custom fields, no times): each page's records are read
 *   again whole by id (`GET /api/v2/<object>?ids=`, one call per page), so a search returns records
 *   exactly as reads do, and the installation's field selection and mapping see every field.
 * - `exact_match` ignores case, so records whose field does not equal the value exactly are left
 *   out here; a page may then hold fewer records than asked, never a wrong one.
 * - One term per search: a second filter is refused (the declaration's members both write `term`).
 * - Its field lists name a person's email addresses and phone numbers `email` and `phone` (v1's
 *   names), where v2 records and writes call them `emails` and `phones`, lists of
 *   `{value, primary, label}`: the metadata gives them the names records use, as lists. A field
 *   list that already says `emails` passes through unchanged.
 */

/** The most ids one list call takes; the declaration's search pages are no larger. */
const maxIds = 100;

/** The texts a record holds in a field: v2 keeps emails, phones and addresses as `{value, …}`. */
function textsOf(raw: Record<string, unknown>, field: string): string[] {
  const name = field === 'email' ? 'emails' : field === 'phone' ? 'phones' : field;
  const value = raw[name];
  const items = Array.isArray(value) ? value : [value];
  return items
    .map((item) => (item && typeof item === 'object' ? (item as { value?: unknown }).value : item))
    .filter((item) => item !== undefined && item !== null)
    .map(String);
}

/** Field-list names of a person's members that v2 records name otherwise. */
const recordNames: Record<string, Record<string, string>> = {
  persons: { email: 'emails', phone: 'phones' },
};

/** A field renamed to what records call it, a list of `{value, primary, label}` rather than text. */
function renamed(field: FieldMetadata, fieldName: string): FieldMetadata {
  return { ...field, fieldName, valueType: 'other' };
}

export const pipedriveHooks: ConnectorHooks = {
  async listObjectMetadata(_connector, objectName, declared) {
    const metadata = await declared();
    const names = Object.hasOwn(recordNames, objectName) ? recordNames[objectName] : {};
    const fields: Record<string, FieldMetadata> = {};
    for (const [name, field] of Object.entries(metadata.fields)) {
      const recordName = Object.hasOwn(names, name) ? names[name] : undefined;
      if (recordName) fields[recordName] = renamed(field, recordName);
      else fields[name] = field;
    }
    return { ...metadata, fields };
  },
  async search(connector, input, declared) {
    const page = await declared();
    if (!page.records.length) return page;
    const ids = page.records.map((record) => record.id).slice(0, maxIds);
    const response = await connector.send(input.objectName, {
      method: 'GET',
      path: `/api/v2/${encodeURIComponent(input.objectName)}`,
      query: { ids: ids.join(','), limit: String(ids.length) },
      idempotent: true,
    });
    const listed = valueAt(response.body, '/data');
    const object = connector.object(input.objectName);
    const whole = new Map<string, ProviderRecord>();
    for (const item of Array.isArray(listed) ? listed : []) {
      const record = connector.record(object, item);
      whole.set(record.id, record);
    }
    const records = ids
      .map((id) => whole.get(id))
      .filter((record): record is ProviderRecord => record !== undefined)
      .filter((record) =>
        input.filters.every((filter) => textsOf(record.raw, filter.fieldName).includes(String(filter.value))),
      );
    return { records, ...(page.nextPageToken && { nextPageToken: page.nextPageToken }) };
  },
};
