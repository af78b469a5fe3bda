import {
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { nextFireTime } from '../src/core/cron.js';
import {
  RETENTION_TASKS,
  configureRetentionSignal,
  describeRetentionQuery,
  runRetentionNowUpdate,
  type RetentionPassResult,
  type RetentionProgress,
  type RetentionWorkflowInput,
} from '../src/temporal/contracts/retention.js';
import type * as activities from '../activities/retention.js';
import { errorMessage } from './error-message.js';
import { SerialQueue } from './serial-queue.js';
import { workflowNow } from './workflow-now.js';

// Each call deletes for at most TASK_BUDGET_MS and heartbeats after every batch; a lost worker is
// noticed within the heartbeat timeout and the call runs again (deleting is idempotent).
const { runRetentionTask } = proxyActivities<typeof activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

const TASK_BUDGET_MS = 5 * 60_000;
/** Safety net beside the server's continue-as-new suggestion. */
const DEFAULT_MAX_PASSES = 200;

/** One cleanup pass: every task in order, each called until it is done; a failing task is logged and skipped. */
async function pass(): Promise<RetentionPassResult> {
  const startedAt = workflowNow().toISOString();
  const tasks: RetentionProgress[] = [];
  for (const task of RETENTION_TASKS) {
    // Passes begun before this task existed run without it, as they ran.
    if (task === 'read-fingerprints' && !patched('retention-read-fingerprints')) continue;
    const total: RetentionProgress = { task, deleted: 0, batches: 0, longestBatchMs: 0, done: false };
    try {
      while (!total.done) {
        const part = await runRetentionTask({ task, budgetMs: TASK_BUDGET_MS });
        total.deleted += part.deleted;
        total.batches += part.batches;
        total.longestBatchMs = Math.max(total.longestBatchMs, part.longestBatchMs);
        total.done = part.done;
      }
    } catch (error) {
      if (isCancellation(error)) throw error;
      // The next pass tries again; later tasks still run (they never depend on an earlier one's rows).
      log.warn('retention task failed', { task, error: errorMessage(error) });
    }
    tasks.push(total);
  }
  return { startedAt, finishedAt: workflowNow().toISOString(), tasks };
}

/**
 * The deployment's cleanup: sleep until the schedule's next fire, run a pass, repeat; continue as new
 * when history grows. Passes never overlap, whether scheduled or asked for with `runRetentionNow`.
 */
export async function retentionWorkflow(input: RetentionWorkflowInput): Promise<void> {
  let schedule = input.schedule;
  let lastPass = input.lastPass;
  let nextAt = nextFireTime(schedule, workflowNow());
  let rescheduled = false;
  let running = false;
  const passes = new SerialQueue();
  const runPass = () =>
    passes.run(async () => {
      running = true;
      try {
        lastPass = await pass();
        return lastPass;
      } finally {
        running = false;
      }
    });

  setHandler(configureRetentionSignal, (message) => {
    if (message.schedule === schedule) return;
    try {
      nextAt = nextFireTime(message.schedule, workflowNow());
    } catch (error) {
      // A Signal cannot be refused; the worker validates FERRY_RETENTION_SCHEDULE before sending it.
      log.warn('ignored a retention schedule that cannot fire', { schedule: message.schedule, error });
      return;
    }
    schedule = message.schedule;
    rescheduled = true;
  });
  setHandler(runRetentionNowUpdate, runPass);
  setHandler(describeRetentionQuery, () => ({
    schedule,
    nextPassAt: new Date(nextAt).toISOString(),
    running,
    ...(lastPass && { lastPass }),
  }));

  const maxPasses = input.maxPasses ?? DEFAULT_MAX_PASSES;
  for (let done = 0; done < maxPasses && !workflowInfo().continueAsNewSuggested;) {
    rescheduled = false;
    const wait = Math.max(nextAt.getTime() - workflowNow().getTime(), 1);
    if (await condition(() => rescheduled, wait)) continue;
    await runPass();
    done++;
    nextAt = nextFireTime(schedule, workflowNow());
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof retentionWorkflow>({ ...input, schedule, ...(lastPass && { lastPass }) });
}
