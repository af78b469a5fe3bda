import { heartbeat } from '@temporalio/activity';
import { config } from '../src/config.js';
import { runRetentionTask as runTask } from '../src/domain/retention.js';
import type { RetentionProgress, RetentionTaskInput } from '../src/temporal/contracts/retention.js';

/** One cleanup task for at most its budget, heartbeating after every batch; thin over src/domain/retention. */
export async function runRetentionTask(input: RetentionTaskInput): Promise<RetentionProgress> {
  return runTask(input.task, {
    budgetMs: input.budgetMs,
    onBatch: (progress) => heartbeat(progress),
    retention: config().retention,
  });
}
