import type { EntityManager } from '@mikro-orm/postgresql';
import { ReadCheckpointEntity, type ReadCheckpoint } from '../../db/entities/read-checkpoint.js';
import { em as newEntityManager } from '../../db/orm.js';
import { isOpen, openDestination, type DeliveryAttemptResult } from '../destination-delivery.js';
import { writeLogs } from '../operation-logs.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import { DeliveryWindow, MessageRefused } from './delivery-window.js';
import { classifyReadError, ReadSetupError } from './failures.js';
import { pageFeed, PageFetchError, type ShapedPage } from './page-feed.js';
import { readPlanOf, type ReadPlan } from './plan.js';
import { drainStoredPages } from './stored-pages.js';
import type { ReadSettings } from './read-settings.js';

/**
 * The pages of a read, from its checkpoint on: fetch each provider page, map its records, deliver
 * (or store) its messages, and move the checkpoint, watermark and progress past it. Records never
 * leave this module: callers get counts and positions only.
 *
 * One call reads up to FERRY_READ_PAGES_PER_ACTIVITY pages for up to FERRY_READ_ACTIVITY_SECONDS
 * (a new activity costs a pause in delivery), each checkpointed once delivered, so
 * the read resumes after its last delivered page wherever it runs next. Running a call again for the
 * same checkpoint re-reads the same page and sends the same messages under the same ids
 * (`messageIdFor(operationId, pageIndex, part)`), skipping the messages the checkpoint records as
 * delivered; receivers deduplicate by `webhook-id`.
 */

export interface PageOutcome {
  /**
   * `next`: pages were delivered and more follow; `done`: nothing follows; `retry`: the destination
   * failed but may accept later; `failed`: the destination will not accept the page.
   */
  outcome: 'next' | 'done' | 'retry' | 'failed';
  /** The page the read fetches next. */
  pageIndex: number;
  recordsProcessed: number;
  /** Pages this call moved past. */
  pagesRead: number;
  retryAfterMs?: number;
  disabled?: boolean;
  error?: string;
}

export interface ReadPagesOptions {
  maxPages?: number;
  /** Fetch no more pages after this long (FERRY_READ_ACTIVITY_SECONDS); those fetched are delivered. */
  budgetMs?: number;
  /** Called as pages go by, so the activity can prove it is alive. */
  heartbeat?: () => void;
  /** The page at the checkpoint, fetched already (by an inline read deciding whether it is quiet). */
  fetched?: ShapedPage;
}

export async function loadCheckpoint(em: EntityManager, operationId: string): Promise<ReadCheckpoint> {
  const checkpoint = await em.findOne(ReadCheckpointEntity, { operationId });
  if (!checkpoint) throw new ReadSetupError(`read ${operationId} has no checkpoint: it was never prepared`);
  return checkpoint;
}

/** Where the read stands: at a checkpoint, or where this call's writer left it. */
function position(
  at: { done: boolean; pageIndex: number; recordsProcessed: number },
  pagesRead: number,
): PageOutcome {
  return {
    outcome: at.done ? 'done' : 'next',
    pageIndex: at.pageIndex,
    recordsProcessed: at.recordsProcessed,
    pagesRead,
  };
}

/** The destination refused the read (closed) or one of its messages; `pageIndex` is read again. */
function refused(
  failure: DeliveryAttemptResult,
  at: { pageIndex: number; recordsProcessed: number; pagesRead: number },
): PageOutcome {
  return {
    outcome: failure.retryable ? 'retry' : 'failed',
    pageIndex: at.pageIndex,
    recordsProcessed: at.recordsProcessed,
    pagesRead: at.pagesRead,
    ...(failure.retryAfterMs !== undefined && { retryAfterMs: failure.retryAfterMs }),
    disabled: failure.disabled,
    error: failure.error,
  };
}

/** The destination is gone or disabled: nothing is read. */
async function closedDestination(
  checkpoint: ReadCheckpoint,
  plan: ReadPlan,
  closed: DeliveryAttemptResult,
): Promise<PageOutcome> {
  await writeLogs(await newEntityManager(), plan.projectId, checkpoint.operationId, [
    {
      severity: 'ERROR',
      msg: `Destination "${plan.destinationName}" cannot receive records.`,
      error: closed.error,
    },
  ]);
  return refused(closed, {
    pageIndex: checkpoint.pageIndex,
    recordsProcessed: checkpoint.recordsProcessed,
    pagesRead: 0,
  });
}

async function recordFetchFailure(checkpoint: ReadCheckpoint, error: PageFetchError): Promise<void> {
  const plan = readPlanOf(checkpoint.plan);
  const failure = classifyReadError(error.reason);
  await writeLogs(await newEntityManager(), checkpoint.projectId, checkpoint.operationId, [
    ...error.logs,
    {
      severity: failure.retryable ? 'WARN' : 'ERROR',
      msg: `Reading page ${error.pageIndex + 1} of ${plan.objectName} failed${failure.retryable ? '; it will be retried' : ''}.`,
      error: failure.message,
    },
  ]);
}

/** On request: pages stored now may already be asked for. A failure leaves them stored. */
async function drainRequestedPages(
  plan: ReadPlan,
  operationId: string,
  settings: ReadSettings,
): Promise<void> {
  const object = {
    projectId: plan.projectId,
    installationId: plan.installationId,
    objectName: plan.objectName,
  };
  const drained = await drainStoredPages(object, plan.destinationId, settings);
  if (drained.failure) {
    await writeLogs(await newEntityManager(), plan.projectId, operationId, [
      {
        severity: 'WARN',
        msg: `Delivering requested pages to destination "${plan.destinationName}" failed; they stay stored until asked for again.`,
        error: drained.failure.error,
      },
    ]);
  }
}

export async function readPages(
  operationId: string,
  settings: ReadSettings,
  options: ReadPagesOptions = {},
): Promise<PageOutcome> {
  const checkpoint = await loadCheckpoint(await newEntityManager(), operationId);
  if (checkpoint.done) return position(checkpoint, 0);
  const plan = readPlanOf(checkpoint.plan);
  const destination =
    plan.deliveryMode === 'auto' ? await openDestination(plan.projectId, plan.destinationId) : undefined;
  if (destination && !isOpen(destination)) return closedDestination(checkpoint, plan, destination);

  const writer = new CheckpointWriter(checkpoint, plan, {
    destinationHadFailures: Boolean(destination?.destination.firstFailureTime),
  });
  const window = new DeliveryWindow(checkpoint, plan, writer, settings, destination, options.heartbeat);
  const maxPages = options.maxPages ?? settings.readPagesPerActivity;
  const deadline = Date.now() + (options.budgetMs ?? settings.readActivityMs);
  let feed = pageFeed(
    plan,
    {
      pageIndex: checkpoint.pageIndex,
      pageToken: checkpoint.pageToken ?? undefined,
      ...(options.fetched?.pageIndex === checkpoint.pageIndex && { fetched: options.fetched }),
    },
    maxPages,
    undefined,
    deadline,
  );
  try {
    for (;;) {
      const page = await feed.next().catch(async (error: unknown) => {
        if (!(error instanceof PageFetchError)) throw error;
        // The pages before it are delivered and checkpointed; then the read fails.
        await window.settle();
        await writer.flush();
        await recordFetchFailure(checkpoint, error);
        throw error.reason;
      });
      // Stop at once when the checkpoint cannot move: another run owns it, or writing it failed.
      if (writer.lost || writer.failed) break;
      if (!page) {
        if (!feed.paused || window.pagesRead >= maxPages || Date.now() >= deadline) break;
        // A full read's listing is delivered: its inferred deletions are read once it is all checkpointed.
        await window.settle();
        await writer.flush();
        if (writer.lost) break;
        const next = { pageIndex: writer.pageIndex, pageToken: writer.pageToken };
        feed = pageFeed(plan, next, maxPages - window.pagesRead, undefined, deadline);
        continue;
      }
      // On request the window sends nothing: the writer stores the page with its checkpoint.
      await window.deliver(page);
    }
    await window.settle();
  } catch (error) {
    if (!(error instanceof MessageRefused)) throw error;
    // Fetch nothing more while the messages still in flight are answered.
    feed.stop();
    const failure = await window.fail(error);
    return refused(failure, {
      pageIndex: error.pageIndex,
      recordsProcessed: writer.recordsProcessed,
      pagesRead: window.pagesRead,
    });
  } finally {
    feed.stop();
  }
  await writer.flush();
  if (writer.lost)
    return position(await loadCheckpoint(await newEntityManager(), operationId), window.pagesRead);
  if (plan.deliveryMode === 'onRequest' && window.pagesRead)
    await drainRequestedPages(plan, operationId, settings);
  return position(writer, window.pagesRead);
}
