import {
  ActivityFailure,
  ApplicationFailure,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/read.js';
import { nextAttemptDelay } from '../src/core/retry-schedule.js';
import {
  CANCELLED_READ,
  readWaitOf,
  type ReadEnding,
  type ReadObjectInput,
  type ReadObjectResult,
  type ReadWait,
} from '../src/temporal/contracts/read.js';
import { endRead } from './read-end.js';

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

function failureOf(error: unknown): ReadEnding {
  const cause = error instanceof ActivityFailure ? (error.cause ?? error) : error;
  if (cause instanceof ApplicationFailure) {
    return {
      status: 'failure',
      error: cause.message,
      ...(cause.type === 'ProviderAuthFailure' && { authFailure: true }),
    };
  }
  return { status: 'failure', error: cause instanceof Error ? cause.message : String(cause) };
}

function destinationFailure(error: string): ReadEnding {
  return { status: 'failure', error, destinationFailure: true };
}

/**
 * Waits as `wait` says (a durable sleep, no activity held): the provider's asked-for pause, then
 * the retry schedule's delay after the failed deliveries. False when the schedule is exhausted.
 */
async function waitBefore(wait: ReadWait, retryScheduleMs: number[]): Promise<boolean> {
  if (wait.providerWaitMs) await sleep(wait.providerWaitMs);
  if (!wait.failedAttempts) return true;
  const delay = nextAttemptDelay(wait.failedAttempts, wait.retryAfterMs, retryScheduleMs);
  if (delay === undefined) return false;
  await sleep(delay);
  return true;
}

/**
 * Reads pages until the provider has no more. A destination that fails retryably gets the same page
 * again after the delivery retry schedule's delay; a destination that refuses or is disabled fails
 * the read. Starts with the wait an inline read handed over, if any.
 */
async function readAllPages(input: ReadObjectInput, retryScheduleMs: number[]): Promise<ReadEnding> {
  let wait: ReadWait = readWaitOf(input) ?? { failedAttempts: 0 };
  if (!(await waitBefore(wait, retryScheduleMs))) {
    return destinationFailure(`the destination still failed after ${wait.failedAttempts} attempts`);
  }
  for (;;) {
    if (workflowInfo().continueAsNewSuggested) {
      // The checkpoint holds the position, so the next run resumes at the same page.
      const {
        failedAttempts: _failed,
        retryAfterMs: _after,
        providerWaitMs: _wait,
        wait: _w,
        ...resumed
      } = input;
      await continueAsNew<typeof readObjectWorkflow>(resumed);
    }
    const page = await pages.readPages({ operationId: input.operationId });
    if (page.outcome === 'done') return { status: 'success' };
    if (page.outcome === 'next') {
      wait = { failedAttempts: 0 };
      continue;
    }
    if (page.outcome === 'failed') {
      return destinationFailure(page.error ?? 'the destination refused the delivery');
    }
    // Pages got through before this failure: it is the first failure of a new page.
    wait = {
      failedAttempts: (page.pagesRead > 0 ? 0 : wait.failedAttempts) + 1,
      ...(page.retryAfterMs !== undefined && { retryAfterMs: page.retryAfterMs }),
    };
    if (!(await waitBefore(wait, retryScheduleMs))) {
      return destinationFailure(
        `the destination still failed after ${wait.failedAttempts} attempts: ${page.error ?? 'unknown error'}`,
      );
    }
  }
}

/** One read of one object, recorded as one operation: ReadRun's child mode (begin, pages, finish). */
export async function readObjectWorkflow(input: ReadObjectInput): Promise<ReadObjectResult> {
  let ending: ReadEnding;
  let cancellation: unknown;
  try {
    const started = await lifecycle.beginReadOperation(input);
    ending = await readAllPages(input, started.retryScheduleMs);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    if (isCancellation(error)) cancellation = error;
    ending = cancellation ? CANCELLED_READ : failureOf(error);
  }
  const result = await endRead(input, ending, { cancelled: Boolean(cancellation) });
  if (cancellation) throw cancellation;
  return result;
}
