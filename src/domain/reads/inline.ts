import { config } from '../../config.js';
import { OperationEntity } from '../../db/entities/operation.js';
import { em as newEntityManager } from '../../db/orm.js';
import type { InlineReadInput, InlineReadOutcome } from '../../temporal/contracts/read.js';
import { appendLogs } from '../operation-logs.js';
import { classifyReadError } from './failures.js';
import { finishRead } from './finish.js';
import { readPages } from './pages.js';
import { tryQuietRead } from './quiet.js';
import { startRead } from './start.js';

/**
 * A read run inline by its installation's workflow, in one activity: begin the operation, read at
 * most `maxPages` pages (each checkpointed once delivered) and finish the operation. What does not
 * fit (more pages, a destination to wait for, a step worth retrying) is handed over: the operation
 * stays `in_progress` and a child `readObjectWorkflow` resumes from the checkpoint, with its own
 * history, retries and durable waits. Most scheduled reads are one page and never hand over.
 */

/** After this long an inline read fetches no more pages and hands the rest over. */
const INLINE_BUDGET_MS = 15_000;

export interface InlineReadOptions {
  heartbeat?: () => void;
}

export async function readInline(
  input: InlineReadInput,
  options: InlineReadOptions = {},
): Promise<InlineReadOutcome> {
  const { maxPages, ...read } = input;
  let failure: { error: string; authFailure?: boolean; destinationFailure?: boolean } | undefined;
  try {
    const attempt = await tryQuietRead({ ...read, inline: true });
    if (attempt.quiet) return { handover: false, ...attempt.result };
    await startRead({ ...read, inline: true }, attempt.planned);
    // The installation's workflow answers no query or update while this runs: keep it short.
    const page = await readPages(read.operationId, {
      maxPages,
      budgetMs: INLINE_BUDGET_MS,
      heartbeat: options.heartbeat,
      ...(attempt.fetched && { fetched: attempt.fetched }),
    });
    if (page.outcome === 'next') {
      return handOver(input, `more than ${maxPages} ${maxPages === 1 ? 'page' : 'pages'} to read`);
    }
    if (page.outcome === 'retry') {
      return handOver(input, `the destination failed: ${page.error ?? 'unknown error'}`, {
        failedAttempts: 1,
        ...(page.retryAfterMs !== undefined && { retryAfterMs: page.retryAfterMs }),
      });
    }
    if (page.outcome === 'failed') {
      failure = { error: page.error ?? 'the destination refused the delivery', destinationFailure: true };
    }
  } catch (error) {
    const classified = classifyReadError(error, config().providerMaxWaitMs);
    // A step worth retrying is retried by the child, with backoff, from the checkpoint; after the
    // wait the provider asked for, when it asked.
    if (classified.retryable)
      return handOver(input, classified.message, {
        ...(classified.waitMs !== undefined && { providerWaitMs: classified.waitMs }),
      });
    failure = { error: classified.message, ...(classified.authFailure && { authFailure: true }) };
  }
  const finished = await finishRead({
    ...read,
    status: failure ? 'failure' : 'success',
    ...(failure && { error: failure.error }),
    ...(failure?.authFailure && { authFailure: true }),
    ...(failure?.destinationFailure && { destinationFailure: true }),
  });
  return {
    handover: false,
    status: finished.status,
    recordsProcessed: finished.recordsProcessed,
    ...(failure?.authFailure && { authFailure: true }),
    result: finished.result,
  };
}

/** Marks the operation as run by its own workflow from now on (operators follow that one) and says why. */
async function handOver(
  input: InlineReadInput,
  reason: string,
  retry: { failedAttempts?: number; retryAfterMs?: number; providerWaitMs?: number } = {},
): Promise<InlineReadOutcome> {
  const em = await newEntityManager();
  await em.transactional(async (tx) => {
    const operation = await tx.findOne(OperationEntity, { id: input.operationId });
    if (!operation) return;
    operation.metadata = { ...operation.metadata, inline: false };
    appendLogs(tx, operation.projectId, input.operationId, [
      { severity: 'INFO', msg: `The read continues in its own workflow: ${reason}.` },
    ]);
  });
  return { handover: true, reason, ...retry };
}
