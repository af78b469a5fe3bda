import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  isGrpcDeadlineError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
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
import { installationWorkflowId } from './contracts/workflow-ids.js';
import {
  WorkflowNotRunningError,
  searchAttributesOf,
  taskQueueFor,
  temporalCall,
  unavailable,
  type WorkflowIdentity,
} from './temporal-call.js';

/**
 * Every call Ferry makes to Temporal goes through this module: the installation workflow's calls
 * here, the calls for writes, deliveries and retention in `work-gateway.ts`, each with a deadline
 * and failing one of three ways (`temporal-call.ts`).
 */

export {
  WorkflowNotRunningError,
  WorkflowRefusedError,
  searchAttributesOf,
  type WorkflowIdentity,
} from './temporal-call.js';
export {
  describeRetention,
  runRetentionNow,
  startNotificationDelivery,
  startRetentionWorkflow,
  startSchemaWatchDelivery,
  startSubscriptionEventDelivery,
  startWriteWorkflow,
  writeWorkflowInput,
} from './work-gateway.js';

/** How long ending an installation waits for its workflow (and running reads) to finish before terminating it. */
const END_DEADLINE_MS = 30_000;

/** An installation's identity plus the human names its workflow's memo shows. */
export interface InstallationWorkflowIdentity extends Required<WorkflowIdentity> {
  installationId: string;
  projectName: string;
  integrationName: string;
  groupName: string;
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
          // The config it holds from its start, as its first task will say again: the repair loop
          // reads this from the server, never querying a workflow whose first task still waits in a
          // burst of creates (each such query held a busy worker for up to its 10 s deadline).
          configId: message.configId,
          revisionId: message.revisionId,
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
 * (workflows started before their start set it and before their first task ran).
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
