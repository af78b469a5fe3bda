import type { ProviderRecord } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';

/**
 * Gorgias's quirks (the rest is `catalog/connectors/gorgias.json`):
 *
 * - Custom field values are written as a list of `{id, value}` (the declared container) but come
 *   back as an object keyed by field id, each member `{id, value}`: read, they are named
 *   `custom_fields.<id>` here, as the metadata names them.
 * - Tickets deleted in the helpdesk go to the trash (`trashed_datetime` set). They are read with
 *   `trashed=true`, which the reference calls including trashed tickets: only those whose
 *   `trashed_datetime` is set are deletions.
 * - Customer deletions come from the events feed (`customer-deleted`), whose items are events: the
 *   deleted record's id is the event's `object_id`, not its `id`, and a declaration names only the
 *   record's own id.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record with its custom values under `custom_fields.<id>`, when Gorgias keyed them by id. */
function withCustomValues(record: ProviderRecord): ProviderRecord {
  const held = record.raw.custom_fields;
  if (!isObject(held)) return record;
  const values: Record<string, unknown> = { ...(record.values ?? record.raw) };
  for (const [key, member] of Object.entries(held)) {
    const id = isObject(member) && member.id !== undefined && member.id !== null ? member.id : key;
    values[`custom_fields.${String(id)}`] = isObject(member) && 'value' in member ? member.value : member;
  }
  return { ...record, values };
}

function deletedRecord(objectName: string, record: ProviderRecord): ProviderRecord | undefined {
  if (objectName === 'tickets') return record.raw.trashed_datetime ? record : undefined;
  const objectId = record.raw.object_id;
  return objectId === undefined || objectId === null ? undefined : { ...record, id: String(objectId) };
}

export const gorgiasHooks: ConnectorHooks = {
  async readPage(_connector, input, declared) {
    const page = await declared();
    const records = page.deletions
      ? page.records.flatMap((record) => deletedRecord(input.objectName, record) ?? [])
      : page.records;
    return { ...page, records: records.map(withCustomValues) };
  },
};
