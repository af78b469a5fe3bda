import { OperationEntity, type Operation } from '../db/entities/operation.js';
import { em as newEntityManager, transaction } from '../db/orm.js';
import { logger } from '../logger.js';
import {
  installationWorkflowId,
  readWorkflowId,
  writeWorkflowId,
} from '../temporal/contracts/workflow-ids.js';
import { workflowRunState } from '../temporal/gateway.js';
import { triggerInstallationRead } from './installations/workflow.js';
import { appendLogs } from './operation-logs.js';
import { followLatestOperation } from './operations.js';
import { failTriggeredReads } from './reads/finish.js';
import { finishWrite } from './writes/operation.js';
import { objectNameOf, readMetadataOf, writeMetadataOf } from './operation-metadata.js';
import type { ReadOperationMetadata } from '../schemas/operation-metadata.js';

/**
 * Finds operations left `in_progress` with no live run behind them (a process killed between
 * committing an operation and starting its run, a run terminated from the Temporal UI, an API
 * process killed during a synchronous write) and ends or resumes each, logging why. Safe to run
 * from several processes at once: every change is conditional on the operation still being open.
 */

export interface SweepOptions {
  /** Operations untouched for less than this are never judged (default two minutes). */
  staleAfterMs?: number;
  /** Operations read per query, oldest first. */
  batchSize?: number;
  /** The most operations one sweep judges, so a pass stays short on a busy server. */
  limit?: number;
  projectId?: string;
}

export interface SweepResult {
  examined: number;
  /** Triggered reads whose installation workflow never heard of them, asked for again. */
  resumed: number;
  /** Operations ended as failures: their run is gone or never started. */
  ended: number;
}

const DEFAULT_STALE_AFTER_MS = 2 * 60_000;

export async function sweepStuckOperations(options: SweepOptions = {}): Promise<SweepResult> {
  const result: SweepResult = { examined: 0, resumed: 0, ended: 0 };
  const staleBefore = new Date(Date.now() - (options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS));
  const batchSize = options.batchSize ?? 100;
  const limit = options.limit ?? 1000;
  const em = await newEntityManager();
  // Keyset pages: long reads that are alive stay stale by updateTime, and must not hide the rest.
  for (let after: Pick<Operation, 'updateTime' | 'id'> | undefined; result.examined < limit;) {
    const page = await em.fork().find(
      OperationEntity,
      {
        status: 'in_progress',
        actionType: { $in: ['read', 'write'] },
        updateTime: { $lt: staleBefore },
        ...(options.projectId && { projectId: options.projectId }),
        ...(after && {
          $or: [
            { updateTime: { $gt: after.updateTime } },
            { updateTime: after.updateTime, id: { $gt: after.id } },
          ],
        }),
      },
      { orderBy: { updateTime: 'asc', id: 'asc' }, limit: batchSize },
    );
    if (!page.length) break;
    after = page[page.length - 1];
    for (const operation of page) {
      result.examined++;
      try {
        const outcome = await settle(operation);
        if (outcome) result[outcome]++;
      } catch (error) {
        logger.warn({ err: error, operationId: operation.id }, 'could not judge a stale operation');
      }
    }
  }
  return result;
}

/**
 * Judges one operation now, however recently it was touched: for callers that know its run is
 * gone (a repair mark whose request died). Says what it did, or nothing when it is fine or done.
 */
export async function settleOperation(operationId: string): Promise<'resumed' | 'ended' | undefined> {
  const operation = await (await newEntityManager()).findOne(OperationEntity, { id: operationId });
  if (operation?.status !== 'in_progress') return undefined;
  return settle(operation);
}

async function settle(operation: Operation): Promise<'resumed' | 'ended' | undefined> {
  const read = operation.actionType === 'read' ? readMetadataOf(operation.metadata) : undefined;
  if (operation.actionType === 'write' && writeMetadataOf(operation.metadata).mode !== 'asynchronous') {
    // A synchronous write runs in the API process that answered it, touching the operation after
    // every record: one untouched this long has lost its process.
    return end(
      operation,
      'The API process running this synchronous write stopped before it finished; records before the stop may have been written. Check them before writing again.',
    );
  }
  const workflowId =
    operation.actionType === 'read' ? readWorkflowId(operation.id) : writeWorkflowId(operation.id);
  let run = await workflowRunState(workflowId);
  if (run.state === 'missing' && read?.inline === true) {
    // Run inline by its installation's workflow, which finishes it or hands it to `read/<id>`.
    run = await workflowRunState(installationWorkflowId(operation.installationId));
  }
  if (run.state === 'running') return undefined;
  if (run.state === 'closed')
    return end(operation, `Its run ended (${run.status}) before it recorded an outcome.`);
  // A row too damaged to name its object cannot be asked for again: it is ended below.
  if (read?.readType === 'triggered' && objectNameOf(read)) {
    return resumeTriggeredRead(operation, read);
  }
  return end(
    operation,
    operation.actionType === 'write'
      ? 'The write was accepted but its run never started (the process stopped first); nothing was sent to the provider. Send it again.'
      : 'Its run was never started or is no longer kept.',
  );
}

/**
 * A triggered read's row commits before its installation's workflow is told; a crash in between
 * leaves a read nobody runs. Telling the workflow again is safe: it ignores an operation id it has
 * seen, so a read merely queued behind another is not run twice.
 */
async function resumeTriggeredRead(operation: Operation, read: ReadOperationMetadata): Promise<'resumed'> {
  const objectName = objectNameOf(read);
  const requested = read.requested ?? {};
  const em = await newEntityManager();
  await triggerInstallationRead(em, operation.installationId, {
    operationId: operation.id,
    objectName,
    ...(requested.sinceTimestamp && { sinceTimestamp: requested.sinceTimestamp }),
    ...(requested.untilTimestamp && { untilTimestamp: requested.untilTimestamp }),
  });
  // Touched so the next sweep leaves it to the workflow for a while; logged once, not every sweep.
  const first = read.resumedAfterStall !== true;
  await transaction(async (tx) => {
    const updated = await tx.nativeUpdate(
      OperationEntity,
      { id: operation.id, status: 'in_progress' },
      { updateTime: new Date(), metadata: { ...operation.metadata, resumedAfterStall: true } },
    );
    if (updated && first) {
      appendLogs(tx, operation.projectId, operation.id, [
        {
          severity: 'WARN',
          msg: 'The installation’s workflow had not heard of this read (the process that accepted it stopped first); asked again.',
        },
      ]);
    }
  });
  logger.info({ operationId: operation.id }, 'resumed a triggered read its workflow never heard of');
  return 'resumed';
}

/** Ends the operation as a failure the way its own run would have, events included. */
async function end(operation: Operation, reason: string): Promise<'ended'> {
  logger.warn(
    { operationId: operation.id, actionType: operation.actionType, reason },
    'ending a stuck operation',
  );
  if (operation.actionType === 'write') {
    const { records, mode } = writeMetadataOf(operation.metadata);
    await finishWrite({
      operationId: operation.id,
      outcomes: Array.from({ length: records }, (_, index) => ({ index, success: false, error: reason })),
      logs: [{ severity: 'ERROR', msg: reason, error: reason }],
      notify: mode === 'asynchronous',
    });
    return 'ended';
  }
  // Both ways keep the installation's lastOperationStatus on its newest operation.
  if (operation.actionType === 'read' && readMetadataOf(operation.metadata).readType === 'triggered') {
    await failTriggeredReads([operation.id], reason);
    return 'ended';
  }
  await transaction(async (tx) => {
    const updated = await tx.nativeUpdate(
      OperationEntity,
      { id: operation.id, status: 'in_progress' },
      { status: 'failure', result: reason, updateTime: new Date() },
    );
    if (!updated) return;
    appendLogs(tx, operation.projectId, operation.id, [{ severity: 'ERROR', msg: reason, error: reason }]);
    await tx.flush();
    await followLatestOperation(tx, operation.installationId);
  });
  return 'ended';
}
