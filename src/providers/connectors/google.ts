import type { ConnectorHooks } from '../declarative/connector.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * Google's quirk (the rest is `catalog/connectors/google.json`): the People API's
 * `people.updateContact` changes only the fields its `updatePersonFields` mask names, and refuses
 * an update that does not carry the contact's CONTACT source (`person.metadata.sources`) with its
 * current etag (a 400 when missing or stale). An update of a connection reads the contact first,
 * then sends its etag and CONTACT source with the mask of the fields given.
 */
export const googleHooks: ConnectorHooks = {
  async write(connector, input, declared) {
    if (input.objectName !== 'connections' || input.type !== 'update') return declared();
    const object = connector.object(input.objectName);
    const get = object.read?.get;
    const update = object.write?.update;
    if (!get || !update) return declared();
    const id = connector.targetRecordId(input);
    const values = connector.writeValues(input);
    const base = { ...connector.templateValues(input.objectName, object), id };
    const current = await connector.send(input.objectName, connector.request(get.request, base, true));
    const person = valueAt(current.body, get.record);
    const etag = valueAt(person, '/etag');
    const sources = valueAt(person, '/metadata/sources');
    const contactSources = Array.isArray(sources)
      ? sources.filter((source) => valueAt(source, '/type') === 'CONTACT')
      : [];
    const record = { ...values, etag, metadata: { sources: contactSources } };
    const request = connector.request(update.request, { ...base, record }, true);
    // The mask names the fields given, so the contact's other fields are kept.
    const response = await connector.send(input.objectName, {
      ...request,
      query: { ...request.query, updatePersonFields: Object.keys(values).join(',') },
    });
    const data = valueAt(response.body, update.record ?? '');
    return {
      recordId: id,
      ...(data !== null &&
        typeof data === 'object' &&
        !Array.isArray(data) && { data: data as Record<string, unknown> }),
    };
  },
};
