import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import { DestinationEntity, OperationEntity, type Operation } from '../../db/entities/operation.js';
import { em as newEntityManager } from '../../db/orm.js';
import { triggerInstallationRead } from '../installations/workflow.js';
import { withRepairMark } from '../marked-changes.js';
import { createReadOperation } from './read-operation.js';
import { findInstallationForGroup, readObjectSetup, type ReadObjectSetup } from './installation-context.js';
import { drainStoredPages, grantPages } from './stored-pages.js';
import type { Installation } from '../../db/entities/installation.js';
import { readMetadataOf } from '../operation-metadata.js';
import type { DeliverySettings } from '../destination-delivery.js';

/**
 * What the read host asks of reads: trigger one now, or send pages kept for `delivery.mode:
 * onRequest`; and what the api host reports about backfills.
 */

async function requireReadObject(
  em: EntityManager,
  installation: Installation,
  objectName: string,
): Promise<ReadObjectSetup> {
  const setup = await readObjectSetup(em, installation, objectName);
  if (!setup) {
    throw ProblemError.invalid(
      [
        {
          in: 'path',
          name: 'objectName',
          value: objectName,
          detail: `the installation does not read "${objectName}": it is not a read object of the integration, or the installation did not select it`,
        },
      ],
      `Object "${objectName}" is not read by this installation.`,
    );
  }
  return setup;
}

export interface TriggerReadInput {
  groupRef: string;
  sinceTimestamp?: string;
  untilTimestamp?: string;
}

/**
 * Records the triggered read's operation, then asks the installation's workflow to run it (starting
 * the workflow from PostgreSQL if none runs). The operation exists before the workflow hears of it,
 * so the caller gets its id at once; when the workflow cannot be told, the operation is removed
 * again and the caller hears why (503).
 */
export async function triggerRead(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  objectName: string,
  input: TriggerReadInput,
): Promise<{ operationId: string }> {
  if (
    input.sinceTimestamp &&
    input.untilTimestamp &&
    Date.parse(input.sinceTimestamp) >= Date.parse(input.untilTimestamp)
  ) {
    throw ProblemError.invalid([
      {
        in: 'body',
        name: 'untilTimestamp',
        value: input.untilTimestamp,
        detail: 'untilTimestamp must be after sinceTimestamp',
      },
    ]);
  }
  const { installation } = await findInstallationForGroup(em, projectId, integrationIdOrName, input.groupRef);
  await requireReadObject(em, installation, objectName);
  const operationId = randomUUID();
  await withRepairMark(
    { projectId, installationId: installation.id, operationId, reason: 'trigger a read' },
    () => recordAndTell(em, installation, objectName, operationId, input),
  );
  return { operationId };
}

/**
 * Triggered reads of one object waiting or running at once. The installation's workflow queues them
 * in its state, which Temporal carries in every continue-as-new within its payload limit: beyond
 * this many a trigger is refused (429) rather than grow it without bound.
 */
export const MAX_QUEUED_TRIGGERED_READS = 50;
/** Triggered reads run one after the other, each taking seconds to minutes: when to ask again. */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 60;

/** Refuses a trigger when the object's queue is full; holds the object's trigger lock until commit. */
async function requireQueuePlace(tx: EntityManager, installation: Installation, objectName: string) {
  // Two triggers at once cannot both take the last place: they count and record one after the other.
  await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [
    `triggered-reads/${installation.id}/${objectName}`,
  ]);
  const [{ queued }] = await tx.execute<{ queued: number }[]>(
    `select count(*)::int as queued from operations
      where project_id = ? and installation_id = ? and action_type = 'read' and status = 'in_progress'
        and metadata->>'readType' = 'triggered' and metadata->'progress'->>'objectName' = ?`,
    [installation.projectId, installation.id, objectName],
  );
  if (queued >= MAX_QUEUED_TRIGGERED_READS) {
    throw new ProblemError({
      status: 429,
      detail: `${queued} triggered reads of "${objectName}" are already waiting or running for this installation, the most it queues (${MAX_QUEUED_TRIGGERED_READS}); try again once some have finished.`,
      retryable: true,
      retryAfter: QUEUE_FULL_RETRY_AFTER_SECONDS,
    });
  }
}

async function recordAndTell(
  em: EntityManager,
  installation: Installation,
  objectName: string,
  operationId: string,
  input: TriggerReadInput,
): Promise<void> {
  await em.transactional(async (tx) => {
    await requireQueuePlace(tx, installation, objectName);
    createReadOperation(tx, installation, {
      operationId,
      objectName,
      readType: 'triggered',
      metadata: {
        backfill: !input.sinceTimestamp,
        requested: {
          ...(input.sinceTimestamp && { sinceTimestamp: input.sinceTimestamp }),
          ...(input.untilTimestamp && { untilTimestamp: input.untilTimestamp }),
        },
      },
    });
  });
  try {
    await triggerInstallationRead(em, installation.id, {
      operationId,
      objectName,
      ...(input.sinceTimestamp && { sinceTimestamp: input.sinceTimestamp }),
      ...(input.untilTimestamp && { untilTimestamp: input.untilTimestamp }),
    });
  } catch (error) {
    // The workflow never heard of the read: take its operation back, so none stays in progress.
    await (await newEntityManager()).nativeDelete(OperationEntity, { id: operationId });
    throw error;
  }
}

/**
 * Sends up to `pages` stored pages now, oldest first; what is left of the request is sent as soon as
 * the object's reads store more.
 */
export async function deliverResults(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  objectName: string,
  input: { groupRef: string; pages: number },
  settings: DeliverySettings,
): Promise<void> {
  const { installation } = await findInstallationForGroup(em, projectId, integrationIdOrName, input.groupRef);
  const setup = await readObjectSetup(em, installation, objectName);
  if (!setup) throw ProblemError.notFound(`Object "${objectName}" is not read by this installation.`);
  if (setup.declared.delivery?.mode !== 'onRequest') {
    throw ProblemError.invalid(
      [
        {
          in: 'path',
          name: 'objectName',
          value: objectName,
          detail: `"${objectName}" is delivered automatically; only objects with delivery.mode onRequest keep pages to deliver on request`,
        },
      ],
      `Object "${objectName}" is not delivered on request.`,
    );
  }
  const destination = await em.findOne(DestinationEntity, { projectId, name: setup.destinationName });
  if (!destination) {
    throw ProblemError.conflict(
      `Destination "${setup.destinationName}" of object "${objectName}" does not exist.`,
    );
  }
  const object = { projectId, installationId: installation.id, objectName };
  await grantPages(em, object, input.pages);
  const drained = await drainStoredPages(object, destination.id, settings);
  if (drained.failure) {
    throw new ProblemError({
      status: 502,
      detail: `Delivered ${drained.delivered} page(s); then destination "${destination.name}" failed (${drained.failure.error}). The remaining pages stay requested and are sent with the next request or read.`,
      retryable: drained.failure.retryable,
    });
  }
}

/** The newest backfill (or full-history triggered read) of an object; 404 when there was none. */
export async function latestBackfill(
  em: EntityManager,
  installation: Installation,
  objectName: string,
): Promise<Operation> {
  const rows = await em.execute<{ id: string }[]>(
    `select id from operations
     where project_id = ? and installation_id = ? and action_type = 'read'
       and metadata->>'backfill' = 'true' and metadata->'progress'->>'objectName' = ?
     order by seq desc limit 1`,
    [installation.projectId, installation.id, objectName],
  );
  const operation = rows.length ? await em.findOne(OperationEntity, { id: rows[0].id }) : null;
  if (!operation) throw ProblemError.notFound(`Object "${objectName}" of this installation has no backfill.`);
  return operation;
}

/**
 * A backfill's progress. The total is the provider's count when it offers one; a backfill that
 * succeeded without one reports what it read. A failed one keeps it unknown rather than claim 100 %.
 */
export function backfillProgressView(operation: Operation) {
  const progress = readMetadataOf(operation.metadata).progress ?? {};
  const recordsProcessed = progress.recordsProcessed ?? 0;
  const recordsEstimatedTotal =
    progress.recordsEstimatedTotal ?? (operation.status === 'success' ? recordsProcessed : undefined);
  return {
    operationId: operation.id,
    recordsProcessed,
    ...(recordsEstimatedTotal !== undefined && { recordsEstimatedTotal }),
    createTime: operation.createTime.toISOString(),
    updateTime: operation.updateTime.toISOString(),
  };
}
