import Type from 'typebox';
import { ConnectionEntity } from '../../db/entities/connection.js';
import { connectorOf, describeObject } from '../../domain/object-metadata.js';
import { connectorFor } from '../../providers/connectors/index.js';
import { connectionTarget } from '../../domain/credentials.js';
import type { FieldMetadata } from '../../schemas/object-metadata.js';
import { installationObjects, objectOfInstallation } from '../installation-objects.js';
import { defineTool, readOnly } from '../tool.js';

/** What an agent may do with the installation's objects, and what each object's fields are. */

/** Allowed values listed per field at most: a select field with thousands of options stays readable. */
const MAX_VALUES = 50;

const ObjectName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'An object of the installation, as list_objects names it.',
});

export const listObjects = defineTool({
  name: 'list_objects',
  title: 'List objects',
  description:
    'Lists the objects of this installation and what you may do with each: read (read_records, search_records), write (create_record, update_record) and delete (delete_record); and whether the proxy is enabled. Call it first.',
  input: Type.Object({}, { additionalProperties: false }),
  annotations: { ...readOnly, openWorldHint: false },
  async run({ em, installation, settings }) {
    const objects = await installationObjects(em, installation);
    const connector = connectorFor(await connectionTarget(installation.connectionId));
    const names = [
      ...new Set([...objects.read.map((o) => o.objectName), ...objects.write.map((o) => o.objectName)]),
    ];
    return {
      provider: objects.provider,
      objects: names.map((objectName) => {
        const read = objects.read.find((object) => object.objectName === objectName);
        const write = objects.write.find((object) => object.objectName === objectName);
        return {
          name: read?.mapToName ?? objectName,
          ...(read?.mapToName && { providerName: objectName }),
          read: Boolean(read),
          search: Boolean(read) && connector.capabilities.search,
          write: Boolean(write) && connector.capabilities.write,
          delete: Boolean(write?.deletes) && connector.capabilities.delete,
        };
      }),
      proxy: objects.proxyEnabled
        ? { enabled: true, methods: settings.mcp.proxyMethods }
        : { enabled: false },
    };
  },
});

function fieldView(field: FieldMetadata) {
  return {
    name: field.fieldName,
    displayName: field.displayName,
    type: field.valueType,
    ...(field.readOnly && { readOnly: true }),
    ...(field.createOnly && { createOnly: true }),
    ...(field.updateOnly && { updateOnly: true }),
    ...(field.isRequired && { required: true }),
    ...(field.isCustom && { custom: true }),
    ...(field.values && {
      values: field.values.slice(0, MAX_VALUES).map((value) => value.value),
      ...(field.values.length > MAX_VALUES && { moreValues: field.values.length - MAX_VALUES }),
    }),
  };
}

export const describeObjectTool = defineTool({
  name: 'describe_object',
  title: 'Describe an object',
  description:
    'Describes the fields of one object of this installation, from the provider: name, type, allowed values of select fields, and which are read-only (never writable), create-only or update-only, or required on create.',
  input: Type.Object({ objectName: ObjectName }, { additionalProperties: false }),
  annotations: readOnly,
  async run({ em, installation }, { objectName }) {
    const objects = await installationObjects(em, installation);
    const providerName = objectOfInstallation(objects, objectName);
    const connection = await em.findOneOrFail(ConnectionEntity, { id: installation.connectionId });
    const connector = await connectorOf(connection, 'objectMetadata');
    const metadata = await describeObject(connector, { objectName: providerName });
    return {
      name: objectName,
      ...(metadata.displayName && { displayName: metadata.displayName }),
      fields: Object.values(metadata.fields).map(fieldView),
    };
  },
});
