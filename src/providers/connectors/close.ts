import type { ConnectorHooks } from '../declarative/connector.js';
import type { ObjectDeclaration } from '../../schemas/connector-declaration.js';
import type { FieldMetadata } from '../../schemas/object-metadata.js';

/**
 * Close's quirks (the rest is `catalog/connectors/close.json`):
 * - `_fields` returns exactly the fields named, so a read of chosen fields also asks for `id` and
 *   `date_updated`, without which a record has no id or modification time.
 * - Its custom field endpoints name a field by id (`cf_…`), while records carry and take the value
 *   as `custom.cf_…`: custom fields are described under the name records use.
 * - Its Advanced Filtering API answers ids alone unless told which fields to return (search).
 */

/** What every record must carry whatever fields are chosen. */
const alwaysRead = ['id', 'date_updated'];

/** The fields the object's windowed read names in `_fields` (the Advanced Filtering API's body). */
function incrementalFields(object: ObjectDeclaration, objectName: string): string[] | undefined {
  const body = object.read?.incremental?.request.body as { _fields?: Record<string, unknown> } | undefined;
  const fields = body?._fields?.[objectName];
  return Array.isArray(fields) && fields.every((name) => typeof name === 'string') ? fields : undefined;
}

export const closeHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (!input.fields?.length || input.pageToken) return declared();
    const fields = [...new Set([...alwaysRead, ...input.fields])];
    return connector.readDeclaredPage({ ...input, fields });
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

  async listObjectMetadata(_connector, _objectName, declared) {
    const metadata = await declared();
    const fields: Record<string, FieldMetadata> = {};
    for (const [name, field] of Object.entries(metadata.fields)) {
      const recordName = field.isCustom && !name.startsWith('custom.') ? `custom.${name}` : name;
      fields[recordName] = { ...field, fieldName: recordName };
    }
    return { ...metadata, fields };
  },
};
