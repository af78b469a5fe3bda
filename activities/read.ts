import { ApplicationFailure, Context } from '@temporalio/activity';
import { config } from '../src/config.js';
import { classifyReadError } from '../src/domain/reads/failures.js';
import type { FinishedRead } from '../src/domain/reads/finish.js';
import type { PageOutcome } from '../src/domain/reads/pages.js';
import { ReadRun } from '../src/domain/reads/read-run.js';
import type { StartedRead } from '../src/domain/reads/start.js';
import type {
  FinishReadInput,
  InlineReadInput,
  InlineReadOutcome,
  ReadObjectInput,
} from '../src/temporal/contracts/read.js';

/**
 * The read's activities, thin over ReadRun (src/domain/reads/read-run.ts): its child mode is
 * `beginReadOperation`, `readPages`, `finishReadOperation`; its inline mode `readObjectInline`.
 * Failures leave here as ApplicationFailures whose type tells the workflow what happened
 * (`ProviderAuthFailure`, `ReadRefused`, or the retryable `ReadStepFailed`) and whose message is
 * safe to show the builder.
 */

function asApplicationFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  const failure = classifyReadError(error, config().providerMaxWaitMs);
  return ApplicationFailure.create({
    message: failure.message,
    type: failure.authFailure ? 'ProviderAuthFailure' : failure.retryable ? 'ReadStepFailed' : 'ReadRefused',
    nonRetryable: !failure.retryable,
    // The provider's Retry-After, not the retry policy's backoff, says when to ask again.
    ...(failure.waitMs !== undefined && { nextRetryDelay: failure.waitMs }),
  });
}

async function step<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asApplicationFailure(error);
  }
}

/** Records the operation `in_progress` and checkpoints page 0; resuming an existing read changes nothing. */
export async function beginReadOperation(input: ReadObjectInput): Promise<StartedRead> {
  return step(async () => {
    const begun = await ReadRun.begin(input, 'child', config());
    // The child mode never ends a read as it begins it.
    if (begun.ended) throw new Error('a read in its own workflow ended as it began');
    return begun.started;
  });
}

const HEARTBEAT_MS = 500;

/**
 * Reads, delivers and checkpoints the next pages (up to FERRY_READ_PAGES_PER_ACTIVITY, each
 * checkpointed once delivered); returns counts and positions only, never records.
 */
export async function readPages(input: { operationId: string }): Promise<PageOutcome> {
  const context = Context.current();
  // The worker heartbeats every activity on a timer (cli/activity-heartbeat); delivery progress beats
  // too, at most every HEARTBEAT_MS: each beat crosses into the SDK's native core, and a read
  // answers messages far more often than Temporal needs to hear from it.
  let lastBeat = 0;
  const heartbeat = () => {
    const now = Date.now();
    if (now - lastBeat < HEARTBEAT_MS) return;
    lastBeat = now;
    context.heartbeat();
  };
  return step(() => ReadRun.page(input.operationId, config(), { heartbeat }));
}

/** Ends the operation with its summary, events and watermark; idempotent. */
export async function finishReadOperation(input: FinishReadInput): Promise<FinishedRead> {
  return step(() => ReadRun.finish(input));
}

/**
 * A whole short read in one activity, run by the installation workflow: begin, at most
 * `maxPages` pages, finish; or hand the rest to a child workflow. Never throws for a read that
 * failed: the outcome says so, and the operation is finished.
 */
export async function readObjectInline(input: InlineReadInput): Promise<InlineReadOutcome> {
  const context = Context.current();
  return ReadRun.inline(input, config(), { heartbeat: () => context.heartbeat() });
}
