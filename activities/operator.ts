import { ApplicationFailure } from '@temporalio/activity';
import { ProblemError } from '../src/core/problem.js';
import { recordIgnoredOperatorMessage } from '../src/domain/reads/ignored-requests.js';
import { recordRequestedRead as recordRead, type RequestedRead } from '../src/domain/reads/requested.js';
import {
  describeFailedOperation,
  prepareReadRetry as prepareRetry,
  retryAsyncWrite,
  type FailedOperation,
} from '../src/domain/operation-retry.js';

/**
 * What the installation workflow's operator messages need from the database. A refusal (an
 * operation that cannot be retried) leaves as a non-retryable failure whose message the Temporal
 * UI shows the operator.
 */

function refusal(error: unknown): unknown {
  return error instanceof ProblemError && error.status < 500
    ? ApplicationFailure.nonRetryable(error.detail ?? error.title, 'OperatorRequestRefused')
    : error;
}

/** Records a read an operator asked for, `in_progress`; recording it again changes nothing. */
export async function recordRequestedRead(input: RequestedRead & { installationId: string }): Promise<void> {
  await recordRead(input.installationId, input);
}

/** A Signal that could not act: `read.triggered.error` for a read that was asked for. */
export async function recordIgnoredMessage(input: {
  installationId: string;
  message: 'triggerRead' | 'backfill' | 'pause' | 'resume';
  reason: string;
  objectName?: string;
}): Promise<void> {
  await recordIgnoredOperatorMessage(input);
}

/** What the failed operation was, after checking it belongs to the installation and can be retried. */
export async function describeRetry(input: {
  installationId: string;
  operationId: string;
}): Promise<FailedOperation> {
  try {
    return await describeFailedOperation(input.operationId, { installationId: input.installationId });
  } catch (error) {
    throw refusal(error);
  }
}

/** The retry's operation, resuming the failed read's checkpoint from its last delivered page. */
export async function prepareReadRetry(input: {
  operationId: string;
  newOperationId: string;
}): Promise<void> {
  try {
    await prepareRetry(input.operationId, input.newOperationId);
  } catch (error) {
    throw refusal(error);
  }
}

/** Starts a new asynchronous write of the records that failed. */
export async function retryWrite(input: { operationId: string; newOperationId: string }): Promise<void> {
  try {
    await retryAsyncWrite(input.operationId, input.newOperationId);
  } catch (error) {
    throw refusal(error);
  }
}
