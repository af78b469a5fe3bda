import type { ConnectorHooks } from '../declarative/connector.js';

/**
 * Help Scout's quirk (the rest is `catalog/connectors/helpScoutMailbox.json`): a customer is
 * updated in part by `PATCH /v2/customers/{id}` with a JSON Patch list
 * (`[{op: "replace", path: "/firstName", value}]`); `PUT` replaces the whole customer, erasing
 * what it leaves out. A write names its values, so each becomes one `replace`.
 */
export const helpScoutMailboxHooks: ConnectorHooks = {
  async write(connector, input, declared) {
    if (input.objectName !== 'customers' || input.type !== 'update') return declared();
    const object = connector.object(input.objectName);
    const id = connector.targetRecordId(input);
    const operations = Object.entries(connector.writeValues(input)).map(([name, value]) => ({
      op: 'replace',
      path: `/${name}`,
      value,
    }));
    const request = connector.request(
      object.write!.update!.request,
      { ...connector.templateValues(input.objectName, object), id, record: operations },
      true,
    );
    await connector.send(input.objectName, request);
    return { recordId: id };
  },
};
