import type { EntityManager } from '@mikro-orm/postgresql';
import { InstallationEntity } from '../../db/entities/installation.js';
import { OperationEntity, type Operation } from '../../db/entities/operation.js';
import { transaction } from '../../db/orm.js';
import { writesFinished } from '../../metrics.js';
import type { RecordChangeType } from '../../schemas/write.js';
import type { WriteOutcome } from '../../temporal/contracts/write.js';
import { recordEvent } from '../events.js';
import { appendLogs, type LogEntry } from '../operation-logs.js';
import { createOperation, followLatestOperation } from '../operations.js';
import { installationEventBase, installationParties } from '../reads/installation-context.js';
import type { PreparedWrite } from './prepare.js';
import { amendMetadata, objectNameOf, writeMetadataOf } from '../operation-metadata.js';

/**
 * A write's operation: recorded `in_progress` when the write starts, and finished with the outcome
 * of each record, its logs and, for asynchronous writes, the `write.async.done` event.
 */

const pastTense: Record<RecordChangeType, string> = {
  create: 'Created',
  update: 'Updated',
  delete: 'Deleted',
};

function outcomeLog(objectName: string, type: RecordChangeType, outcome: WriteOutcome): LogEntry {
  return outcome.success
    ? {
        severity: 'INFO',
        msg: `${pastTense[type]} ${objectName} record ${outcome.recordId}`,
        details: { index: outcome.index, recordId: outcome.recordId },
      }
    : {
        severity: 'ERROR',
        msg: `Could not ${type} ${objectName} record${outcome.recordId ? ` ${outcome.recordId}` : ''}`,
        error: outcome.error,
        details: { index: outcome.index, ...(outcome.recordId && { recordId: outcome.recordId }) },
      };
}

export async function newWriteOperation(
  em: EntityManager,
  write: PreparedWrite,
  operationId: string,
): Promise<Operation> {
  const operation = createOperation(em, {
    id: operationId,
    projectId: write.installation.projectId,
    integrationId: write.installation.integrationId,
    installationId: write.installation.id,
    configId: write.installation.configId,
    actionType: 'write',
    metadata: {
      objects: [write.objectName],
      writeType: write.type,
      mode: write.mode,
      records: write.items.length,
    },
  });
  await em.nativeUpdate(
    InstallationEntity,
    { id: write.installation.id },
    { lastOperationStatus: 'in_progress' },
  );
  return operation;
}

/**
 * Marks the operation done with the outcomes, in one transaction with its logs and (asynchronous
 * writes) the `write.async.done` event. Does nothing for an operation already finished, so a
 * retried activity cannot report twice.
 */
export async function finishWrite(input: {
  operationId: string;
  outcomes: WriteOutcome[];
  logs?: LogEntry[];
  notify: boolean;
}): Promise<void> {
  const ended = await transaction(async (em) => {
    const operation = await em.findOneOrFail(OperationEntity, { id: input.operationId });
    if (operation.status !== 'in_progress') return undefined;
    const installation = await em.findOneOrFail(InstallationEntity, { id: operation.installationId });
    const metadata = writeMetadataOf(operation.metadata);
    const objectName = objectNameOf(metadata);
    const type = metadata.writeType;
    const succeeded = input.outcomes.filter((outcome) => outcome.success);
    const successfulRecordIds = succeeded.map((outcome) => outcome.recordId!);
    const errors = input.outcomes
      .filter((outcome) => !outcome.success)
      .map((outcome) => ({
        index: outcome.index,
        ...(outcome.recordId && { recordId: outcome.recordId }),
        error: outcome.error,
      }));
    const success = errors.length === 0;
    operation.status = success ? 'success' : 'failure';
    operation.result = `${pastTense[type]} ${succeeded.length} of ${input.outcomes.length} ${objectName} records`;
    amendMetadata(operation, 'write', { successfulRecordIds, ...(errors.length && { errors }) });
    operation.updateTime = new Date();
    appendLogs(em, operation.projectId, operation.id, [
      ...(input.logs ?? []),
      ...input.outcomes.map((outcome) => outcomeLog(objectName, type, outcome)),
    ]);
    if (input.notify) {
      const parties = await installationParties(em, installation);
      recordEvent(em, operation.projectId, 'write.async.done', {
        ...installationEventBase(installation, parties),
        objectName,
        operationId: operation.id,
        success,
        successfulRecordIds,
        // The public payload lists errors as strings; the operation's metadata keeps them whole.
        errors: errors.map(
          ({ index, recordId, error }) => `record ${index}${recordId ? ` (${recordId})` : ''}: ${error}`,
        ),
      });
    }
    await em.flush();
    await followLatestOperation(em, installation.id);
    return { type, success };
  });
  // Counted once committed, and only by the call that ended the operation.
  if (ended) writesFinished.inc({ write_type: ended.type, outcome: ended.success ? 'success' : 'failure' });
}
