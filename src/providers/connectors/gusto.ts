import type { ConnectorHooks } from '../declarative/connector.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * Gusto's quirk (the rest is `catalog/connectors/gusto.json`): an update must carry the record's
 * current `version` ("the current version of the object… to prevent conflicting updates"; a stale
 * one answers 409). An update that names none is sent with the version read just before it.
 */
export const gustoHooks: ConnectorHooks = {
  async write(connector, input, declared) {
    if (input.type !== 'update' || input.record?.version !== undefined) return declared();
    const object = connector.object(input.objectName);
    const get = object.read?.get;
    if (!get) return declared();
    const id = connector.targetRecordId(input);
    const response = await connector.send(
      input.objectName,
      connector.request(get.request, { ...connector.templateValues(input.objectName, object), id }, true),
    );
    const version = valueAt(valueAt(response.body, get.record), '/version');
    if (version === undefined) return declared();
    return connector.writeDeclared({ ...input, record: { ...input.record, version } });
  },
};
