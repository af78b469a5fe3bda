import type { ConnectorHooks } from '../declarative/connector.js';
import type { ProviderRecord } from '../connector.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * Pipedrive's quirks (the rest is `catalog/connectors/pipedrive.json`):
 * - Its search (`/api/v2/<object>/search`) looks for one term in one kind of field and answers
 *   reduced items (emails as plain strings, no custom fields, no times): each page's records are read
 *   again whole by id (`GET /api/v2/<object>?ids=`, one call per page), so a search returns records
 *   exactly as reads do, and the installation's field selection and mapping see every field.
 * - `exact_match` ignores case, so records whose field does not equal the value exactly are left
 *   out here; a page may then hold fewer records than asked, never a wrong one.
 * - One term per search: a second filter is refused (the declaration's members both write `term`).
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

export const pipedriveHooks: ConnectorHooks = {
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
