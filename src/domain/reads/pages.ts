import type { EntityManager } from '@mikro-orm/postgresql';
import { config } from '../../config.js';
import { ReadCheckpointEntity, type ReadCheckpoint } from '../../db/entities/read-checkpoint.js';
import { em as newEntityManager } from '../../db/orm.js';
import type { DeliveryResult } from '../../delivery/deliver.js';
import { messageIdFor } from '../../delivery/messages.js';
import {
  insertAttempts,
  isOpen,
  openDestination,
  recordFailedAttempt,
  sendMessage,
  type AttemptRecord,
  type DeliveryAttemptInput,
  type DeliveryAttemptResult,
} from '../destination-delivery.js';
import { appendLogs, writeLogs, type LogEntry } from '../operation-logs.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import { classifyReadError, ReadSetupError } from './failures.js';
import { pageFeed, PageFetchError, type ShapedPage } from './page-feed.js';
import type { ReadPlan } from './plan.js';
import { drainStoredPages } from './stored-pages.js';

/**
 * The pages of a read, from its checkpoint on: fetch each provider page, map its records, deliver
 * (or store) its messages, and move the checkpoint, watermark and progress past it. Records never
 * leave this module: callers get counts and positions only.
 *
 * One call reads up to FERRY_READ_PAGES_PER_ACTIVITY pages, each checkpointed once delivered, so
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

/** A message on its way to the destination. */
interface InFlight {
  page: ShapedPage;
  part: number;
  /** The page's last message: once it is accepted, the page is delivered. */
  last: boolean;
  input: DeliveryAttemptInput;
  time: Date;
  result: Promise<DeliveryResult>;
}

export interface ReadPagesOptions {
  maxPages?: number;
  /** Called as pages go by, so the activity can prove it is alive. */
  heartbeat?: () => void;
}

export async function loadCheckpoint(em: EntityManager, operationId: string): Promise<ReadCheckpoint> {
  const checkpoint = await em.findOne(ReadCheckpointEntity, { operationId });
  if (!checkpoint) throw new ReadSetupError(`read ${operationId} has no checkpoint: it was never prepared`);
  return checkpoint;
}

async function currentPosition(operationId: string, pagesRead: number): Promise<PageOutcome> {
  const current = await loadCheckpoint(await newEntityManager(), operationId);
  return {
    outcome: current.done ? 'done' : 'next',
    pageIndex: current.pageIndex,
    recordsProcessed: current.recordsProcessed,
    pagesRead,
  };
}

/** Keeps the delivered messages of a page that failed part-way, with what happened, for the retry. */
async function recordDeliveryFailure(
  checkpoint: ReadCheckpoint,
  page: ShapedPage,
  partsDelivered: number,
  result: DeliveryAttemptResult,
  messageId: string,
  delivered: readonly AttemptRecord[],
): Promise<void> {
  const plan = checkpoint.plan as unknown as ReadPlan;
  const where = `Delivery of page ${page.pageIndex + 1} to destination "${plan.destinationName}" failed`;
  const warning: LogEntry = {
    severity: result.retryable ? 'WARN' : 'ERROR',
    msg: result.retryable
      ? `${where}; it will be retried.`
      : `${where}${result.disabled ? ': the destination is disabled' : ''}.`,
    error: result.error,
    details: {
      messageId,
      destinationId: plan.destinationId,
      ...(result.status !== undefined && { status: result.status }),
    },
  };
  const em = await newEntityManager();
  await em.transactional(async (tx) => {
    await tx.execute(
      `update read_checkpoints set parts_delivered = greatest(parts_delivered, ?), update_time = now()
       where operation_id = ? and page_index = ?`,
      [partsDelivered, checkpoint.operationId, page.pageIndex],
      'run',
    );
    await insertAttempts(tx, delivered);
    appendLogs(tx, checkpoint.projectId, checkpoint.operationId, [...page.logs, warning]);
  });
}

async function recordFetchFailure(checkpoint: ReadCheckpoint, error: PageFetchError): Promise<void> {
  const plan = checkpoint.plan as unknown as ReadPlan;
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

export async function readPages(operationId: string, options: ReadPagesOptions = {}): Promise<PageOutcome> {
  const heartbeat = options.heartbeat ?? (() => {});
  const checkpoint = await loadCheckpoint(await newEntityManager(), operationId);
  const plan = checkpoint.plan as unknown as ReadPlan;
  if (checkpoint.done) {
    return {
      outcome: 'done',
      pageIndex: checkpoint.pageIndex,
      recordsProcessed: checkpoint.recordsProcessed,
      pagesRead: 0,
    };
  }

  const destination =
    plan.deliveryMode === 'auto' ? await openDestination(plan.projectId, plan.destinationId) : undefined;
  if (destination && !isOpen(destination)) {
    await writeLogs(await newEntityManager(), plan.projectId, operationId, [
      {
        severity: 'ERROR',
        msg: `Destination "${plan.destinationName}" cannot receive records.`,
        error: destination.error,
      },
    ]);
    return {
      outcome: 'failed',
      pageIndex: checkpoint.pageIndex,
      recordsProcessed: checkpoint.recordsProcessed,
      pagesRead: 0,
      disabled: destination.disabled,
      error: destination.error,
    };
  }

  const writer = new CheckpointWriter(checkpoint, plan, {
    destinationHadFailures: Boolean(destination?.destination.firstFailureTime),
  });
  const feed = pageFeed(
    plan,
    { pageIndex: checkpoint.pageIndex, pageToken: checkpoint.pageToken ?? undefined },
    options.maxPages ?? config().readPagesPerActivity,
  );
  let skipParts = checkpoint.partsDelivered;
  let pagesRead = 0;
  // Messages sent and not yet answered, oldest first; their outcomes are taken in this order, so
  // the checkpoint only ever moves past pages whose every message was accepted.
  const inFlight: InFlight[] = [];
  const window = destination ? config().delivery.concurrency : 1;

  const failed = async (sent: InFlight, result: DeliveryResult): Promise<PageOutcome> => {
    feed.stop();
    // Later messages already on their way are recorded; they are sent again, under the same ids, on retry.
    for (const other of inFlight.splice(0)) {
      const otherResult = await other.result;
      if (otherResult.ok) writer.attempt({ input: other.input, result: otherResult, time: other.time });
    }
    await writer.flush();
    const failure = await recordFailedAttempt({ input: sent.input, result, time: sent.time });
    await recordDeliveryFailure(
      checkpoint,
      sent.page,
      sent.part,
      failure,
      sent.input.messageId,
      writer.takeAttempts(),
    );
    return {
      outcome: failure.retryable ? 'retry' : 'failed',
      pageIndex: sent.page.pageIndex,
      recordsProcessed: writer.recordsProcessed,
      pagesRead,
      ...(failure.retryAfterMs !== undefined && { retryAfterMs: failure.retryAfterMs }),
      disabled: failure.disabled,
      error: failure.error,
    };
  };

  /** Takes the oldest message's outcome; a page whose last message is accepted is checkpointed. */
  const settleOldest = async (): Promise<PageOutcome | undefined> => {
    const sent = inFlight.shift()!;
    const result = await sent.result;
    heartbeat();
    if (!result.ok) return failed(sent, result);
    writer.attempt({ input: sent.input, result, time: sent.time });
    if (sent.last) {
      writer.advance(sent.page);
      pagesRead++;
    }
    return undefined;
  };

  const settleAll = async (): Promise<PageOutcome | undefined> => {
    while (inFlight.length) {
      const outcome = await settleOldest();
      if (outcome) return outcome;
    }
    return undefined;
  };

  try {
    for (;;) {
      let page: ShapedPage | undefined;
      try {
        page = await feed.next();
      } catch (error) {
        if (!(error instanceof PageFetchError)) throw error;
        const outcome = await settleAll();
        if (outcome) return outcome;
        await writer.flush();
        await recordFetchFailure(checkpoint, error);
        throw error.reason;
      }
      // Stop at once when the checkpoint cannot move: another run owns it, or writing it failed.
      if (!page || writer.lost || writer.failed) break;
      const first = skipParts;
      skipParts = 0;
      if (!destination || first >= page.parts.length) {
        // Nothing to send (stored on request, or an empty page): checkpoint it after the pages before it.
        const outcome = await settleAll();
        if (outcome) return outcome;
        writer.advance(page);
        pagesRead++;
        heartbeat();
        continue;
      }
      for (let part = first; part < page.parts.length; part++) {
        while (inFlight.length >= window) {
          const outcome = await settleOldest();
          if (outcome) return outcome;
        }
        const input: DeliveryAttemptInput = {
          projectId: plan.projectId,
          destinationId: plan.destinationId,
          messageId: messageIdFor(operationId, page.pageIndex, part),
          body: page.parts[part].body,
          kind: 'record',
          operationId,
        };
        inFlight.push({
          page,
          part,
          last: part === page.parts.length - 1,
          input,
          time: new Date(),
          result: sendMessage(destination, input),
        });
      }
    }
    const outcome = await settleAll();
    if (outcome) return outcome;
  } finally {
    feed.stop();
  }
  await writer.flush();
  if (writer.lost) return currentPosition(operationId, pagesRead);

  if (plan.deliveryMode === 'onRequest' && pagesRead) {
    const object = {
      projectId: plan.projectId,
      installationId: plan.installationId,
      objectName: plan.objectName,
    };
    const drained = await drainStoredPages(object, plan.destinationId);
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
  return {
    outcome: writer.done ? 'done' : 'next',
    pageIndex: writer.pageIndex,
    recordsProcessed: writer.recordsProcessed,
    pagesRead,
  };
}
