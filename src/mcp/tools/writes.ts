import Type, { type Static } from 'typebox';
import { ProblemError } from '../../core/problem.js';
import { ConnectionEntity } from '../../db/entities/connection.js';
import { connectorOf, describeObject } from '../../domain/object-metadata.js';
import { prepareWrite } from '../../domain/writes/prepare.js';
import { writeSynchronously } from '../../domain/writes/run.js';
import type { RecordChangeType } from '../../schemas/write.js';
import { installationObjects, notInInstallation } from '../installation-objects.js';
import { defineTool, type CallContext, type ToolAnnotations } from '../tool.js';

/**
 * Create, update and delete one record, only for write objects of the installation's config, only
 * with fields the provider's metadata marks writable for that change, and deletes only where the
 * config enables them. Each runs as Ferry's synchronous write: an operation of its own, logged.
 */

const ObjectName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'An object the installation writes (list_objects: `write: true`).',
});
const RecordId = Type.String({
  minLength: 1,
  maxLength: 500,
  description: 'The provider’s id of the record.',
});
const Fields = Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.Unknown(), {
  minProperties: 1,
  maxProperties: 200,
  description:
    'Field name → value, in the provider’s field names; only fields describe_object shows as writable.',
});

/** Changes at the provider: flagged destructive, so clients ask their user before running them. */
const changes = (idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: idempotent,
  openWorldHint: true,
});

/** 404 unless the installation's config writes the object (and, for a delete, enables deletes). */
async function assertWritable(call: CallContext, objectName: string, type: RecordChangeType) {
  const objects = await installationObjects(call.em, call.installation);
  const object = objects.write.find((candidate) => candidate.objectName === objectName);
  if (!object) {
    if (objects.read.some((o) => o.objectName === objectName || o.mapToName === objectName)) {
      throw ProblemError.notFound(
        `Object "${objectName}" is read by this installation, not written: its config has no write for it.`,
        `Writable objects: ${objects.write.map((o) => o.objectName).join(', ') || 'none'}.`,
      );
    }
    throw notInInstallation(objects, objectName);
  }
  if (type === 'delete' && !object.deletes) {
    throw new ProblemError({
      status: 403,
      detail: `Deleting ${objectName} records is not enabled for this installation.`,
      remedy:
        'Deletes need deletionSettings.enabled in the installation’s write config; update the record instead, or ask the user.',
      retryable: false,
    });
  }
}

/** Refuses every field the metadata does not mark writable for this change, naming those that are. */
async function assertFieldsWritable(
  call: CallContext,
  objectName: string,
  type: 'create' | 'update',
  fields: Record<string, unknown>,
) {
  const connection = await call.em.findOneOrFail(ConnectionEntity, { id: call.installation.connectionId });
  const metadata = await describeObject(await connectorOf(connection, 'objectMetadata'), { objectName });
  const byName = new Map(
    Object.values(metadata.fields).map((field) => [field.fieldName.toLowerCase(), field]),
  );
  const refusals = Object.keys(fields).flatMap((name) => {
    const field = byName.get(name.toLowerCase());
    if (!field) return [`"${name}" is not a field of ${objectName}`];
    if (field.readOnly) return [`"${name}" is read-only`];
    if (type === 'update' && field.createOnly) return [`"${name}" can be set only when creating`];
    if (type === 'create' && field.updateOnly) return [`"${name}" can be set only when updating`];
    return [];
  });
  if (!refusals.length) return;
  const writable = Object.values(metadata.fields)
    .filter((field) => !field.readOnly && !(type === 'update' ? field.createOnly : field.updateOnly))
    .map((field) => field.fieldName);
  throw new ProblemError({
    status: 422,
    detail: `Not written: ${refusals.join('; ')}.`,
    remedy: `Writable fields of ${objectName} on ${type}: ${writable.join(', ') || 'none'}.`,
    retryable: false,
  });
}

async function write(
  call: CallContext,
  objectName: string,
  type: RecordChangeType,
  record: Record<string, unknown>,
) {
  const prepared = await prepareWrite(call.em, call.scope.projectId, call.scope.integrationId, objectName, {
    groupRef: call.scope.groupRef,
    type,
    mode: 'synchronous',
    record,
  });
  try {
    const answer = await writeSynchronously(call.em, prepared, call.settings.repair.stuckAfterMs);
    call.facts.writeOperationId = answer.operationId;
    return { recordId: answer.result?.recordId, writeOperationId: answer.operationId };
  } catch (error) {
    const operationId = error instanceof ProblemError ? error.context?.operationId : undefined;
    if (typeof operationId === 'string') call.facts.writeOperationId = operationId;
    throw error;
  }
}

const CreateInput = Type.Object({ objectName: ObjectName, fields: Fields }, { additionalProperties: false });

export const createRecord = defineTool({
  name: 'create_record',
  title: 'Create a record',
  description:
    'Creates one record of an object the installation writes, in the customer’s account. Only writable fields (describe_object); the installation’s defaults fill fields left out. Answers the new record’s id.',
  input: CreateInput,
  annotations: changes(false),
  async run(call, args: Static<typeof CreateInput>) {
    await assertWritable(call, args.objectName, 'create');
    await assertFieldsWritable(call, args.objectName, 'create', args.fields);
    return write(call, args.objectName, 'create', args.fields);
  },
});

const UpdateInput = Type.Object(
  { objectName: ObjectName, recordId: RecordId, fields: Fields },
  { additionalProperties: false },
);

export const updateRecord = defineTool({
  name: 'update_record',
  title: 'Update a record',
  description:
    'Changes fields of one record of an object the installation writes, in the customer’s account. Only fields describe_object shows as writable (not read-only, not create-only); fields left out keep their values.',
  input: UpdateInput,
  annotations: changes(true),
  async run(call, args: Static<typeof UpdateInput>) {
    await assertWritable(call, args.objectName, 'update');
    await assertFieldsWritable(call, args.objectName, 'update', args.fields);
    return write(call, args.objectName, 'update', { ...args.fields, id: args.recordId });
  },
});

const DeleteInput = Type.Object(
  { objectName: ObjectName, recordId: RecordId },
  { additionalProperties: false },
);

export const deleteRecord = defineTool({
  name: 'delete_record',
  title: 'Delete a record',
  description:
    'Deletes one record of an object the installation writes, where its config enables deletes (list_objects: `delete: true`). Cannot be undone.',
  input: DeleteInput,
  annotations: changes(true),
  async run(call, args: Static<typeof DeleteInput>) {
    await assertWritable(call, args.objectName, 'delete');
    return write(call, args.objectName, 'delete', { id: args.recordId });
  },
});
