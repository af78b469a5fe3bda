import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/write.js';
import type { AsyncWriteInput, WriteOutcome } from '../src/temporal/contracts/write.js';

/**
 * An asynchronous write (workflow id `write/<operationId>`): the records one at a time, in order,
 * then the operation's outcome and its `write.async.done` event. Records are written one per
 * activity, so a worker lost mid-batch redoes at most the record it was writing.
 */

// Retryable failures only (rate limits, provider outages on updates and deletes); a record the
// provider refuses comes back as a failed outcome at once.
const { writeOneRecord } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 6,
  },
});

const { finishAsyncWrite } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

function failureMessage(error: unknown): string {
  const cause = error instanceof ActivityFailure ? (error.cause ?? error) : error;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return String(cause);
}

export async function writeRecordsWorkflow(
  input: AsyncWriteInput,
): Promise<{ success: boolean; written: number }> {
  const outcomes: WriteOutcome[] = [];
  for (let index = 0; index < input.items.length; index++) {
    try {
      outcomes.push(await writeOneRecord({ ...input, index }));
    } catch (error) {
      const recordId = input.items[index].recordId;
      outcomes.push({ index, success: false, ...(recordId && { recordId }), error: failureMessage(error) });
    }
  }
  await finishAsyncWrite({ operationId: input.operationId, outcomes });
  const written = outcomes.filter((outcome) => outcome.success).length;
  return { success: written === outcomes.length, written };
}
