import { InstallationEntity } from '../../db/entities/installation.js';
import { em as newEntityManager } from '../../db/orm.js';
import { readsFinished } from '../../metrics.js';
import type { ReadObjectInput, ReadObjectResult } from '../../temporal/contracts/read.js';
import { appendLogs } from '../operation-logs.js';
import { followLatestOperation } from '../operations.js';
import { pageConnector } from './connector.js';
import { completeWindow, readSummary } from './finish.js';
import { fetchPage, type ShapedPage } from './page-feed.js';
import { createReadOperation } from './read-operation.js';
import { observeLateness, planRead, readMetadata, startedLog, type PlannedRead } from './start.js';

/**
 * Most scheduled reads find nothing new. Recording one the long way (the operation begun, its
 * checkpoint, the empty page checkpointed, the operation finished) took about 26 statements in
 * four transactions; a quiet read is recorded in one, finished: the operation, its log lines, the
 * watermark and the installation's status. Nothing is lost by it: a read with no records has
 * nothing to resume, and an operation that lasted milliseconds has no progress to watch.
 *
 * So a scheduled read fetches its first page before writing anything. When that page is empty and
 * the last, the read is recorded here; otherwise it begins as any read does, with the page already
 * fetched (`fetched`) and the same plan, so nothing is asked of the provider twice. Should the
 * worker stop between the fetch and the commit, the activity runs again and nothing was written.
 */

export type QuietReadAttempt =
  { quiet: true; result: ReadObjectResult } | { quiet: false; planned?: PlannedRead; fetched?: ShapedPage };

/** Only a first scheduled read with nothing recorded yet, delivered as it is read, can be quiet. */
function mayBeQuiet(input: ReadObjectInput, planned: PlannedRead): boolean {
  return (
    input.readType === 'scheduled' &&
    !planned.recorded &&
    !planned.checkpointed &&
    planned.plan.deliveryMode === 'auto' &&
    // A destination that cannot receive fails the read the long way, with its reason.
    !planned.destination.disabledTime
  );
}

export async function tryQuietRead(input: ReadObjectInput): Promise<QuietReadAttempt> {
  let planned: PlannedRead;
  try {
    planned = await planRead(await newEntityManager(), input);
  } catch {
    // The read's setup is refused: the long way records why.
    return { quiet: false };
  }
  const recorded = planned.operation;
  if (recorded && (recorded.status === 'success' || recorded.status === 'failure')) {
    // This activity ran before and recorded the read (the worker stopped before reporting it).
    return {
      quiet: true,
      result: {
        status: recorded.status,
        recordsProcessed: recorded.recordsProcessed,
        result: recorded.result ?? '',
      },
    };
  }
  // It began before: it resumes from its checkpoint, with the plan it began with.
  if (planned.checkpointed) return { quiet: false };
  if (!mayBeQuiet(input, planned)) return { quiet: false, planned };
  let page: ShapedPage;
  try {
    page = await fetchPage(planned.plan, pageConnector(planned.plan.connectionId), 0, undefined);
  } catch {
    // Fetched again the long way, which logs the failure and retries it.
    return { quiet: false, planned };
  }
  if (!page.done || page.records > 0 || page.parts.length > 0)
    return { quiet: false, planned, fetched: page };
  return { quiet: true, result: await recordQuietRead(input, planned, page) };
}

async function recordQuietRead(
  input: ReadObjectInput,
  { plan, installation, now }: PlannedRead,
  page: ShapedPage,
): Promise<ReadObjectResult> {
  const result = readSummary(plan.objectName, 0, 1, 'success');
  await (
    await newEntityManager()
  ).transactional(async (tx) => {
    const operation = createReadOperation(tx, installation, {
      operationId: input.operationId,
      objectName: plan.objectName,
      readType: plan.readType,
      metadata: readMetadata(input, plan),
    });
    Object.assign(operation, { status: 'success', result, createTime: now });
    appendLogs(tx, plan.projectId, input.operationId, [
      startedLog(plan, now),
      ...page.logs,
      { severity: 'INFO', msg: result, details: { recordsProcessed: 0, pages: 1 } },
    ]);
    // The whole listing was this one page, every record on it delivered before: the position may
    // take its newest time and its cursor.
    if (plan.advancesWatermark) {
      await completeWindow(tx, plan, {
        backfill: false,
        ...(page.newest && (page.deletions ? { newestDeleted: page.newest } : { newest: page.newest })),
        ...(page.resumeCursor !== undefined && { resumeCursor: page.resumeCursor }),
      });
    }
    if (installation.healthStatus !== 'healthy') {
      await tx.nativeUpdate(InstallationEntity, { id: installation.id }, { healthStatus: 'healthy' });
    }
    await tx.flush();
    await followLatestOperation(tx, installation.id);
  });
  readsFinished.inc({ read_type: plan.readType, outcome: 'success' });
  observeLateness(input, now);
  return { status: 'success', recordsProcessed: 0, result };
}
