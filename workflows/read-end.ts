import { CancellationScope, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/read.js';
import type { ReadEnding, ReadObjectInput, ReadObjectResult } from '../src/temporal/contracts/read.js';

const { finishReadOperation } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  // Every activity heartbeats (cli/activity-heartbeat): a dead worker's activity moves on within this.
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/**
 * The one place a workflow ends a read's operation, whichever ran it (the read's own workflow, or
 * its installation's when an inline read is cancelled). A cancelled read is ended outside the
 * cancelled scope, so its operation never stays in progress.
 */
export async function endRead(
  input: ReadObjectInput,
  ending: ReadEnding,
  { cancelled = false } = {},
): Promise<ReadObjectResult> {
  const finish = () => finishReadOperation({ ...input, ...ending });
  const finished = cancelled ? await CancellationScope.nonCancellable(finish) : await finish();
  return {
    status: finished.status,
    recordsProcessed: finished.recordsProcessed,
    ...(ending.authFailure && { authFailure: true }),
    result: finished.result,
  };
}
