import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../core/ids.js';
import { ProblemError } from '../core/problem.js';
import { InstallationEntity } from '../db/entities/installation.js';
import { OperationEntity } from '../db/entities/operation.js';
import type { Project } from '../db/entities/project.js';
import { ReadCheckpointEntity } from '../db/entities/read-checkpoint.js';
import { em as newEntityManager, transaction } from '../db/orm.js';
import type { ReadType } from '../schemas/reads.js';
import type { ReadOperationMetadata } from '../schemas/operation-metadata.js';
import type { RetryResult } from '../temporal/contracts/installation.js';
import {
  retryInInstallation,
  startWriteWorkflow,
  writeWorkflowInput,
  WorkflowRefusedError,
} from '../temporal/gateway.js';
import { runIdentityOf, tellInstallation } from './installations/workflow.js';
import { appendLogs } from './operation-logs.js';
import { objectNameOf, readMetadataOf, writeMetadataOf } from './operation-metadata.js';
import { createOperation } from './operations.js';
import { createReadOperation } from './reads/read-operation.js';
import { readPlanOf } from './reads/plan.js';

/**
 * Retrying a failed operation as a new one linked to it (`retryOf` in its metadata): a read resumes
 * from its last delivered page, an asynchronous write sends only the records that failed. A read's
 * retry runs in the installation's workflow, in turn with the object's other reads; a write's runs
 * in a write workflow of its own.
 */

export interface FailedOperation {
  actionType: 'read' | 'write';
  projectId: string;
  installationId: string;
  objectName?: string;
  readType?: ReadType;
}

/** The operation, if it can be retried; a 404, 409 or 422 problem saying why not otherwise. */
export async function describeFailedOperation(
  operationId: string,
  scope: { projectId?: string; installationId?: string },
): Promise<FailedOperation> {
  const em = await newEntityManager();
  const operation = await em.findOne(OperationEntity, { id: operationId, ...scope });
  if (!operation) throw ProblemError.notFound(`Operation ${operationId} was not found.`);
  if (operation.status !== 'failure') {
    throw ProblemError.conflict(
      `Operation ${operationId} is ${operation.status}; only a failed operation can be retried.`,
    );
  }
  const base = { projectId: operation.projectId, installationId: operation.installationId };
  if (operation.actionType === 'read') {
    const metadata = readMetadataOf(operation.metadata);
    return { ...base, actionType: 'read', objectName: objectNameOf(metadata), readType: metadata.readType };
  }
  if (operation.actionType === 'write') {
    const metadata = writeMetadataOf(operation.metadata);
    if (metadata.mode !== 'asynchronous') {
      throw new ProblemError({
        status: 422,
        detail: `Operation ${operationId} was a synchronous write, answered when it was sent; send the records again.`,
      });
    }
    return { ...base, actionType: 'write', objectName: objectNameOf(metadata) };
  }
  throw new ProblemError({ status: 422, detail: `A ${operation.actionType} operation cannot be retried.` });
}

/** Whether a read had delivered records before it failed (its progress says so even once its checkpoint is gone). */
function readBefore(metadata: ReadOperationMetadata): boolean {
  return (metadata.progress?.recordsProcessed ?? 0) > 0;
}

function retriedLog(retryId: string) {
  return { severity: 'INFO' as const, msg: `Retried as operation ${retryId}.`, details: { retryId } };
}

/**
 * The retry's operation and checkpoint: the failed read's plan and position, so the retry reads from
 * the page that failed, skipping that page's messages already delivered. Idempotent.
 */
export async function prepareReadRetry(operationId: string, newOperationId: string): Promise<void> {
  await transaction(async (tx) => {
    if (await tx.count(OperationEntity, { id: newOperationId })) return;
    const failed = await tx.findOneOrFail(OperationEntity, { id: operationId });
    const installation = await tx.findOne(InstallationEntity, { id: failed.installationId });
    if (!installation) throw ProblemError.notFound(`Installation ${failed.installationId} no longer exists.`);
    const checkpoint = await tx.findOne(ReadCheckpointEntity, { operationId });
    const metadata = readMetadataOf(failed.metadata);
    const { backfill, requested, requestedWindow, window, destination } = metadata;
    createReadOperation(tx, installation, {
      operationId: newOperationId,
      objectName: objectNameOf(metadata),
      readType: metadata.readType,
      metadata: { backfill, requested, requestedWindow, window, destination, retryOf: operationId },
    });
    const now = new Date();
    if (checkpoint && !checkpoint.done) {
      const plan = readPlanOf(checkpoint.plan);
      tx.create(ReadCheckpointEntity, {
        ...checkpoint,
        operationId: newOperationId,
        plan: {
          ...plan,
          context: { ...plan.context, operationId: newOperationId, operationTime: now.toISOString() },
        },
        recordsProcessed: 0,
        createTime: now,
        updateTime: now,
      });
    }
    appendLogs(tx, installation.projectId, newOperationId, [
      {
        severity: 'INFO',
        msg:
          checkpoint && !checkpoint.done
            ? `Retries operation ${operationId} from page ${checkpoint.pageIndex + 1}, after its last delivered page.`
            : readBefore(metadata)
              ? `Retries operation ${operationId} from the start: its checkpoint is no longer kept (retention).`
              : `Retries operation ${operationId} from the start: it failed before reading a page.`,
        details: { retryOf: operationId, ...(checkpoint && { pageIndex: checkpoint.pageIndex }) },
      },
    ]);
    appendLogs(tx, installation.projectId, operationId, [retriedLog(newOperationId)]);
  });
}

/** Writes again, in a new write workflow, the records of a failed asynchronous write that failed. Idempotent. */
export async function retryAsyncWrite(operationId: string, newOperationId: string): Promise<void> {
  const em = await newEntityManager();
  if (await em.count(OperationEntity, { id: newOperationId })) return;
  const failed = await em.findOneOrFail(OperationEntity, { id: operationId });
  const input = await writeWorkflowInput(operationId);
  if (!input) {
    throw new ProblemError({
      status: 422,
      detail: `The records of operation ${operationId} are no longer kept (Temporal's retention ended); send them again.`,
    });
  }
  const metadata = writeMetadataOf(failed.metadata);
  const failedIndexes = (metadata.errors ?? []).map((error) => error.index);
  const items = failedIndexes.map((index) => input.items[index]).filter(Boolean);
  if (!items.length) {
    throw ProblemError.conflict(`Operation ${operationId} has no failed records to write again.`);
  }
  await transaction(async (tx) => {
    const installation = await tx.findOneOrFail(InstallationEntity, { id: failed.installationId });
    tx.persist(
      createOperation(tx, {
        id: newOperationId,
        projectId: failed.projectId,
        integrationId: failed.integrationId,
        installationId: failed.installationId,
        configId: installation.configId,
        actionType: 'write',
        metadata: {
          objects: metadata.objects,
          writeType: metadata.writeType,
          mode: 'asynchronous',
          records: items.length,
          retryOf: operationId,
        },
      }),
    );
    installation.lastOperationStatus = 'in_progress';
    appendLogs(tx, failed.projectId, operationId, [retriedLog(newOperationId)]);
  });
  const owner = await em.findOneOrFail(InstallationEntity, { id: failed.installationId });
  await startWriteWorkflow({ ...input, operationId: newOperationId, items }, await runIdentityOf(em, owner));
}

/**
 * `POST .../operations/{operationId}:retry`: a read's retry goes through the installation's
 * workflow (so it never overlaps another read of its object); a write's starts at once.
 */
export async function retryOperation(
  em: EntityManager,
  project: Project,
  operationId: string,
): Promise<RetryResult> {
  if (!isUuid(operationId)) throw ProblemError.notFound(`Operation ${operationId} was not found.`);
  const failed = await describeFailedOperation(operationId, { projectId: project.id });
  if (failed.actionType === 'write') {
    const newOperationId = randomUUID();
    await retryAsyncWrite(operationId, newOperationId);
    return { operationId: newOperationId, retryOf: operationId, actionType: 'write' };
  }
  try {
    return await tellInstallation(em, failed.installationId, () =>
      retryInInstallation(failed.installationId, operationId),
    );
  } catch (error) {
    if (!(error instanceof WorkflowRefusedError)) throw error;
    throw ProblemError.conflict(error.message);
  }
}
