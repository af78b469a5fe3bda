import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  isGrpcDeadlineError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { SearchAttributePair, SignalDefinition } from '@temporalio/common';
import { ProblemError } from '../core/problem.js';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { temporalClient } from './client.js';
import {
  INSTALLATION_WORKFLOW_TYPE,
  applyConfigUpdate,
  describeQuery,
  retryOperationUpdate,
  type RetryResult,
  type ApplyConfigResult,
  type InstallationConfigMessage,
  type InstallationDescription,
  type InstallationWorkflowInput,
} from './contracts/installation.js';
import { NOTIFICATION_WORKFLOW_TYPE, type NotificationDeliveryInput } from './contracts/notification.js';
import { WRITE_WORKFLOW_TYPE, type AsyncWriteInput } from './contracts/write.js';
import { SUBSCRIPTION_EVENT_WORKFLOW_TYPE, type SubscriptionEventInput } from './contracts/subscription.js';
import {
  SCHEMA_WATCH_DELIVERY_WORKFLOW_TYPE,
  type SchemaWatchDeliveryInput,
} from './contracts/schema-watch.js';
import {
  RETENTION_WORKFLOW_TYPE,
  configureRetentionSignal,
  describeRetentionQuery,
  runRetentionNowUpdate,
  type RetentionDescription,
  type RetentionPassResult,
  type RetentionWorkflowInput,
} from './contracts/retention.js';
import {
  installationWorkflowId,
  retentionWorkflowId,
  notificationWorkflowId,
  schemaWatchWorkflowId,
  subscriptionEventWorkflowId,
  writeWorkflowId,
} from './contracts/workflow-ids.js';
import {
  FerryGroupRef,
  FerryInstallationId,
  FerryIntegrationId,
  FerryProjectId,
  FerryProvider,
} from './search-attributes.js';
import { taskQueueOf, type WorkConcern } from './contracts/task-queues.js';

/**
 * Every call Ferry makes to Temporal: each start, signal, update, query and cancel of every workflow
 * kind goes through here, so each has a deadline and fails one of three ways:
 * - `WorkflowNotRunningError`: no open run has that id (the caller decides what that means);
 * - `WorkflowRefusedError`: the workflow's Update validator or handler refused the message;
 * - a 503 `ProblemError` (retryable): Temporal, or a worker for an Update or Query, did not answer.
 */

/** How long a call waits on Temporal before giving up; below typical HTTP client timeouts. */
const CALL_DEADLINE_MS = 10_000;
/** How long ending an installation waits for its workflow (and running reads) to finish before terminating it. */
const END_DEADLINE_MS = 30_000;

/** The task queue of a concern's work in this deployment (or the one whose base queue is given). */
function taskQueueFor(concern: WorkConcern, baseTaskQueue = config().temporal.taskQueue): string {
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

/** An installation's identity plus the human names its workflow's memo shows. */
export interface InstallationWorkflowIdentity extends Required<WorkflowIdentity> {
  installationId: string;
  projectName: string;
  integrationName: string;
  groupName: string;
}

export function searchAttributesOf(identity: WorkflowIdentity): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [{ key: FerryProjectId, value: identity.projectId }];
  if (identity.integrationId) pairs.push({ key: FerryIntegrationId, value: identity.integrationId });
  if (identity.installationId) pairs.push({ key: FerryInstallationId, value: identity.installationId });
  if (identity.provider) pairs.push({ key: FerryProvider, value: identity.provider });
  if (identity.groupRef) pairs.push({ key: FerryGroupRef, value: identity.groupRef });
  return pairs;
}

function unavailable(error: unknown, what: string): ProblemError {
  logger.warn({ err: error, what }, 'Temporal call failed');
  return ProblemError.unavailable(
    `The workflow service did not answer, so ${what} could not be done. Retry later.`,
  );
}

/** Runs one call with a deadline; the one place where Temporal's failures are told apart. */
async function temporalCall<T>(
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

function installationHandle(client: Client, installationId: string): WorkflowHandle {
  return client.workflow.getHandle(installationWorkflowId(installationId));
}

/**
 * Starts an installation's workflow. Returns false when a run is already open: a second start never
 * replaces a live workflow, so concurrent starts (the API and reconcile) cannot lose its state.
 */
export async function startInstallationWorkflow(
  identity: InstallationWorkflowIdentity,
  message: InstallationConfigMessage,
  /** When a new installation was created: its schedule began then. */
  scheduleFrom?: Date,
): Promise<boolean> {
  const workflowId = installationWorkflowId(identity.installationId);
  const input: InstallationWorkflowInput = {
    installationId: identity.installationId,
    projectId: identity.projectId,
    config: message,
    ...(scheduleFrom && { scheduleFrom: scheduleFrom.toISOString() }),
    scheduleSpreadSeconds: config().scheduleSpreadSeconds,
    inlineReadPages: config().readInlinePages,
  };
  try {
    await temporalCall(`starting installation ${identity.installationId}`, workflowId, (client) =>
      client.workflow.start(INSTALLATION_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: taskQueueFor('installations'),
        args: [input],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: searchAttributesOf(identity),
        memo: {
          projectName: identity.projectName,
          integrationName: identity.integrationName,
          groupName: identity.groupName,
          groupRef: identity.groupRef,
          provider: identity.provider,
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

/**
 * Delivers a config version as the `applyConfig` Update and returns what the workflow changed. The
 * update id is the config id, so a retried call is applied once; restoring an earlier version passes
 * an id of its own, since Temporal answers a reused id from its first result without applying it.
 */
export async function applyInstallationConfig(
  installationId: string,
  message: InstallationConfigMessage,
  updateId = `config/${message.configId}`,
): Promise<ApplyConfigResult> {
  return temporalCall(
    `updating installation ${installationId}`,
    installationWorkflowId(installationId),
    (client) =>
      installationHandle(client, installationId).executeUpdate(applyConfigUpdate, {
        args: [message],
        updateId,
      }),
  );
}

/** Asks the installation's workflow to retry one of its failed operations (the `retryOperation` Update). */
export async function retryInInstallation(installationId: string, operationId: string): Promise<RetryResult> {
  return temporalCall(`retrying operation ${operationId}`, installationWorkflowId(installationId), (client) =>
    installationHandle(client, installationId).executeUpdate(retryOperationUpdate, {
      args: [{ operationId }],
      updateId: `retry/${operationId}`,
    }),
  );
}

/** Sends one of the installation workflow's signals (trigger, backfill, pause, resume). */
export async function signalInstallation<T>(
  installationId: string,
  signal: SignalDefinition<[T]>,
  argument: T,
): Promise<void> {
  await temporalCall(
    `signalling installation ${installationId}`,
    installationWorkflowId(installationId),
    (client) => installationHandle(client, installationId).signal(signal, argument),
  );
}

export async function describeInstallation(
  installationId: string,
  options: { deadlineMs?: number } = {},
): Promise<InstallationDescription> {
  return temporalCall(
    `describing installation ${installationId}`,
    installationWorkflowId(installationId),
    (client) => installationHandle(client, installationId).query(describeQuery),
    options.deadlineMs,
  );
}

/** Where a workflow run stands, as the Temporal server itself records it (no worker needed). */
export type WorkflowRunState =
  { state: 'running' } | { state: 'closed'; status: string } | { state: 'missing' };

export async function workflowRunState(workflowId: string): Promise<WorkflowRunState> {
  try {
    const description = await temporalCall(`describing ${workflowId}`, workflowId, (client) =>
      client.workflow.getHandle(workflowId).describe(),
    );
    return description.status.name === 'RUNNING'
      ? { state: 'running' }
      : { state: 'closed', status: description.status.name };
  } catch (error) {
    if (error instanceof WorkflowNotRunningError) return { state: 'missing' };
    throw error;
  }
}

/**
 * The config id an installation's running workflow holds, from the memo it keeps current: read by
 * the server alone, so it answers while workers are busy. Undefined when the memo does not say
 * (workflows started before it did, or whose first task has not run yet).
 */
export async function installationConfigIdFromMemo(installationId: string): Promise<string | undefined> {
  const description = await temporalCall(
    `describing installation ${installationId}`,
    installationWorkflowId(installationId),
    (client) => installationHandle(client, installationId).describe(),
  );
  if (description.status.name !== 'RUNNING')
    throw new WorkflowNotRunningError(installationWorkflowId(installationId));
  const configId = description.memo?.configId;
  return typeof configId === 'string' ? configId : undefined;
}

/** Best effort: undoes a start whose database transaction did not commit. */
export async function terminateInstallationWorkflow(installationId: string, reason: string): Promise<void> {
  try {
    await temporalCall(
      `terminating installation ${installationId}`,
      installationWorkflowId(installationId),
      (client) => installationHandle(client, installationId).terminate(reason),
    );
  } catch (error) {
    if (error instanceof WorkflowNotRunningError) return;
    // The workflow's first activity finds no installation and ends the run by itself.
    logger.warn({ err: error, installationId }, 'could not terminate an installation workflow');
  }
}

/**
 * Ends an installation's workflow: a cancellation request, which makes it cancel its running reads,
 * wait for them and remove its provider subscriptions; past END_DEADLINE_MS it is terminated (its
 * reads die with it). A workflow that is not running needs no ending.
 */
export async function endInstallationWorkflow(installationId: string): Promise<void> {
  const workflowId = installationWorkflowId(installationId);
  const what = `ending installation ${installationId}`;
  try {
    await temporalCall(what, workflowId, (client) => installationHandle(client, installationId).cancel());
    const ended = await temporalCall(
      what,
      workflowId,
      async (client) => {
        try {
          await installationHandle(client, installationId).result();
        } catch (error) {
          if (isGrpcDeadlineError(error)) return false;
          if (!(error instanceof WorkflowFailedError)) throw error; // failed as cancelled: ended
        }
        return true;
      },
      END_DEADLINE_MS,
    );
    if (ended) return;
    logger.warn({ installationId }, 'installation workflow did not end in time; terminating it');
    await temporalCall(what, workflowId, (client) =>
      installationHandle(client, installationId).terminate('installation deleted'),
    );
  } catch (error) {
    if (!(error instanceof WorkflowNotRunningError)) throw error;
  }
}

/**
 * Open installation workflows, optionally of one project, with the config id their memo holds:
 * reconcile's view of Temporal, a few visibility pages instead of one call per installation.
 */
export async function* runningInstallationWorkflows(
  projectId?: string,
): AsyncIterable<{ installationId: string; startTime: Date; configId?: string }> {
  const query = [
    `WorkflowType = '${INSTALLATION_WORKFLOW_TYPE}'`,
    `ExecutionStatus = 'Running'`,
    ...(projectId ? [`FerryProjectId = '${projectId}'`] : []),
  ].join(' AND ');
  let client: Client;
  try {
    client = await temporalClient();
  } catch (error) {
    throw unavailable(error, 'listing installation workflows');
  }
  for await (const execution of client.workflow.list({ query })) {
    const installationId = execution.workflowId.replace(/^installation\//, '');
    if (execution.workflowId !== installationWorkflowId(installationId)) continue;
    const configId = execution.memo?.configId;
    yield {
      installationId,
      startTime: execution.startTime,
      ...(typeof configId === 'string' && { configId }),
    };
  }
}

/** Starts an asynchronous write's workflow (`write/<operationId>`). */
export async function startWriteWorkflow(input: AsyncWriteInput, identity: WorkflowIdentity): Promise<void> {
  const workflowId = writeWorkflowId(input.operationId);
  await temporalCall(`starting write ${input.operationId}`, workflowId, (client) =>
    client.workflow.start(WRITE_WORKFLOW_TYPE, {
      taskQueue: taskQueueFor('writes'),
      workflowId,
      args: [input],
      typedSearchAttributes: searchAttributesOf(identity),
      memo: { objectName: input.objectName, writeType: input.type },
    }),
  );
}

/**
 * The input an asynchronous write's workflow started with (its records travel there, not in the
 * database), read from the first event of its history; undefined once Temporal no longer keeps it.
 */
export async function writeWorkflowInput(operationId: string): Promise<AsyncWriteInput | undefined> {
  const workflowId = writeWorkflowId(operationId);
  try {
    return await temporalCall(`reading write ${operationId}`, workflowId, async (client) => {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      return payload
        ? (client.options.loadedDataConverter.payloadConverter.fromPayload(payload) as AsyncWriteInput)
        : undefined;
    });
  } catch (error) {
    if (error instanceof WorkflowNotRunningError) return undefined;
    throw error;
  }
}

/**
 * Starts a delivery workflow that must run once per id: a second start, after the first or while it
 * runs, is a no-op (REJECT_DUPLICATE), so a retried caller never delivers twice. Deliveries have a
 * task queue of their own, so a backlog of reads never holds up a webhook.
 */
async function startOnce(
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

/**
 * Starts the delivery of one notification event to one destination. Starting it again (a retried
 * outbox batch) is a no-op, also after it finished: each delivery runs once.
 */
export async function startNotificationDelivery(
  input: NotificationDeliveryInput,
  options: {
    eventType: string;
    /** The deployment's base task queue, when not FERRY_TASK_QUEUE. */
    baseTaskQueue?: string;
    workflowIdSuffix?: string;
    /** Whom the event concerns (its installation, when it has one), for the Temporal UI. */
    identity?: WorkflowIdentity;
  },
): Promise<void> {
  // A redelivery asked for later runs under an id of its own: the first delivery's id is spent.
  const workflowId = [notificationWorkflowId(input.eventId, input.destinationId), options.workflowIdSuffix]
    .filter(Boolean)
    .join('/');
  await startOnce(`delivering event ${input.eventId}`, NOTIFICATION_WORKFLOW_TYPE, workflowId, input, {
    identity: options.identity ?? { projectId: input.projectId },
    baseTaskQueue: options.baseTaskQueue,
    memo: { eventType: options.eventType },
  });
}

/** Starts the delivery of one change event a provider sent; starting it again is a no-op. */
export async function startSubscriptionEventDelivery(
  input: SubscriptionEventInput,
  identity: WorkflowIdentity,
): Promise<void> {
  await startOnce(
    `delivering change event ${input.subscriptionEventId}`,
    SUBSCRIPTION_EVENT_WORKFLOW_TYPE,
    subscriptionEventWorkflowId(input.subscriptionEventId),
    input,
    { identity },
  );
}

/** Starts the delivery of one schema watch run's messages; starting it again is a no-op. */
export async function startSchemaWatchDelivery(
  input: SchemaWatchDeliveryInput,
  identity: WorkflowIdentity,
): Promise<void> {
  await startOnce(
    `delivering schema changes of ${input.operationId}`,
    SCHEMA_WATCH_DELIVERY_WORKFLOW_TYPE,
    schemaWatchWorkflowId(input.operationId),
    input,
    { identity },
  );
}

/**
 * Starts the deployment's cleanup workflow, or, when it runs already, hands it the schedule
 * (signal-with-start): any number of workers starting at once leave one run, on the latest schedule.
 */
export async function startRetentionWorkflow(
  options: { schedule?: string; taskQueue?: string } = {},
): Promise<void> {
  const taskQueue = options.taskQueue ?? config().temporal.taskQueue;
  const schedule = options.schedule ?? config().retention.schedule;
  const workflowId = retentionWorkflowId(taskQueue);
  const input: RetentionWorkflowInput = { schedule };
  await temporalCall('starting the retention workflow', workflowId, (client) =>
    client.workflow.signalWithStart(RETENTION_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [input],
      signal: configureRetentionSignal,
      signalArgs: [{ schedule }],
    }),
  );
}

/** Runs a cleanup pass now (the `runRetentionNow` Update) and answers what it deleted. */
export async function runRetentionNow(
  options: { taskQueue?: string; deadlineMs?: number } = {},
): Promise<RetentionPassResult> {
  const workflowId = retentionWorkflowId(options.taskQueue ?? config().temporal.taskQueue);
  return temporalCall(
    'running a retention pass',
    workflowId,
    (client) => client.workflow.getHandle(workflowId).executeUpdate(runRetentionNowUpdate),
    options.deadlineMs,
  );
}

export async function describeRetention(options: { taskQueue?: string } = {}): Promise<RetentionDescription> {
  const workflowId = retentionWorkflowId(options.taskQueue ?? config().temporal.taskQueue);
  return temporalCall('describing the retention workflow', workflowId, (client) =>
    client.workflow.getHandle(workflowId).query(describeRetentionQuery),
  );
}
