import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { ConnectorInputError } from '../errors.js';

/**
 * Linear's quirk (the rest is `catalog/connectors/linear.json`): its API is GraphQL, so a read names
 * every field it returns. Without chosen fields a read asks for the object's declared fields
 * (`vars.getFields`); chosen fields are checked as GraphQL names, a relation the declaration lists
 * (`team`, `state`, `assignee`…) is asked for as `{ id name }`, and what tells a change or a
 * deletion always comes (`vars.alwaysRead`: `id`, `updatedAt`, `archivedAt`, a user's `active`).
 * Linear has no custom fields: the declaration's static fields are the whole description.
 */

const graphqlName = /^[_A-Za-z][_0-9A-Za-z]*$/;
const scalarTypes = new Set(['ID', 'String', 'Float', 'Int', 'Boolean', 'DateTime', 'TimelessDate', 'JSON']);

function selection(connector: HookContext, objectName: string, wanted: string[] | undefined): string[] {
  const object = connector.object(objectName);
  if (!wanted?.length) return (object.vars?.getFields ?? 'id updatedAt').split(' ');
  const declared = object.fields ?? {};
  const names = [...new Set([...(object.vars?.alwaysRead ?? 'id updatedAt').split(' '), ...wanted])];
  return names.map((name) => {
    if (!graphqlName.test(name)) {
      throw new ConnectorInputError(
        `"${name}" is not a Linear field name (letters, digits and _).`,
        connector.provider,
      );
    }
    const field = Object.hasOwn(declared, name) ? declared[name] : undefined;
    return field && !scalarTypes.has(field.providerType) ? `${name} { id name }` : name;
  });
}

export const linearHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (input.pageToken) return declared();
    return connector.readDeclaredPage({
      ...input,
      fields: selection(connector, input.objectName, input.fields),
    });
  },
};
