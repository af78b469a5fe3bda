import type { ConnectorHooks } from '../declarative/connector.js';
import type { ProviderRecord, ReadPageResult } from '../connector.js';
import type { ObjectDeclaration } from '../../schemas/connector-declaration.js';

/**
 * Close's quirks (the rest is `catalog/connectors/close.json`):
 * - `_fields` returns exactly the fields named, so a read of chosen fields also asks for `id` and
 *   `date_updated`, without which a record has no id or modification time.
 * - Its Advanced Filtering API answers ids alone unless told which fields to return (search).
 * - Deletions come from its event log (`action=deleted`), whose items are events: an event's own
 *   `id` is the event's, the deleted record's is `object_id` (and the record's data, in `data` and
 *   `previous_data`, is shown to non-admins for an hour only), so a deletion takes `object_id`.
 */

/** What every record must carry whatever fields are chosen. */
const alwaysRead = ['id', 'date_updated'];

/** The fields the object's windowed read names in `_fields` (the Advanced Filtering API's body). */
function incrementalFields(object: ObjectDeclaration, objectName: string): string[] | undefined {
  const body = object.read?.incremental?.request.body as { _fields?: Record<string, unknown> } | undefined;
  const fields = body?._fields?.[objectName];
  return Array.isArray(fields) && fields.every((name) => typeof name === 'string') ? fields : undefined;
}

/** A deleted-event of the event log as the deletion of the record it names. */
function deletedRecord(record: ProviderRecord): ProviderRecord {
  const objectId = record.raw.object_id;
  return typeof objectId === 'string' && objectId ? { ...record, id: objectId } : record;
}

export const closeHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    const page: ReadPageResult =
      input.fields?.length && !input.pageToken
        ? await connector.readDeclaredPage({
            ...input,
            fields: [...new Set([...alwaysRead, ...input.fields])],
          })
        : await declared();
    return page.deletions ? { ...page, records: page.records.map(deletedRecord) } : page;
  },

  /**
   * A search answers only ids unless `_fields` names fields: with none chosen it asks for those a
   * windowed read asks for (the object's `read.incremental`), so a record comes whole either way.
   */
  async search(connector, input, declared) {
    if (input.pageToken) return declared();
    const fields = input.fields?.length
      ? [...new Set([...alwaysRead, ...input.fields])]
      : incrementalFields(connector.object(input.objectName), input.objectName);
    return connector.searchDeclared({ ...input, ...(fields && { fields }) });
  },
};
