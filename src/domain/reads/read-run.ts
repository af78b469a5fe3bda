import { OperationEntity } from '../../db/entities/operation.js';
import { em as newEntityManager } from '../../db/orm.js';
import type {
  InlineReadInput,
  InlineReadOutcome,
  ReadEnding,
  ReadHandover,
  ReadObjectInput,
  ReadWait,
} from '../../temporal/contracts/read.js';
import { appendLogs } from '../operation-logs.js';
import { pageConnector } from './connector.js';
import { classifyReadError } from './failures.js';
import { finishRead, type FinishedRead } from './finish.js';
import { fetchPage, type ShapedPage } from './page-feed.js';
import { readPages } from './pages.js';
import type { ReadSettings } from './read-settings.js';
import { observeLateness, planRead, startRead, type PlannedRead, type StartedRead } from './start.js';
import { amendMetadata } from '../operation-metadata.js';

/**
 * One read, one owner. Every read of an object is a ReadRun of three steps, whoever runs it:
 * `begin` plans it and records its operation with its checkpoint at page 0 (the plan, validated,
 * frozen there); `page` reads, delivers and checkpoints the next pages; `finish` ends the
 * operation, the only code that does. The modes differ only in who calls the steps:
 *
 * - child: the read's own `read/<operationId>` workflow, one activity per step, retrying from the
 *   checkpoint (backfills, triggered and requested reads; any read handed over);
 * - inline: one local activity of the installation's workflow (`inline`) runs begin, a few pages
 *   and finish, or hands the rest to the child mode with what to wait for (`ReadHandover`);
 * - quiet: an inline scheduled read whose first page is empty is begun and finished in one
 *   transaction, since it has nothing to resume (`begin` reports it `ended`).
 *
 * Every step is idempotent: a step run again (a retried activity, a replayed workflow) finds the
 * checkpoint or the ended operation and moves nothing twice.
 */

export type ReadMode = 'child' | 'inline';

/** A begun read, or (mode inline) a quiet read begun and ended at once. */
export type BeginOutcome =
  { ended: false; started: StartedRead; fetched?: ShapedPage } | { ended: true; finished: FinishedRead };

/** Only a first scheduled read with nothing recorded yet, delivered as it is read, can be quiet. */
function mayBeQuiet(input: ReadObjectInput, planned: PlannedRead): boolean {
  return (
    input.readType === 'scheduled' &&
    !planned.recorded &&
    !planned.checkpointed &&
    planned.plan.deliveryMode === 'auto' &&
    // A full read's empty page is one whose records are unchanged: they must still be marked seen.
    !planned.plan.fingerprints &&
    // A destination that cannot receive fails the read the long way, with its reason.
    !planned.destination.disabledTime
  );
}

/**
 * Most scheduled reads find nothing new, so an inline scheduled read fetches its first page before
 * it writes anything: when that page is empty and the last, the read is recorded finished in one
 * transaction; otherwise it begins with the page already fetched (`fetched`) and the same plan, so
 * nothing is asked of the provider twice. A worker stopping between the fetch and the commit leaves
 * nothing written: the activity runs again.
 */
async function beginInline(input: ReadObjectInput, settings: ReadSettings): Promise<BeginOutcome> {
  let planned: PlannedRead;
  try {
    planned = await planRead(await newEntityManager(), input, settings);
  } catch {
    // The read's setup is refused: beginning it the long way records why.
    return { ended: false, started: await startRead(input, settings) };
  }
  const recorded = planned.operation;
  if (recorded && (recorded.status === 'success' || recorded.status === 'failure')) {
    // This activity ran before and ended the read (the worker stopped before reporting it).
    return {
      ended: true,
      finished: {
        status: recorded.status,
        recordsProcessed: recorded.recordsProcessed,
        result: recorded.result ?? '',
      },
    };
  }
  // It began before: it resumes from its checkpoint, with the plan it began with.
  if (planned.checkpointed) return { ended: false, started: await startRead(input, settings) };
  if (!mayBeQuiet(input, planned))
    return { ended: false, started: await startRead(input, settings, planned) };
  let page: ShapedPage;
  try {
    page = await fetchPage(planned.plan, pageConnector(planned.plan.connectionId), 0, undefined);
  } catch {
    // Fetched again the long way, which logs the failure and retries it.
    return { ended: false, started: await startRead(input, settings, planned) };
  }
  if (!page.done || page.records > 0 || page.parts.length > 0) {
    return { ended: false, started: await startRead(input, settings, planned), fetched: page };
  }
  const finished = await finishRead({ ...input, status: 'success' }, { planned, page });
  observeLateness(input, planned.now);
  return { ended: true, finished };
}

/**
 * Records the read `in_progress` with its checkpoint at page 0; a read with a checkpoint resumes as
 * it stood. Inline, a scheduled read may turn out quiet and end here.
 */
async function begin(input: ReadObjectInput, mode: ReadMode, settings: ReadSettings): Promise<BeginOutcome> {
  if (mode === 'inline') return beginInline(input, settings);
  return { ended: false, started: await startRead(input, settings) };
}

/** After this long an inline read fetches no more pages and hands the rest over. */
const INLINE_BUDGET_MS = 15_000;

/**
 * The inline mode, in one activity: begin, at most `maxPages` pages (each checkpointed once
 * delivered), finish. What does not fit (more pages, a destination to wait for, a step worth
 * retrying) is handed over: the operation stays `in_progress` and a child workflow resumes from the
 * checkpoint with its own history, retries and durable waits. Never throws for a read that failed.
 */
async function inline(
  input: InlineReadInput,
  settings: ReadSettings,
  options: { heartbeat?: () => void } = {},
): Promise<InlineReadOutcome> {
  const { maxPages, ...read } = input;
  const run = { ...read, inline: true };
  let ending: ReadEnding = { status: 'success' };
  try {
    const begun = await begin(run, 'inline', settings);
    if (begun.ended) return { handover: false, ...begun.finished };
    // The installation's workflow answers no query or update while this runs: keep it short.
    const pages = await readPages(read.operationId, settings, {
      maxPages,
      budgetMs: INLINE_BUDGET_MS,
      heartbeat: options.heartbeat,
      ...(begun.fetched && { fetched: begun.fetched }),
    });
    if (pages.outcome === 'next') {
      return handOver(input, `more than ${maxPages} ${maxPages === 1 ? 'page' : 'pages'} to read`);
    }
    if (pages.outcome === 'retry') {
      return handOver(input, `the destination failed: ${pages.error ?? 'unknown error'}`, {
        failedAttempts: 1,
        ...(pages.retryAfterMs !== undefined && { retryAfterMs: pages.retryAfterMs }),
      });
    }
    if (pages.outcome === 'failed') {
      ending = {
        status: 'failure',
        error: pages.error ?? 'the destination refused the delivery',
        destinationFailure: true,
      };
    }
  } catch (error) {
    const classified = classifyReadError(error, settings.providerMaxWaitMs);
    // A step worth retrying is retried by the child, with backoff, from the checkpoint; after the
    // wait the provider asked for, when it asked.
    if (classified.retryable) {
      return handOver(
        input,
        classified.message,
        classified.waitMs === undefined
          ? undefined
          : { failedAttempts: 0, providerWaitMs: classified.waitMs },
      );
    }
    ending = {
      status: 'failure',
      error: classified.message,
      ...(classified.authFailure && { authFailure: true }),
    };
  }
  const finished = await finishRead({ ...read, ...ending });
  return {
    handover: false,
    status: finished.status,
    recordsProcessed: finished.recordsProcessed,
    ...(ending.authFailure && { authFailure: true }),
    result: finished.result,
  };
}

/** Marks the operation as run by its own workflow from now on (operators follow that one) and says why. */
async function handOver(input: InlineReadInput, reason: string, wait?: ReadWait): Promise<ReadHandover> {
  const em = await newEntityManager();
  await em.transactional(async (tx) => {
    const operation = await tx.findOne(OperationEntity, { id: input.operationId });
    if (!operation) return;
    amendMetadata(operation, 'read', { inline: false });
    appendLogs(tx, operation.projectId, input.operationId, [
      { severity: 'INFO', msg: `The read continues in its own workflow: ${reason}.` },
    ]);
  });
  return { handover: true, reason, ...(wait && { wait }) };
}

/**
 * The steps: `page` reads, delivers and checkpoints the next pages (pages.ts; counts and positions
 * only, never records); `finish` ends the operation (finish.ts).
 */
export const ReadRun = { begin, page: readPages, finish: finishRead, inline } as const;
