import { randomUUID } from 'node:crypto';
import { InstallationEntity } from '../db/entities/installation.js';
import { RevisionEntity } from '../db/entities/integration.js';
import { DestinationEntity, OperationEntity } from '../db/entities/operation.js';
import { SchemaSnapshotEntity, SchemaWatchMessageEntity } from '../db/entities/schema-watch.js';
import { em as newEntityManager, transaction } from '../db/orm.js';
import { stableMessageId } from '../delivery/messages.js';
import { connectorFor } from '../providers/connectors/index.js';
import { describeError } from '../providers/errors.js';
import type { WatchSchema } from '../schemas/integration-content.js';
import type { FieldMetadata } from '../schemas/object-metadata.js';
import { connectionTarget } from './credentials.js';
import type { SingleMessageOutcome } from '../delivery/single-message.js';
import { attemptDelivery, type DeliverySettings } from './destination-delivery.js';
import { currentConfig } from './installations/event-data.js';
import { readPlan } from './installations/read-plan.js';
import { appendLogs, type LogEntry } from './operation-logs.js';
import { createOperation } from './operations.js';
import { requestLog } from './reads/connector.js';
import { installationParties, resultMessageContext } from './reads/installation-context.js';
import { schemaWatchMetadataOf } from './operation-metadata.js';

/**
 * watchSchema: on its schedule, each installed read object's field metadata is compared with the
 * snapshot taken last time. Changes become one `schema.watch` message per object, written with the
 * new snapshot in one transaction and then delivered through the same signed, retried delivery as
 * reads; the first run only takes the snapshot. Every run is a `schema.watch` operation with logs.
 */

export type FieldsByName = Record<string, FieldMetadata>;

export interface SchemaChanges {
  createdFields: FieldMetadata[];
  deletedFields: FieldMetadata[];
  changedFields: { oldSchema: FieldMetadata; newSchema: FieldMetadata }[];
}

/** Which kinds of change the manifest watches (`enabled: always`). */
export function watchedKinds(watch: WatchSchema): { created: boolean; deleted: boolean; changed: boolean } {
  const on = (event: { enabled?: string } | undefined) => event?.enabled === 'always';
  return {
    created: on(watch.allObjects?.fieldCreated),
    deleted: on(watch.allObjects?.fieldDeleted),
    changed: on(watch.allObjects?.fieldChanged),
  };
}

/** What changed between two snapshots, keeping only the watched kinds; field order follows the names. */
export function schemaChanges(
  before: FieldsByName,
  after: FieldsByName,
  kinds: { created: boolean; deleted: boolean; changed: boolean },
): SchemaChanges {
  const names = (fields: FieldsByName) => Object.keys(fields).sort();
  return {
    createdFields: kinds.created
      ? names(after)
          .filter((name) => !Object.hasOwn(before, name))
          .map((name) => after[name])
      : [],
    deletedFields: kinds.deleted
      ? names(before)
          .filter((name) => !Object.hasOwn(after, name))
          .map((name) => before[name])
      : [],
    changedFields: kinds.changed
      ? names(after)
          .filter((name) => Object.hasOwn(before, name) && !sameField(before[name], after[name]))
          .map((name) => ({ oldSchema: before[name], newSchema: after[name] }))
      : [],
  };
}

function sameField(a: FieldMetadata, b: FieldMetadata): boolean {
  return canonical(a) === canonical(b);
}

/** JSON with keys sorted, so a provider listing properties in another order is no change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([x], [y]) => x.localeCompare(y)))
      : inner,
  );
}

function changeCount(changes: SchemaChanges): number {
  return changes.createdFields.length + changes.deletedFields.length + changes.changedFields.length;
}

export interface SchemaWatchRun {
  /** The operation recording the run; absent when the installation watches no schema (any more). */
  operationId?: string;
  projectId?: string;
  /** Messages to deliver, in order. */
  messageIds: string[];
}

/** One run of the installation's schema watch: compare, keep the new snapshots, queue the messages. */
export async function runSchemaWatch(
  installationId: string,
  runId: string,
  runTime = new Date(),
): Promise<SchemaWatchRun> {
  const em = await newEntityManager();
  const recorded = await em.findOne(OperationEntity, { id: runId });
  if (recorded) {
    // The activity ran before and committed: answer what that run queued.
    const rows = await em.find(
      SchemaWatchMessageEntity,
      { operationId: runId },
      { orderBy: { createTime: 'asc', id: 'asc' } },
    );
    return { operationId: runId, projectId: recorded.projectId, messageIds: rows.map((row) => row.id) };
  }
  const installation = await em.findOne(InstallationEntity, { id: installationId });
  if (!installation) return { messageIds: [] };
  const installationConfig = await currentConfig(em, installation);
  const revision = await em.findOneOrFail(RevisionEntity, { id: installationConfig.revisionId });
  const watch = revision.content.watchSchema;
  if (!watch) return { messageIds: [] };
  const content = installationConfig.content;
  const objects = readPlan(content, revision.content).map((plan) => plan.objectName);
  const declared = new Map(
    (revision.content.read?.objects ?? []).map((object) => [object.objectName, object]),
  );
  const parties = await installationParties(em, installation);
  const destination = await em.findOne(DestinationEntity, {
    projectId: installation.projectId,
    name: watch.destination,
  });
  const snapshots = new Map(
    (await em.find(SchemaSnapshotEntity, { installationId })).map((row) => [row.objectName, row]),
  );

  const logs: LogEntry[] = [];
  const connector = connectorFor(await connectionTarget(installation.connectionId), {
    onRequest: (entry) => logs.push(requestLog(entry)),
  });
  const kinds = watchedKinds(watch);
  const current = new Map<string, FieldsByName>();
  const failed: string[] = [];
  const found: { objectName: string; changes: SchemaChanges }[] = [];
  for (const objectName of objects) {
    try {
      const metadata = await connector.listObjectMetadata(objectName);
      current.set(objectName, metadata.fields as FieldsByName);
    } catch (error) {
      failed.push(objectName);
      logs.push({
        severity: 'ERROR',
        msg: `Could not describe ${objectName}: ${describeError(error)}`,
        error: describeError(error),
      });
      continue;
    }
    const before = snapshots.get(objectName);
    if (!before) {
      logs.push({
        severity: 'INFO',
        msg: `First look at ${objectName}: its fields are the snapshot from now on.`,
      });
      continue;
    }
    const changes = schemaChanges(before.fields as FieldsByName, current.get(objectName)!, kinds);
    const count = changeCount(changes);
    logs.push({
      severity: 'INFO',
      msg: count
        ? `${objectName}: ${changes.createdFields.length} created, ${changes.deletedFields.length} deleted, ${changes.changedFields.length} changed field(s).`
        : `${objectName}: no watched field changes.`,
    });
    if (count) found.push({ objectName, changes });
  }
  if (found.length && !destination) {
    logs.push({
      severity: 'ERROR',
      msg: `Destination "${watch.destination}" does not exist; the changes found are not delivered.`,
    });
  }

  return transaction(async (tx) => {
    const operation = createOperation(tx, {
      id: runId,
      projectId: installation.projectId,
      integrationId: installation.integrationId,
      installationId: installation.id,
      configId: installation.configId,
      actionType: 'schema.watch',
      metadata: {
        objects,
        destination: watch.destination,
        ...(destination && { destinationId: destination.id }),
      },
    });
    tx.persist(operation);
    for (const [objectName, fields] of current) {
      const existing = snapshots.get(objectName);
      if (existing) {
        await tx.nativeUpdate(
          SchemaSnapshotEntity,
          { installationId, objectName },
          { fields, takenAt: runTime },
        );
      } else {
        tx.create(SchemaSnapshotEntity, { installationId, objectName, fields, takenAt: runTime });
      }
    }
    const messageIds: string[] = [];
    if (destination) {
      for (const { objectName, changes } of found) {
        const mapped = declared.get(objectName)?.mapToName;
        const message = {
          ...resultMessageContext(installation, parties, {
            action: 'schema.watch',
            objectName,
            mapToName: mapped,
            operationTime: runTime.toISOString(),
          }),
          resultInfo: { type: 'inline', numRecords: changeCount(changes) },
          result: changes,
        };
        const row = tx.create(SchemaWatchMessageEntity, {
          id: randomUUID(),
          projectId: installation.projectId,
          installationId,
          operationId: operation.id,
          objectName,
          message: JSON.stringify(message),
          createTime: runTime,
        });
        messageIds.push(row.id);
      }
    }
    const done = messageIds.length === 0;
    if (done) {
      operation.status = failed.length || (found.length && !destination) ? 'failure' : 'success';
      operation.result = failed.length
        ? `Could not describe ${failed.join(', ')}.`
        : found.length && !destination
          ? `Destination "${watch.destination}" does not exist.`
          : found.length
            ? 'Schema changes found.'
            : 'No watched schema changes.';
    }
    appendLogs(tx, installation.projectId, operation.id, [
      {
        severity: 'INFO',
        msg: `Watching the fields of ${objects.join(', ') || 'no objects'}; changes go to destination "${watch.destination}".`,
      },
      ...logs,
    ]);
    return { operationId: operation.id, projectId: installation.projectId, messageIds };
  });
}

export type SchemaWatchAttemptOutcome = SingleMessageOutcome;

/** One attempt to deliver one `schema.watch` message; every attempt carries the same id and bytes. */
export async function attemptSchemaWatchDelivery(
  messageId: string,
  attempt: number,
  settings: DeliverySettings,
): Promise<SchemaWatchAttemptOutcome> {
  const em = await newEntityManager();
  const row = await em.findOneOrFail(SchemaWatchMessageEntity, { id: messageId });
  const operation = await em.findOneOrFail(OperationEntity, { id: row.operationId });
  return attemptDelivery(
    {
      projectId: row.projectId,
      // No destination id: the destination did not exist, and the attempt says so.
      destinationId: schemaWatchMetadataOf(operation.metadata).destinationId ?? '',
      messageId: stableMessageId('schema.watch', row.id),
      body: row.message,
      kind: 'record',
      operationId: operation.id,
    },
    settings,
    { attempt },
  );
}

/** Ends the run's operation once its messages were delivered or given up; again changes nothing. */
export async function finishSchemaWatch(
  operationId: string,
  outcome: { delivered: number; failed: number; error?: string },
): Promise<void> {
  await transaction(async (tx) => {
    const operation = await tx.findOne(OperationEntity, { id: operationId });
    if (!operation || operation.status !== 'in_progress') return;
    const { destination } = schemaWatchMetadataOf(operation.metadata);
    operation.status = outcome.failed ? 'failure' : 'success';
    operation.result = outcome.failed
      ? `Could not deliver ${outcome.failed} schema change message(s) to destination "${destination}": ${outcome.error ?? 'unknown error'}`
      : `Delivered ${outcome.delivered} schema change message(s) to destination "${destination}".`;
    operation.updateTime = new Date();
    appendLogs(tx, operation.projectId, operation.id, [
      outcome.failed
        ? { severity: 'ERROR', msg: operation.result, error: outcome.error }
        : { severity: 'INFO', msg: operation.result },
    ]);
  });
}
