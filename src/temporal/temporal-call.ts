import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { ProblemError } from '../core/problem.js';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { temporalClient } from './client.js';
import { taskQueueOf, type WorkConcern } from './contracts/task-queues.js';
import {
  FerryGroupRef,
  FerryInstallationId,
  FerryIntegrationId,
  FerryProjectId,
  FerryProvider,
} from './search-attributes.js';

/**
 * Every call Ferry makes to Temporal: each start, signal, update, query and cancel of every workflow
 * kind goes through here, so each has a deadline and fails one of three ways:
 * - `WorkflowNotRunningError`: no open run has that id (the caller decides what that means);
 * - `WorkflowRefusedError`: the workflow's Update validator or handler refused the message;
 * - a 503 `ProblemError` (retryable): Temporal, or a worker for an Update or Query, did not answer.
 */

/** How long a call waits on Temporal before giving up; below typical HTTP client timeouts. */
const CALL_DEADLINE_MS = 10_000;

/** The task queue of a concern's work in this deployment (or the one whose base queue is given). */
export function taskQueueFor(concern: WorkConcern, baseTaskQueue = config().temporal.taskQueue): string {
  return taskQueueOf(baseTaskQueue, concern);
}

export class WorkflowNotRunningError extends Error {
  constructor(readonly workflowId: string) {
    super(`No run of workflow ${workflowId} is open.`);
    this.name = 'WorkflowNotRunningError';
  }
}

export class WorkflowRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkflowRefusedError';
  }
}

/** Who a workflow works for: its search attributes, so an operator filters runs in the Temporal UI. */
export interface WorkflowIdentity {
  projectId: string;
  integrationId?: string;
  installationId?: string;
  provider?: string;
  groupRef?: string;
}

export function searchAttributesOf(identity: WorkflowIdentity): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [{ key: FerryProjectId, value: identity.projectId }];
  if (identity.integrationId) pairs.push({ key: FerryIntegrationId, value: identity.integrationId });
  if (identity.installationId) pairs.push({ key: FerryInstallationId, value: identity.installationId });
  if (identity.provider) pairs.push({ key: FerryProvider, value: identity.provider });
  if (identity.groupRef) pairs.push({ key: FerryGroupRef, value: identity.groupRef });
  return pairs;
}

export function unavailable(error: unknown, what: string): ProblemError {
  logger.warn({ err: error, what }, 'Temporal call failed');
  return ProblemError.unavailable(
    `The workflow service did not answer, so ${what} could not be done. Retry later.`,
  );
}

/** Runs one call with a deadline; the one place where Temporal's failures are told apart. */
export async function temporalCall<T>(
  what: string,
  workflowId: string,
  call: (client: Client) => Promise<T>,
  deadlineMs = CALL_DEADLINE_MS,
): Promise<T> {
  let client: Client;
  try {
    client = await temporalClient();
  } catch (error) {
    throw unavailable(error, what);
  }
  try {
    return await client.withDeadline(Date.now() + deadlineMs, () => call(client));
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new WorkflowNotRunningError(workflowId);
    if (error instanceof WorkflowUpdateFailedError) {
      throw new WorkflowRefusedError(error.cause?.message ?? error.message);
    }
    if (error instanceof WorkflowExecutionAlreadyStartedError) throw error;
    throw unavailable(error, what);
  }
}

/**
 * Starts a delivery workflow that must run once per id: a second start, after the first or while it
 * runs, is a no-op (REJECT_DUPLICATE), so a retried caller never delivers twice. Deliveries have a
 * task queue of their own, so a backlog of reads never holds up a webhook.
 */
export async function startOnce(
  what: string,
  workflowType: string,
  workflowId: string,
  input: unknown,
  options: { identity: WorkflowIdentity; baseTaskQueue?: string; memo?: Record<string, unknown> },
): Promise<void> {
  try {
    await temporalCall(what, workflowId, (client) =>
      client.workflow.start(workflowType, {
        taskQueue: taskQueueFor('deliveries', options.baseTaskQueue),
        workflowId,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: searchAttributesOf(options.identity),
        ...(options.memo && { memo: options.memo }),
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
