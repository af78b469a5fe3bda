import type { ConnectorHooks } from '../declarative/connector.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * QuickBooks Online's quirk (the rest is `catalog/connectors/quickbooks.json`): an update or a
 * delete must carry the entity's current `SyncToken` (optimistic locking: a stale one is refused),
 * which only a read of the entity gives. Updates and deletes read the entity first and send its
 * token with the declared request.
 */
export const quickbooksHooks: ConnectorHooks = {
  async write(connector, input, declared) {
    if (input.type === 'create') return declared();
    const object = connector.object(input.objectName);
    const get = object.read?.get;
    const operation = object.write?.[input.type];
    if (!get || !operation) return declared();
    const id = connector.targetRecordId(input);
    const values = { ...connector.templateValues(input.objectName, object), id };
    const current = await connector.send(input.objectName, connector.request(get.request, values, true));
    const syncToken = valueAt(valueAt(current.body, get.record), '/SyncToken');
    const request = connector.request(
      operation.request,
      input.type === 'update' ? { ...values, record: connector.writeValues(input) } : values,
      true,
    );
    const body = { ...(request.json as Record<string, unknown>), SyncToken: syncToken };
    const response = await connector.send(input.objectName, { ...request, json: body });
    const data = input.type === 'update' ? valueAt(response.body, operation.record ?? '') : undefined;
    return {
      recordId: id,
      ...(data !== null &&
        typeof data === 'object' &&
        !Array.isArray(data) && { data: data as Record<string, unknown> }),
    };
  },
};
