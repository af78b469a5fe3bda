import { ProblemError } from '../../core/problem.js';
import { InstallationEntity } from '../../db/entities/installation.js';
import { OperationEntity } from '../../db/entities/operation.js';
import { transaction } from '../../db/orm.js';
import type { ReadType } from '../../schemas/reads.js';
import { appendLogs } from '../operation-logs.js';
import { createReadOperation } from './read-operation.js';

/** A read an operator asked for from the installation's workflow (a triggered read or a backfill). */
export interface RequestedRead {
  operationId: string;
  objectName: string;
  readType: ReadType;
  sinceTimestamp?: string;
  untilTimestamp?: string;
  /** The window asked for replaces the manifest's backfill period; absent since then means full history. */
  requestedWindow: boolean;
}

/**
 * Records the requested read's operation `in_progress`, with the window asked for, before the
 * workflow queues it: the operator gets its id, and the read finds what was asked in its metadata.
 * Recording the same operation again changes nothing (a retried activity).
 */
export async function recordRequestedRead(installationId: string, read: RequestedRead): Promise<void> {
  await transaction(async (tx) => {
    if (await tx.count(OperationEntity, { id: read.operationId })) return;
    const installation = await tx.findOne(InstallationEntity, { id: installationId });
    if (!installation) throw ProblemError.notFound(`Installation ${installationId} no longer exists.`);
    const requested = {
      ...(read.sinceTimestamp && { sinceTimestamp: read.sinceTimestamp }),
      ...(read.untilTimestamp && { untilTimestamp: read.untilTimestamp }),
    };
    createReadOperation(tx, installation, {
      operationId: read.operationId,
      objectName: read.objectName,
      readType: read.readType,
      metadata: {
        backfill: read.readType === 'backfill' || !read.sinceTimestamp,
        requested,
        ...(read.requestedWindow && { requestedWindow: true }),
        requestedBy: 'operator',
      },
    });
    appendLogs(tx, installation.projectId, read.operationId, [
      {
        severity: 'INFO',
        msg: `An operator asked for a ${read.readType} read of ${read.objectName} from the installation's workflow.`,
        details: { requested, requestedWindow: read.requestedWindow },
      },
    ]);
  });
}
