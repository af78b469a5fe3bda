import {
  WorkflowNotRunningError,
  searchAttributesOf,
  startOnce,
  taskQueueFor,
  temporalCall,
  type WorkflowIdentity,
} from './temporal-call.js';
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
  retentionWorkflowId,
  notificationWorkflowId,
  schemaWatchWorkflowId,
  subscriptionEventWorkflowId,
  writeWorkflowId,
} from './contracts/workflow-ids.js';

/**
 * The gateway's calls for the work that is not an installation's: asynchronous writes, deliveries
 * (notification events, provider change events, schema watch messages) and the retention workflow.
 * Reached through `gateway.ts`, like every call to Temporal.
 */

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
export async function startRetentionWorkflow(options: {
  /** FERRY_RETENTION_SCHEDULE. */
  schedule: string;
  /** The deployment's base task queue (FERRY_TASK_QUEUE): the workflow is one per deployment. */
  taskQueue: string;
}): Promise<void> {
  const { taskQueue, schedule } = options;
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
export async function runRetentionNow(options: {
  taskQueue: string;
  deadlineMs?: number;
}): Promise<RetentionPassResult> {
  const workflowId = retentionWorkflowId(options.taskQueue);
  return temporalCall(
    'running a retention pass',
    workflowId,
    (client) => client.workflow.getHandle(workflowId).executeUpdate(runRetentionNowUpdate),
    options.deadlineMs,
  );
}

export async function describeRetention(options: { taskQueue: string }): Promise<RetentionDescription> {
  const workflowId = retentionWorkflowId(options.taskQueue);
  return temporalCall('describing the retention workflow', workflowId, (client) =>
    client.workflow.getHandle(workflowId).query(describeRetentionQuery),
  );
}
