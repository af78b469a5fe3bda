import type { ConnectorHooks } from '../declarative/connector.js';
import type { DeclaredRequest } from '../../schemas/connector-declaration.js';
import { ConnectorInputError } from '../errors.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * Lever's quirk (the rest is `catalog/connectors/lever.json`): an opportunity has no general
 * update. Each aspect a builder may change has its own operation, all acting for the connection's
 * `performAs` user: `PUT /opportunities/{id}/stage` `{stage}`, `PUT …/archived` `{reason, …}`
 * (null to restore), `POST …/addTags` `{tags}`, `…/addLinks` `{links}`, `…/addSources`
 * `{sources}`. An update is sent as those operations, one per value given, then the opportunity is
 * read back; a value Lever cannot change after creation is refused before any call.
 */

const operations: Record<string, { method: DeclaredRequest['method']; path: string; body: unknown }> = {
  stage: { method: 'PUT', path: 'stage', body: { stage: '{{value}}' } },
  archived: { method: 'PUT', path: 'archived', body: '{{value}}' },
  tags: { method: 'POST', path: 'addTags', body: { tags: '{{value}}' } },
  links: { method: 'POST', path: 'addLinks', body: { links: '{{value}}' } },
  sources: { method: 'POST', path: 'addSources', body: { sources: '{{value}}' } },
};

export const leverHooks: ConnectorHooks = {
  async write(connector, input, declared) {
    if (input.type !== 'update' || input.objectName !== 'opportunities') return declared();
    const id = connector.targetRecordId(input);
    const values = connector.writeValues(input);
    const unknown = Object.keys(values).filter((name) => !Object.hasOwn(operations, name));
    if (unknown.length)
      throw new ConnectorInputError(
        `Lever cannot change ${unknown.join(', ')} of an opportunity after it is created; an update may set ${Object.keys(operations).join(', ')}.`,
        connector.provider,
      );
    const object = connector.object(input.objectName);
    const base = { ...connector.templateValues(input.objectName, object), id };
    for (const [name, value] of Object.entries(values)) {
      const operation = operations[name];
      // The archived state takes `{reason}`; null restores the opportunity.
      const body = name === 'archived' && value === null ? { reason: null } : operation.body;
      await connector.send(
        input.objectName,
        connector.request(
          {
            method: operation.method,
            path: `/v1/opportunities/{{id}}/${operation.path}`,
            query: { perform_as: '{{connection.performAs}}' },
            body,
          },
          { ...base, value },
          true,
        ),
      );
    }
    const get = object.read!.get!;
    const response = await connector.send(input.objectName, connector.request(get.request, base, true));
    const data = valueAt(response.body, get.record);
    return {
      recordId: id,
      ...(data !== null && typeof data === 'object' && { data: data as Record<string, unknown> }),
    };
  },
};
