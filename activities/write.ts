import { ApplicationFailure } from '@temporalio/activity';
import { finishWrite } from '../src/domain/writes/operation.js';
import { RetryableWriteError, writeOneRecord as writeRecord } from '../src/domain/writes/run.js';
import { type AsyncWriteInput, type WriteOutcome } from '../src/temporal/contracts/write.js';

/** The asynchronous write's activities, thin over src/domain/writes. */

/** Writes one record; a failure worth retrying leaves as a retryable ApplicationFailure. */
export async function writeOneRecord(input: AsyncWriteInput & { index: number }): Promise<WriteOutcome> {
  try {
    return await writeRecord(input);
  } catch (error) {
    if (error instanceof RetryableWriteError) {
      throw ApplicationFailure.create({ message: error.message, type: 'WriteStepFailed' });
    }
    throw error;
  }
}

/** Records the outcome and the `write.async.done` event, once. */
export async function finishAsyncWrite(input: {
  operationId: string;
  outcomes: WriteOutcome[];
}): Promise<void> {
  await finishWrite({ ...input, notify: true });
}
