import type { ConnectorHooks } from '../declarative/connector.js';
import type { FieldMetadata } from '../../schemas/object-metadata.js';

/**
 * Close's quirks (the rest is `catalog/connectors/close.json`):
 * - `_fields` returns exactly the fields named, so a read of chosen fields also asks for `id` and
 *   `date_updated`, without which a record has no id or modification time.
 * - Its custom field endpoints name a field by id (`cf_…`), while records carry and take the value
 *   as `custom.cf_…`: custom fields are described under the name records use.
 */

/** What every record must carry whatever fields are chosen. */
const alwaysRead = ['id', 'date_updated'];

export const closeHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (!input.fields?.length || input.pageToken) return declared();
    const fields = [...new Set([...alwaysRead, ...input.fields])];
    return connector.readDeclaredPage({ ...input, fields });
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
