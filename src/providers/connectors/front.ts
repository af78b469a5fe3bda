import type { ConnectorHooks } from '../declarative/connector.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * Front's quirk (the rest is `catalog/connectors/front.json`): an update's `custom_fields`
 * replaces the record's whole set ("If you send only the custom fields you want to update, the
 * other custom fields will be erased"). An update naming some custom fields is sent with the
 * record's current ones under them, read first, so the others are kept.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const frontHooks: ConnectorHooks = {
  async write(connector, input, declared) {
    if (input.type !== 'update') return declared();
    const changes = connector.writeValues(input).custom_fields;
    if (!isObject(changes)) return declared();
    const object = connector.object(input.objectName);
    const get = object.read?.get;
    if (!get) return declared();
    const id = connector.targetRecordId(input);
    const response = await connector.send(
      input.objectName,
      connector.request(get.request, { ...connector.templateValues(input.objectName, object), id }, true),
    );
    const current = valueAt(valueAt(response.body, get.record), '/custom_fields');
    if (!isObject(current)) return declared();
    // The named values still win: they fold over the container given here.
    const given = isObject(input.record?.custom_fields) ? input.record.custom_fields : {};
    return connector.writeDeclared({
      ...input,
      record: { ...input.record, custom_fields: { ...current, ...given } },
    });
  },
};
