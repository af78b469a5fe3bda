import type { EntityManager } from '@mikro-orm/postgresql';
import { InstallationEntity, type Installation } from '../../db/entities/installation.js';
import { OperationEntity, type Operation } from '../../db/entities/operation.js';
import { ReadCheckpointEntity } from '../../db/entities/read-checkpoint.js';
import { em as newEntityManager } from '../../db/orm.js';
import type { FinishReadInput } from '../../temporal/contracts/read.js';
import { readsFinished } from '../../metrics.js';
import { recordEvent } from '../events.js';
import { appendLogs, type LogEntry } from '../operation-logs.js';
import { followLatestOperation } from '../operations.js';
import { createReadOperation } from './read-operation.js';
import { installationEventBase, installationParties } from './installation-context.js';
import type { ShapedPage } from './page-feed.js';
import { readPlanOf, type ReadPlan } from './plan.js';
import { readMetadata, startedLog, type PlannedRead } from './start.js';
import { forgetOldVersions } from './seen-versions.js';
import { forgetUnlisted } from './full-read.js';
import { amendMetadata, objectNameOf, readMetadataOf } from '../operation-metadata.js';

/**
 * The end of a read: the operation's status and human summary, the installation's health, the
 * watermark moved to the end of a completed window, and the read's notification events, all in one
 * transaction. Finishing an operation that is already finished changes nothing.
 */

export interface FinishedRead {
  status: 'success' | 'failure';
  recordsProcessed: number;
  result: string;
}

const count = (value: number) => value.toLocaleString('en-US');

/** "Read 1,234 contacts in 3 pages." */
export function readSummary(
  objectName: string,
  records: number,
  pages: number,
  status: 'success' | 'failure',
  error?: string,
): string {
  const pagesText = `${count(pages)} ${pages === 1 ? 'page' : 'pages'}`;
  if (status === 'success') return `Read ${count(records)} ${objectName} in ${pagesText}.`;
  const done = records || pages ? ` after ${count(records)} ${objectName} in ${pagesText}` : '';
  return `Reading ${objectName} failed${done}: ${error ?? 'unknown error'}`;
}

async function eventBase(
  em: EntityManager,
  installation: Installation,
  plan: ReadPlan | undefined,
  objectName: string,
): Promise<Record<string, unknown>> {
  if (plan) return plan.eventBase;
  return { ...installationEventBase(installation, await installationParties(em, installation)), objectName };
}

/** What a finished read returned of the provider: its newest change and deletion, its end cursor. */
export interface ReadOutcome {
  backfill: boolean;
  newest?: Date;
  newestDeleted?: Date;
  resumeCursor?: string;
}

/**
 * A read that left no gap behind it succeeded: the object's position takes what the provider
 * returned (the newest change and deletion delivered, the cursor the listing ended at; the
 * window's end, Ferry's clock, never), a backfill marks the object's history read, and versions no
 * later read can see again are forgotten.
 */
export async function completeWindow(em: EntityManager, plan: ReadPlan, outcome: ReadOutcome): Promise<void> {
  await em.execute(
    `insert into read_watermarks
       (installation_id, object_name, project_id, watermark, deleted_watermark, resume_cursor, backfill_done, update_time)
     values (?, ?, ?, ?, ?, ?, ?, now())
     on conflict (installation_id, object_name) do update
       set watermark = greatest(read_watermarks.watermark, excluded.watermark),
           deleted_watermark = greatest(read_watermarks.deleted_watermark, excluded.deleted_watermark),
           resume_cursor = coalesce(excluded.resume_cursor, read_watermarks.resume_cursor),
           backfill_done = read_watermarks.backfill_done or excluded.backfill_done,
           update_time = now()`,
    [
      plan.installationId,
      plan.objectName,
      plan.projectId,
      outcome.newest ?? null,
      outcome.newestDeleted ?? null,
      outcome.resumeCursor ?? null,
      outcome.backfill,
    ],
    'run',
  );
  await forgetUnlisted(em, plan);
  await forgetOldVersions(em, plan, {
    overlapMs: plan.overlapMs ?? 0,
    deletionsOverlapMs: plan.deletionsOverlapMs ?? 0,
  });
}

/** A quiet read ends as it begins (nothing recorded before): its plan and its one empty page. */
export interface QuietEnd {
  planned: PlannedRead;
  page: ShapedPage;
}

/** What ending a read knows of it: from its checkpoint, or a quiet read's one page. */
interface EndState {
  plan?: ReadPlan;
  records: number;
  pages: number;
  /** What the provider returned, which the object's position takes when the read succeeds. */
  returned: Omit<ReadOutcome, 'backfill'>;
  operation: Operation | null;
  /** Log lines before the summary: a quiet read's start and its page's requests. */
  logs: LogEntry[];
}

/** A begun read's state, from its checkpoint and operation (either may be missing). */
async function recordedState(tx: EntityManager, input: FinishReadInput): Promise<EndState> {
  const checkpoint = await tx.findOne(ReadCheckpointEntity, { operationId: input.operationId });
  return {
    ...(checkpoint && { plan: readPlanOf(checkpoint.plan) }),
    records: checkpoint?.recordsProcessed ?? 0,
    pages: checkpoint?.pageIndex ?? 0,
    returned: {
      ...(checkpoint?.maxUpdatedAt && { newest: checkpoint.maxUpdatedAt }),
      ...(checkpoint?.maxDeletedAt && { newestDeleted: checkpoint.maxDeletedAt }),
      ...(checkpoint?.resumeCursor && { resumeCursor: checkpoint.resumeCursor }),
    },
    operation: await tx.findOne(OperationEntity, { id: input.operationId }),
    logs: [],
  };
}

/**
 * A quiet read's state: its operation is made here, finished at once. The whole listing was its one
 * page, every record on it delivered before: the position may take its newest time and its cursor.
 */
function quietState(tx: EntityManager, input: FinishReadInput, { planned, page }: QuietEnd): EndState {
  const { plan, installation, now } = planned;
  const operation = createReadOperation(tx, installation, {
    operationId: input.operationId,
    objectName: plan.objectName,
    readType: plan.readType,
    metadata: readMetadata(input, plan),
  });
  operation.createTime = now;
  return {
    plan,
    records: 0,
    pages: 1,
    returned: {
      ...(page.newest && (page.deletions ? { newestDeleted: page.newest } : { newest: page.newest })),
      ...(page.resumeCursor !== undefined && { resumeCursor: page.resumeCursor }),
    },
    operation,
    logs: [startedLog(plan, now), ...page.logs],
  };
}

/**
 * The one function that ends a read's operation, whichever way the read ran (quiet, inline, its own
 * workflow, cancelled): status and summary, the installation's health, the position moved on, the
 * read's events and log lines, in one transaction. Ending an operation already ended changes nothing.
 */
export async function finishRead(input: FinishReadInput, quiet?: QuietEnd): Promise<FinishedRead> {
  const em = await newEntityManager();
  // Counted once committed, and only by the call that ended the operation (a retry finds it ended).
  let ended = false;
  const finished = await em.transactional(async (tx) => {
    const state = quiet ? quietState(tx, input, quiet) : await recordedState(tx, input);
    const { plan, records, pages } = state;
    let operation = state.operation;
    if (operation && operation.status !== 'in_progress') {
      return { status: operation.status, recordsProcessed: records, result: operation.result ?? '' };
    }
    const result = readSummary(input.objectName, records, pages, input.status, input.error);
    // A quiet read planned with its installation: only a change of health is written.
    const installation = quiet
      ? quiet.planned.installation
      : await tx.findOne(InstallationEntity, { id: input.installationId });
    if (!installation) {
      // Deleted meanwhile (its operations went with it): nothing is left to record.
      if (operation) Object.assign(operation, { status: input.status, result });
      ended = Boolean(operation);
      return { status: input.status, recordsProcessed: records, result };
    }
    if (!operation) {
      // The read failed before it could record itself (its setup was refused).
      operation = createReadOperation(tx, installation, {
        operationId: input.operationId,
        objectName: input.objectName,
        readType: input.readType,
      });
    }
    const progress = readMetadataOf(operation.metadata).progress ?? {
      installationId: installation.id,
      objectName: input.objectName,
      operationId: input.operationId,
    };
    operation.status = input.status;
    operation.result = result;
    amendMetadata(operation, 'read', {
      progress: { ...progress, recordsProcessed: records },
      ...(input.error && { error: input.error }),
      ...(input.authFailure && { authFailure: true }),
      // Which destination to wait for: re-enabling it retries this read (see destination-recovery).
      ...(input.destinationFailure && plan && { failedAtDestinationId: plan.destinationId }),
    });
    const health = input.status === 'success' ? 'healthy' : 'unhealthy';
    if (!quiet) installation.healthStatus = health;
    else if (installation.healthStatus !== health) {
      await tx.nativeUpdate(InstallationEntity, { id: installation.id }, { healthStatus: health });
    }

    if (input.status === 'success' && plan?.advancesWatermark) {
      await completeWindow(tx, plan, { backfill: input.readType === 'backfill', ...state.returned });
    }

    const base = await eventBase(tx, installation, plan, input.objectName);
    const data = { ...base, operationId: input.operationId };
    if (input.readType === 'backfill' && input.status === 'success') {
      recordEvent(tx, installation.projectId, 'read.backfill.done', data);
    }
    if (input.readType === 'triggered') {
      const window = {
        fromTimestamp: input.sinceTimestamp ?? plan?.since ?? null,
        untilTimestamp: input.untilTimestamp ?? plan?.until ?? null,
      };
      recordEvent(
        tx,
        installation.projectId,
        input.status === 'success' ? 'read.triggered.done' : 'read.triggered.error',
        { ...data, ...window, ...(input.error && { error: input.error }) },
      );
    }
    appendLogs(tx, installation.projectId, input.operationId, [
      ...state.logs,
      input.status === 'success'
        ? { severity: 'INFO', msg: result, details: { recordsProcessed: records, pages } }
        : {
            severity: 'ERROR',
            msg: result,
            error: input.error,
            details: { recordsProcessed: records, pages, ...(input.authFailure && { authFailure: true }) },
          },
    ]);
    await tx.flush();
    await followLatestOperation(tx, installation.id);
    ended = true;
    return { status: input.status, recordsProcessed: records, result };
  });
  if (ended) readsFinished.inc({ read_type: input.readType, outcome: input.status });
  return finished;
}

/**
 * Ends triggered reads that will never run (their object left the installation's config): each
 * operation fails with the reason, logs it and emits `read.triggered.error`, as a read that ran and
 * failed would. Operations that already ended are left alone, so a retried call changes nothing.
 */
export async function failTriggeredReads(operationIds: readonly string[], reason: string): Promise<void> {
  if (!operationIds.length) return;
  const em = await newEntityManager();
  const ended = await em.transactional(async (tx) => {
    const operations = await tx.find(OperationEntity, {
      id: { $in: [...operationIds] },
      status: 'in_progress',
    });
    for (const operation of operations) {
      Object.assign(operation, { status: 'failure', result: reason, updateTime: new Date() });
      const installation =
        operation.installationId && (await tx.findOne(InstallationEntity, { id: operation.installationId }));
      if (!installation) continue;
      const metadata = readMetadataOf(operation.metadata);
      const objectName = objectNameOf(metadata);
      const requested = metadata.requested ?? {};
      recordEvent(tx, installation.projectId, 'read.triggered.error', {
        ...(await eventBase(tx, installation, undefined, objectName)),
        operationId: operation.id,
        fromTimestamp: requested.sinceTimestamp ?? null,
        untilTimestamp: requested.untilTimestamp ?? null,
        error: reason,
      });
      appendLogs(tx, installation.projectId, operation.id, [
        { severity: 'ERROR', msg: reason, error: reason },
      ]);
      await tx.flush();
      await followLatestOperation(tx, installation.id);
    }
    return operations.length;
  });
  if (ended) readsFinished.inc({ read_type: 'triggered', outcome: 'failure' }, ended);
}
