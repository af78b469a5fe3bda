import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import {
  InstallationConfigEntity,
  InstallationEntity,
  type Installation,
} from '../db/entities/installation.js';
import { OperationEntity, type Operation } from '../db/entities/operation.js';
import { em as newEntityManager, transaction } from '../db/orm.js';
import { logger } from '../logger.js';
import { type WriteResult } from '../providers/connector.js';
import { connectorFor } from '../providers/connectors/index.js';
import { type RecordChangeType } from '../schemas/write.js';
import {
  CapabilityNotSupportedError,
  ConnectorError,
  ProviderError,
  describeError,
  toProblem,
} from '../providers/errors.js';
import type { InstallationConfigContent, WriteConfig } from '../schemas/installations.js';
import type { WriteRecordResultView, WriteRequest } from '../schemas/write.js';
import type { AsyncWriteInput, WriteItem, WriteOutcome } from '../temporal/contracts/write.js';
import { startWriteWorkflow } from '../temporal/gateway.js';
import { connectionTarget } from './credentials.js';
import { recordEvent } from './events.js';
import { appendLogs, writeLogs, type LogEntry } from './operation-logs.js';
import { createOperation } from './operations.js';
import { requestLog } from './reads/connector.js';
import {
  findInstallationForGroup,
  installationEventBase,
  installationParties,
} from './reads/installation-context.js';

/**
 * Record writes (the write host's `POST .../objects/{objectName}`): one operation per request,
 * written at once (synchronous) or by `writeRecordsWorkflow` (asynchronous, ending with a
 * `write.async.done` event). The object must be a write object of the group's installation config;
 * its `selectedValueDefaults` fill fields the record leaves out (on update only when
 * `applyOnUpdate` is `always`), and deletes need `deletionSettings.enabled`.
 */

export interface PreparedWrite {
  installation: Installation;
  objectName: string;
  type: RecordChangeType;
  mode: 'synchronous' | 'asynchronous';
  items: WriteItem[];
  /** A single `record` (answered as `result`) rather than a `batch` (answered as `results`). */
  single: boolean;
}

/** Records travel in the workflow's input; Temporal payloads must stay well under 2 MB. */
export const maxAsyncPayloadBytes = 1_000_000;

function bodyIssue(name: string, value: unknown, detail: string) {
  return { in: 'body' as const, name, value, detail: `${name} ${detail}` };
}

function idOf(record: Record<string, unknown> | undefined): string | undefined {
  const id = record?.id;
  return typeof id === 'string' && id !== '' ? id : typeof id === 'number' ? String(id) : undefined;
}

/** Fills the fields the record leaves out with the config's defaults. */
export function applyValueDefaults(
  record: Record<string, unknown>,
  defaults: WriteConfig['selectedValueDefaults'],
  type: RecordChangeType,
): Record<string, unknown> {
  const filled = { ...record };
  for (const [field, setting] of Object.entries(defaults ?? {})) {
    if (filled[field] !== undefined) continue;
    if (type === 'create' || (type === 'update' && setting.applyOnUpdate === 'always'))
      filled[field] = setting.value;
  }
  return filled;
}

/** Checks the request against the rules a schema cannot state; returns the records to write. */
function requestItems(body: WriteRequest): WriteItem[] {
  const issues = [];
  if ((body.record === undefined) === (body.batch === undefined)) {
    issues.push(bodyIssue('record', body.record, 'or batch is required, and not both'));
  }
  if (body.batch && body.associations) {
    issues.push(bodyIssue('associations', body.associations, 'goes on each batch item, not beside batch'));
  }
  if (body.type === 'delete' && body.mode === 'asynchronous') {
    issues.push(bodyIssue('mode', body.mode, 'must be synchronous for deletes'));
  }
  const items: WriteItem[] = body.batch
    ? body.batch.map((item) => ({ record: item.record, associations: item.associations }))
    : body.record
      ? [{ record: body.record, associations: body.associations }]
      : [];
  if (body.type !== 'create') {
    items.forEach((item, index) => {
      if (!idOf(item.record)) {
        const name = body.batch ? `batch[${index}].record.id` : 'record.id';
        issues.push(bodyIssue(name, item.record?.id, `is required to ${body.type} a record`));
      }
    });
  }
  if (issues.length) throw ProblemError.invalid(issues);
  return items;
}

export async function prepareWrite(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  objectName: string,
  body: WriteRequest,
): Promise<PreparedWrite> {
  const items = requestItems(body);
  const { installation } = await findInstallationForGroup(em, projectId, integrationIdOrName, body.groupRef);
  const installationConfig = await em.findOneOrFail(InstallationConfigEntity, { id: installation.configId });
  const content = installationConfig.content as unknown as InstallationConfigContent;
  const writeConfig = content.write?.objects?.[objectName];
  if (!writeConfig) {
    throw ProblemError.notFound(
      `Object "${objectName}" is not a write object of this installation’s config.`,
      'Add it under config.content.write.objects of the installation.',
    );
  }
  if (body.type === 'delete' && !writeConfig.deletionSettings?.enabled) {
    throw new ProblemError({
      status: 422,
      detail: `Deletes of "${objectName}" are not enabled in this installation’s config (deletionSettings.enabled).`,
    });
  }
  return {
    installation,
    objectName,
    type: body.type,
    mode: body.mode ?? 'synchronous',
    single: body.record !== undefined,
    items: items.map((item) => {
      const recordId = body.type === 'create' ? undefined : idOf(item.record);
      if (body.type === 'delete') return { recordId };
      return {
        ...item,
        record: applyValueDefaults(item.record ?? {}, writeConfig.selectedValueDefaults, body.type),
        ...(recordId && { recordId }),
      };
    }),
  };
}

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

async function newWriteOperation(em: EntityManager, write: PreparedWrite): Promise<Operation> {
  const operation = createOperation(em, {
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
  await transaction(async (em) => {
    const operation = await em.findOneOrFail(OperationEntity, { id: input.operationId });
    if (operation.status !== 'in_progress') return;
    const installation = await em.findOneOrFail(InstallationEntity, { id: operation.installationId });
    const objectName = (operation.metadata.objects as string[])[0];
    const type = operation.metadata.writeType as RecordChangeType;
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
    operation.metadata = { ...operation.metadata, successfulRecordIds };
    operation.updateTime = new Date();
    installation.lastOperationStatus = operation.status;
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
        errors,
      });
    }
  });
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

/** Writes every record now; answers with the result of each. */
export async function writeSynchronously(
  em: EntityManager,
  write: PreparedWrite,
): Promise<{ operationId: string; result?: WriteRecordResultView; results?: WriteRecordResultView[] }> {
  const logs: LogEntry[] = [];
  const connector = await writeConnector(write.installation.connectionId, logs);
  assertCapable(connector.capabilities, connector.provider, write.type);
  const operation = await em.transactional((tx) => newWriteOperation(tx, write));
  const results: WriteRecordResultView[] = [];
  const outcomes: WriteOutcome[] = [];
  let singleFailure: unknown;
  for (const [index, item] of write.items.entries()) {
    try {
      const written: WriteResult = await connector.write({
        objectName: write.objectName,
        type: write.type,
        ...item,
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
  return { operationId: operation.id, results };
}

/** Records the operation and hands the records to `writeRecordsWorkflow`; answers at once. */
export async function startAsyncWrite(
  em: EntityManager,
  write: PreparedWrite,
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
  const previousStatus = write.installation.lastOperationStatus ?? null;
  const operation = await em.transactional((tx) => newWriteOperation(tx, write));
  input.operationId = operation.id;
  try {
    await startWriteWorkflow(input, {
      projectId: write.installation.projectId,
      integrationId: write.installation.integrationId,
      installationId: write.installation.id,
      provider: connector.provider,
    });
  } catch (error) {
    const cleanup = await newEntityManager();
    await cleanup.nativeDelete(OperationEntity, { id: operation.id });
    await cleanup.nativeUpdate(
      InstallationEntity,
      { id: write.installation.id },
      { lastOperationStatus: previousStatus as Installation['lastOperationStatus'] },
    );
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
  const item = input.items[input.index];
  const logs: LogEntry[] = [];
  try {
    const connector = await writeConnector(input.connectionId, logs);
    const written = await connector.write({ objectName: input.objectName, type: input.type, ...item });
    return { index: input.index, success: true, recordId: written.recordId };
  } catch (error) {
    const retryable =
      (error instanceof ProviderError &&
        error.retryable &&
        (input.type !== 'create' || error.status === 429)) ||
      (error instanceof ProblemError && error.retryable === true);
    if (retryable) throw new RetryableWriteError(failureMessage(error));
    return {
      index: input.index,
      success: false,
      ...(item.recordId && { recordId: item.recordId }),
      error: failureMessage(error),
    };
  } finally {
    // A failed log write must not fail (and so retry, and so repeat) a write the provider applied.
    try {
      await writeLogs(await newEntityManager(), input.projectId, input.operationId, logs);
    } catch (error) {
      logger.warn({ err: error, operationId: input.operationId }, 'could not record write logs');
    }
  }
}
