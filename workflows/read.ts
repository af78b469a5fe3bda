import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/read.js';
import { nextAttemptDelay } from '../src/core/retry-schedule.js';
import type { ReadObjectInput, ReadObjectResult } from '../src/temporal/contracts/read.js';

const lifecycle = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  // Every activity heartbeats (cli/activity-heartbeat): a dead worker's activity moves on within this.
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/**
 * Each activity reads a run of pages, checkpointing each. A provider that keeps failing is retried
 * with backoff for a few minutes before the read gives up; the heartbeat timeout hands a dead
 * worker's pages to another worker quickly.
 */
const pages = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
  },
});

interface Failure {
  error: string;
  authFailure?: boolean;
  /** The destination refused, stayed down or was disabled: re-enabling it resumes the read. */
  destinationFailure?: boolean;
}

function failureOf(error: unknown): Failure {
  const cause = error instanceof ActivityFailure ? (error.cause ?? error) : error;
  if (cause instanceof ApplicationFailure) {
    return { error: cause.message, ...(cause.type === 'ProviderAuthFailure' && { authFailure: true }) };
  }
  return { error: cause instanceof Error ? cause.message : String(cause) };
}

/**
 * Reads pages until the provider has no more. A destination that fails retryably gets the same page
 * again after the delivery retry schedule's delay (a durable sleep, no activity held); a destination
 * that refuses or is disabled fails the read.
 */
async function readAllPages(input: ReadObjectInput, retryScheduleMs: number[]): Promise<Failure | undefined> {
  // Handed over because the provider asked to wait: no request goes out before it said.
  if (input.providerWaitMs) await sleep(input.providerWaitMs);
  // Handed over by an inline read whose destination failed: wait as after that failed attempt.
  let failedAttempts = input.failedAttempts ?? 0;
  if (failedAttempts) {
    const delay = nextAttemptDelay(failedAttempts, input.retryAfterMs, retryScheduleMs);
    if (delay === undefined) {
      return {
        error: `the destination still failed after ${failedAttempts} attempts`,
        destinationFailure: true,
      };
    }
    await sleep(delay);
  }
  for (;;) {
    if (workflowInfo().continueAsNewSuggested) {
      // The checkpoint holds the position, so the next run resumes at the same page.
      const { failedAttempts: _failed, retryAfterMs: _after, providerWaitMs: _wait, ...resumed } = input;
      await continueAsNew<typeof readObjectWorkflow>(resumed);
    }
    const page = await pages.readPages({ operationId: input.operationId });
    if (page.outcome === 'done') return undefined;
    if (page.outcome === 'next') {
      failedAttempts = 0;
      continue;
    }
    if (page.outcome === 'failed') {
      return { error: page.error ?? 'the destination refused the delivery', destinationFailure: true };
    }
    // Pages got through before this failure: it is the first failure of a new page.
    if (page.pagesRead > 0) failedAttempts = 0;
    failedAttempts++;
    const delay = nextAttemptDelay(failedAttempts, page.retryAfterMs, retryScheduleMs);
    if (delay === undefined) {
      return {
        error: `the destination still failed after ${failedAttempts} attempts: ${page.error ?? 'unknown error'}`,
        destinationFailure: true,
      };
    }
    await sleep(delay);
  }
}

/** One read of one object, recorded as one operation. */
export async function readObjectWorkflow(input: ReadObjectInput): Promise<ReadObjectResult> {
  let failure: Failure | undefined;
  try {
    const started = await lifecycle.beginReadOperation(input);
    failure = await readAllPages(input, started.retryScheduleMs);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(() =>
        lifecycle.finishReadOperation({ ...input, status: 'failure', error: 'The read was cancelled.' }),
      );
      throw error;
    }
    failure = failureOf(error);
  }
  const finished = await lifecycle.finishReadOperation({
    ...input,
    status: failure ? 'failure' : 'success',
    ...(failure && { error: failure.error }),
    ...(failure?.authFailure && { authFailure: true }),
    ...(failure?.destinationFailure && { destinationFailure: true }),
  });
  return {
    status: finished.status,
    recordsProcessed: finished.recordsProcessed,
    ...(failure?.authFailure && { authFailure: true }),
    result: finished.result,
  };
}
