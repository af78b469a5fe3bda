import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import type { Config } from '../../config.js';
import { OperationEntity } from '../../db/entities/operation.js';
import { em as newEntityManager } from '../../db/orm.js';
import { logger } from '../../logger.js';
import { type Connector, type WriteResult } from '../../providers/connector.js';
import { connectorFor } from '../../providers/connectors/index.js';
import {
  CapabilityNotSupportedError,
  ConnectorError,
  ProviderError,
  describeError,
  toProblem,
} from '../../providers/errors.js';
import type { RecordChangeType, WriteRecordResultView, WriteResponse } from '../../schemas/write.js';
import type { Static } from 'typebox';
import type { AsyncWriteInput, WriteOutcome } from '../../temporal/contracts/write.js';
import { startWriteWorkflow } from '../../temporal/gateway.js';
import { runIdentityOf } from '../installations/workflow.js';
import { withRepairMark } from '../marked-changes.js';
import { connectionTarget } from '../credentials.js';
import { writeLogs, type LogEntry } from '../operation-logs.js';
import { requestLog } from '../reads/connector.js';
import { followLatestOperation } from '../operations.js';
import { finishWrite, newWriteOperation } from './operation.js';
import type { PreparedWrite } from './prepare.js';
import { forgetSend, markCreateSent, mayHaveBeenWritten, recordSendOutcome } from './record-sends.js';

/**
 * Record writes (the write host's `POST .../objects/{objectName}`) against the provider: one
 * operation per request, written at once (synchronous) or by `writeRecordsWorkflow` one record per
 * activity (asynchronous, ending with a `write.async.done` event).
 */

/** Records travel in the workflow's input; Temporal payloads must stay well under 2 MB. */
export const maxAsyncPayloadBytes = 1_000_000;

async function writeConnector(connectionId: string, logs: LogEntry[]) {
  return connectorFor(await connectionTarget(connectionId), {
    onRequest: (entry) => logs.push(requestLog(entry)),
  });
}

function assertCapable(
  capabilities: { write: boolean; delete: boolean },
  provider: string,
  type: RecordChangeType,
) {
  const capability = type === 'delete' ? 'delete' : 'write';
  if (!capabilities[capability]) throw toProblem(new CapabilityNotSupportedError(provider, capability));
}

/** A problem for a failed synchronous write, naming the operation that recorded it. */
function problemWithOperation(error: unknown, operationId: string): unknown {
  const problem = toProblem(error);
  if (!(problem instanceof ProblemError)) return problem;
  return new ProblemError({
    status: problem.status,
    title: problem.title,
    type: problem.type,
    detail: problem.detail,
    retryable: problem.retryable,
    retryAfter: problem.retryAfter,
    context: { ...problem.context, operationId },
  });
}

/** A failure of one record: a message safe to show the builder (never a stack, never a secret). */
function failureMessage(error: unknown): string {
  if (error instanceof ConnectorError || error instanceof ProblemError) return describeError(error);
  logger.error({ err: error }, 'unexpected error writing a record');
  return 'Ferry hit an unexpected error writing this record.';
}

type WriteAnswer = Pick<
  Static<typeof WriteResponse>,
  'operationId' | 'result' | 'results' | 'successCount' | 'failureCount'
>;

/**
 * A write's operation, marked for repair while its request runs: if the process dies, a worker
 * ends it (synchronous) or finds its run never started (asynchronous) within seconds.
 */
function withWriteMark<T>(write: PreparedWrite, reason: string, work: (operationId: string) => Promise<T>) {
  const operationId = randomUUID();
  const { projectId, id: installationId } = write.installation;
  return withRepairMark({ projectId, installationId, operationId, reason }, () => work(operationId));
}

/** Writes every record now; answers with the result of each. */
/** `stuckAfterMs` (FERRY_STUCK_OPERATION_SECONDS) sets how often the write's operation is touched. */
export function writeSynchronously(
  em: EntityManager,
  write: PreparedWrite,
  stuckAfterMs: Config['repair']['stuckAfterMs'],
): Promise<WriteAnswer> {
  return withWriteMark(write, 'write synchronously', (operationId) =>
    writeNow(em, write, operationId, stuckAfterMs),
  );
}

async function writeNow(
  em: EntityManager,
  write: PreparedWrite,
  operationId: string,
  stuckAfterMs: number,
): Promise<WriteAnswer> {
  const logs: LogEntry[] = [];
  const connector = await writeConnector(write.installation.connectionId, logs);
  assertCapable(connector.capabilities, connector.provider, write.type);
  const operation = await em.transactional((tx) => newWriteOperation(tx, write, operationId));
  const results: WriteRecordResultView[] = [];
  const outcomes: WriteOutcome[] = [];
  let singleFailure: unknown;
  const heartbeatMs = stuckAfterMs / 4;
  let touched = Date.now();
  for (const [index, item] of write.items.entries()) {
    // The operation's heartbeat, four per FERRY_STUCK_OPERATION_SECONDS: one left untouched has
    // lost its process (see stuck-operations). Not per record, so fast batches cost no extra writes.
    if (Date.now() - touched > heartbeatMs) {
      touched = Date.now();
      await em.nativeUpdate(OperationEntity, { id: operation.id }, { updateTime: new Date(touched) });
    }
    try {
      const written: WriteResult = await connector.write({
        objectName: write.objectName,
        type: write.type,
        ...item,
        idempotencyKey: `${operation.id}:${index}`,
      });
      outcomes.push({ index, success: true, recordId: written.recordId });
      results.push({
        success: true,
        recordId: written.recordId,
        ...(written.data && { data: written.data }),
      });
    } catch (error) {
      singleFailure = error;
      const message = failureMessage(error);
      outcomes.push({
        index,
        success: false,
        ...(item.recordId && { recordId: item.recordId }),
        error: message,
      });
      results.push({ success: false, ...(item.recordId && { recordId: item.recordId }), error: message });
    }
  }
  await finishWrite({ operationId: operation.id, outcomes, logs, notify: false });
  if (write.single) {
    if (singleFailure !== undefined) throw problemWithOperation(singleFailure, operation.id);
    return { operationId: operation.id, result: results[0] };
  }
  const successCount = results.filter((result) => result.success).length;
  return { operationId: operation.id, successCount, failureCount: results.length - successCount, results };
}

/** Records the operation and hands the records to `writeRecordsWorkflow`; answers at once. */
export function startAsyncWrite(em: EntityManager, write: PreparedWrite): Promise<{ operationId: string }> {
  return withWriteMark(write, 'start an asynchronous write', (operationId) =>
    recordAndStartWrite(em, write, operationId),
  );
}

async function recordAndStartWrite(
  em: EntityManager,
  write: PreparedWrite,
  operationId: string,
): Promise<{ operationId: string }> {
  const connector = connectorFor(await connectionTarget(write.installation.connectionId));
  assertCapable(connector.capabilities, connector.provider, write.type);
  const input: AsyncWriteInput = {
    operationId: '00000000-0000-0000-0000-000000000000', // same length as the real id, set below
    projectId: write.installation.projectId,
    installationId: write.installation.id,
    connectionId: write.installation.connectionId,
    objectName: write.objectName,
    type: write.type,
    items: write.items,
  };
  // Checked before anything is written: the records travel in the workflow's input.
  if (Buffer.byteLength(JSON.stringify(input)) > maxAsyncPayloadBytes) {
    throw new ProblemError({
      status: 413,
      detail: `An asynchronous write carries at most ${maxAsyncPayloadBytes} bytes of records; split the batch.`,
    });
  }
  const operation = await em.transactional((tx) => newWriteOperation(tx, write, operationId));
  input.operationId = operation.id;
  try {
    await startWriteWorkflow(input, await runIdentityOf(em, write.installation));
  } catch (error) {
    const cleanup = await newEntityManager();
    await cleanup.nativeDelete(OperationEntity, { id: operation.id });
    await followLatestOperation(cleanup, write.installation.id);
    throw error;
  }
  return { operationId: operation.id };
}

/** Thrown by `writeOneRecord` when trying again later may succeed (and cannot duplicate the write). */
export class RetryableWriteError extends Error {}

/**
 * Writes one record of an asynchronous write (an activity's work). Provider failures come back as
 * a failed outcome, except those worth retrying: any retryable failure of an update or delete, and
 * only a 429 of a create, which the provider surely did not apply.
 */
export async function writeOneRecord(input: AsyncWriteInput & { index: number }): Promise<WriteOutcome> {
  const logs: LogEntry[] = [];
  try {
    return await writeRecordWith(await writeConnector(input.connectionId, logs), input);
  } finally {
    // A failed log write must not fail (and so retry, and so repeat) a write the provider applied.
    try {
      await writeLogs(await newEntityManager(), input.projectId, input.operationId, logs);
    } catch (error) {
      logger.warn({ err: error, operationId: input.operationId }, 'could not record write logs');
    }
  }
}

/**
 * `writeOneRecord` with its connector. The activity may run again for the same record (its worker
 * died, or its answer was lost), so a create is never sent twice blindly: a provider that honours
 * idempotency keys gets the same key again and applies it once; for any other, the create is marked
 * sent before it leaves (`record-sends`), and a run that finds it sent reports the earlier outcome,
 * or "may have been written" when none was recorded, instead of sending it again.
 */
export async function writeRecordWith(
  connector: Connector,
  input: AsyncWriteInput & { index: number },
): Promise<WriteOutcome> {
  const item = input.items[input.index];
  const create = { operationId: input.operationId, projectId: input.projectId, index: input.index };
  const guarded = input.type === 'create' && !connector.honoursIdempotencyKey(input.objectName, 'create');
  if (guarded) {
    const earlier = await markCreateSent(create);
    if (earlier && 'outcome' in earlier) return earlier.outcome;
    if (earlier) {
      logger.warn(
        { operationId: input.operationId, index: input.index },
        'a create was sent by an earlier attempt that recorded no answer; not sending it again',
      );
      return {
        index: input.index,
        success: false,
        error: mayHaveBeenWritten(connector.provider, earlier.sentTime),
      };
    }
  }
  let outcome: WriteOutcome;
  try {
    const written = await connector.write({
      objectName: input.objectName,
      type: input.type,
      ...item,
      // The same key on every retry of this record, so a provider that honours it applies it once.
      idempotencyKey: `${input.operationId}:${input.index}`,
    });
    outcome = { index: input.index, success: true, recordId: written.recordId };
  } catch (error) {
    const retryable =
      (error instanceof ProviderError &&
        error.retryable &&
        (input.type !== 'create' || error.status === 429)) ||
      (error instanceof ProblemError && error.retryable === true);
    if (retryable) {
      if (guarded) await forgetSend(create);
      throw new RetryableWriteError(failureMessage(error));
    }
    outcome = {
      index: input.index,
      success: false,
      ...(item.recordId && { recordId: item.recordId }),
      error: failureMessage(error),
    };
  }
  if (guarded) await recordSendOutcome(create, outcome);
  return outcome;
}
