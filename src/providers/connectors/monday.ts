import type { ProviderRecord } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import { describedField, staticField } from '../declarative/field-metadata.js';
import { valueAt } from '../declarative/json-pointer.js';
import { ConnectorInputError } from '../errors.js';
import type { FieldMetadata } from '../../schemas/object-metadata.js';

/**
 * monday.com's quirks (the rest is `catalog/connectors/monday.json`). An object is a board, named by
 * its id, and its records are the board's items:
 * - an item carries its cells as `column_values` ({id, type, text, value}); each cell's text is also
 *   set on the record under the column's id, the name the board's metadata gives the field;
 * - a write sends cells as one JSON-encoded string (`column_values: JSON`), keyed by column id, in
 *   the shapes monday documents per column type (`{"status": {"label": "Done"}}`, `{"text": "…"}`);
 *   a create's `name` is the item's name, apart from the cells;
 * - a status or dropdown column's labels sit in its `settings_str`, JSON text (`{"labels": {"0":
 *   "Done"}}` for a status, `{"labels": [{"id": 1, "name": "…"}]}` for a dropdown): they are read
 *   from it as the field's allowed values;
 * - deletions are told by the board's activity log (`activity_logs`: `delete_pulse`,
 *   `archive_pulse`), whose entries name their item only inside `data`, JSON text (`pulse_id`), and
 *   are stamped `created_at` in 17-digit Unix time (tenths of a microsecond): each is read as a
 *   deletion of that item at that time.
 */

/** A column's labels from its `settings_str`, in index order; none when it has none or is not JSON. */
function labelsOf(settings: unknown): string[] {
  if (typeof settings !== 'string') return [];
  let labels: unknown;
  try {
    labels = (JSON.parse(settings) as { labels?: unknown } | null)?.labels;
  } catch {
    return [];
  }
  const entries = Array.isArray(labels)
    ? labels.map((label) => (label as { name?: unknown } | null)?.name)
    : labels && typeof labels === 'object'
      ? Object.entries(labels)
          .sort(([a], [b]) => Number(a) - Number(b))
          .map(([, label]) => label)
      : [];
  return entries.filter((label): label is string => typeof label === 'string' && label !== '');
}

/** The record with each cell's text under its column id, the name the board's metadata gives it. */
function withCells(record: ProviderRecord): ProviderRecord {
  const cells = record.raw.column_values;
  if (!Array.isArray(cells)) return record;
  const values = { ...record.raw };
  for (const cell of cells) {
    const { id, text } = (cell ?? {}) as { id?: unknown; text?: unknown };
    if (typeof id === 'string' && !Object.hasOwn(values, id)) values[id] = text ?? null;
  }
  return { ...record, values };
}

/** 17-digit Unix time (tenths of a microsecond) as ISO 8601, or undefined when it is not one. */
function activityTime(value: unknown): string | undefined {
  const ticks = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(ticks) ? new Date(Math.floor(ticks / 10_000)).toISOString() : undefined;
}

/** An activity log entry as the deletion of the item it names; undefined when it names none. */
function deletionOf(record: ProviderRecord): ProviderRecord | undefined {
  let data: unknown;
  try {
    data = JSON.parse(String(record.raw.data));
  } catch {
    return undefined;
  }
  const item = (data as { pulse_id?: unknown } | null)?.pulse_id;
  if (typeof item !== 'string' && typeof item !== 'number') return undefined;
  const at = activityTime(record.raw.created_at);
  return { id: String(item), ...(at && { updatedAt: at }), raw: record.raw, deleted: true };
}

export const mondayHooks: ConnectorHooks = {
  /** The declared description of the board's columns, with each column's labels as its allowed values. */
  async listObjectMetadata(connector, objectName) {
    const object = connector.object(objectName);
    const declared = object.metadata;
    if (!declared) throw connector.unsupported('objectMetadata');
    const response = await connector.send(
      objectName,
      connector.request(declared.request, { object: objectName }, true),
    );
    const fields: Record<string, FieldMetadata> = {};
    for (const [name, field] of Object.entries(object.fields ?? {})) fields[name] = staticField(name, field);
    const columns = valueAt(response.body, declared.fields);
    for (const column of Array.isArray(columns) ? columns : []) {
      const field = describedField(declared, column);
      if (!field) continue;
      const labels = labelsOf((column as { settings_str?: unknown }).settings_str);
      fields[field.fieldName] = labels.length
        ? { ...field, values: labels.map((label) => ({ value: label, displayValue: label })) }
        : field;
    }
    return { name: objectName, displayName: object.displayName ?? objectName, fields };
  },

  async readPage(_connector, _input, declared) {
    const page = await declared();
    if (!page.deletions) return { ...page, records: page.records.map(withCells) };
    const deletions = page.records.map(deletionOf).filter((record) => record !== undefined);
    return { ...page, records: deletions };
  },

  async write(connector, input, declared) {
    if (input.type === 'delete') return declared();
    const values = connector.writeValues(input);
    if (input.type === 'update') {
      return connector.writeDeclared({
        ...input,
        recordId: connector.targetRecordId(input),
        record: { columns: JSON.stringify(values) },
      });
    }
    const { name, ...cells } = values;
    if (typeof name !== 'string' || !name.trim()) {
      throw new ConnectorInputError('A monday.com item needs a name.', connector.provider);
    }
    return connector.writeDeclared({ ...input, record: { name, columns: JSON.stringify(cells) } });
  },
};
