import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  isGrpcDeadlineError,
  type Client,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import { ProblemError } from '../../core/problem.js';
import { config } from '../../config.js';
import { logger } from '../../logger.js';
import { installationWorkflowId, temporalClient } from '../../temporal/client.js';
import {
  FerryGroupRef,
  FerryInstallationId,
  FerryIntegrationId,
  FerryProjectId,
  FerryProvider,
} from '../../temporal/search-attributes.js';
import {
  INSTALLATION_WORKFLOW_TYPE,
  applyConfigUpdate,
  describeQuery,
  type ApplyConfigResult,
  type InstallationConfigMessage,
  type InstallationDescription,
  type InstallationWorkflowInput,
} from '../../../workflows/installation-messages.js';
import type { installationWorkflow } from '../../../workflows/installation.js';

/** How long the API waits on Temporal before answering 503; below typical HTTP client timeouts. */
const CALL_DEADLINE_MS = 10_000;
/** How long deleting an installation waits for its workflow (and running reads) to end before terminating it. */
const END_DEADLINE_MS = 30_000;

export class WorkflowNotRunningError extends Error {}

/** What the workflow's search attributes and memo name, so an operator finds it in the Temporal UI. */
export interface InstallationWorkflowIdentity {
  installationId: string;
  projectId: string;
  projectName: string;
  integrationId: string;
  integrationName: string;
  provider: string;
  groupRef: string;
  groupName: string;
}

function unavailable(error: unknown, action: string): ProblemError {
  logger.warn({ err: error, action }, 'Temporal call failed');
  return ProblemError.unavailable(
    `Temporal is unreachable, so the installation could not be ${action}. Retry later.`,
  );
}

async function client(action: string): Promise<Client> {
  try {
    return await temporalClient();
  } catch (error) {
    throw unavailable(error, action);
  }
}

function withDeadline<T>(temporal: Client, ms: number, call: () => Promise<T>): Promise<T> {
  return temporal.withDeadline(Date.now() + ms, call);
}

function handleFor(temporal: Client, installationId: string): WorkflowHandle<typeof installationWorkflow> {
  return temporal.workflow.getHandle<typeof installationWorkflow>(installationWorkflowId(installationId));
}

export function installationStartOptions(
  identity: InstallationWorkflowIdentity,
  message: InstallationConfigMessage,
): WorkflowStartOptions<typeof installationWorkflow> {
  const input: InstallationWorkflowInput = {
    installationId: identity.installationId,
    projectId: identity.projectId,
    config: message,
    scheduleSpreadSeconds: config().scheduleSpreadSeconds,
  };
  return {
    workflowId: installationWorkflowId(identity.installationId),
    taskQueue: config().temporal.taskQueue,
    args: [input],
    // A new run only when none is running: a second start of a live installation fails instead of
    // replacing it, so concurrent starts (API and reconcile) cannot lose a running workflow's state.
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    workflowIdConflictPolicy: 'FAIL',
    typedSearchAttributes: [
      { key: FerryProjectId, value: identity.projectId },
      { key: FerryIntegrationId, value: identity.integrationId },
      { key: FerryInstallationId, value: identity.installationId },
      { key: FerryProvider, value: identity.provider },
      { key: FerryGroupRef, value: identity.groupRef },
    ],
    memo: {
      projectName: identity.projectName,
      integrationName: identity.integrationName,
      groupName: identity.groupName,
      groupRef: identity.groupRef,
      provider: identity.provider,
    },
  };
}

/**
 * Starts the installation's workflow. Returns false when one is already running (the caller decides
 * whether that is fine); throws a 503 problem when Temporal cannot be reached.
 */
export async function startInstallationWorkflow(
  identity: InstallationWorkflowIdentity,
  message: InstallationConfigMessage,
): Promise<boolean> {
  const temporal = await client('started');
  try {
    await withDeadline(temporal, CALL_DEADLINE_MS, () =>
      temporal.workflow.start<typeof installationWorkflow>(
        INSTALLATION_WORKFLOW_TYPE,
        installationStartOptions(identity, message),
      ),
    );
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw unavailable(error, 'started');
  }
}

/** Best effort: used to undo a start whose database transaction did not commit. */
export async function terminateInstallationWorkflow(installationId: string, reason: string): Promise<void> {
  try {
    const temporal = await temporalClient();
    await withDeadline(temporal, CALL_DEADLINE_MS, () =>
      handleFor(temporal, installationId).terminate(reason),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return;
    // The workflow's first activity finds no installation and ends the run by itself.
    logger.warn({ err: error, installationId }, 'could not terminate an uncommitted installation workflow');
  }
}

/**
 * Delivers a config version as the `applyConfig` Update and returns what the workflow changed.
 * The update id is the config id, so a retried call is applied once; a restore of an earlier
 * version passes an id of its own, since Temporal would answer a reused id from its first result
 * without applying anything. Throws WorkflowNotRunningError when no run is open, and a 503 problem
 * when Temporal (or a worker) does not answer in time.
 */
export async function applyInstallationConfig(
  installationId: string,
  message: InstallationConfigMessage,
  updateId = `config/${message.configId}`,
): Promise<ApplyConfigResult> {
  const temporal = await client('updated');
  try {
    return await withDeadline(temporal, CALL_DEADLINE_MS, () =>
      handleFor(temporal, installationId).executeUpdate(applyConfigUpdate, {
        args: [message],
        updateId,
      }),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new WorkflowNotRunningError(installationId);
    if (error instanceof WorkflowUpdateFailedError) {
      throw ProblemError.invalid(
        [
          {
            in: 'body',
            name: 'installation.config',
            detail: `the installation workflow refused the config: ${error.cause?.message ?? error.message}`,
          },
        ],
        'The installation workflow refused the config.',
      );
    }
    throw unavailable(error, 'updated');
  }
}

export async function signalInstallation<T>(
  installationId: string,
  signal: SignalDefinition<[T]>,
  argument: T,
): Promise<void> {
  const temporal = await client('signalled');
  try {
    await withDeadline(temporal, CALL_DEADLINE_MS, () =>
      handleFor(temporal, installationId).signal(signal, argument),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) {
      throw ProblemError.unavailable(
        'The installation’s workflow is not running; `ferry reconcile` (run at every worker start) restarts it.',
        30,
      );
    }
    throw unavailable(error, 'signalled');
  }
}

export async function describeInstallationWorkflow(installationId: string): Promise<InstallationDescription> {
  const temporal = await client('described');
  try {
    return await withDeadline(temporal, CALL_DEADLINE_MS, () =>
      handleFor(temporal, installationId).query(describeQuery),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new WorkflowNotRunningError(installationId);
    throw unavailable(error, 'described');
  }
}

/**
 * Ends the installation's workflow: a cancellation request, which makes it cancel its running reads,
 * wait for them and remove its provider subscriptions; if that takes longer than END_DEADLINE_MS the
 * workflow is terminated (its reads die with it: ParentClosePolicy TERMINATE).
 */
export async function endInstallationWorkflow(installationId: string): Promise<void> {
  const temporal = await client('deleted');
  const handle = handleFor(temporal, installationId);
  try {
    await withDeadline(temporal, CALL_DEADLINE_MS, () => handle.cancel());
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return;
    throw unavailable(error, 'deleted');
  }
  try {
    await withDeadline(temporal, END_DEADLINE_MS, () => handle.result());
  } catch (error) {
    if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError) return;
    if (!isGrpcDeadlineError(error)) throw unavailable(error, 'deleted');
    logger.warn({ installationId }, 'installation workflow did not end in time; terminating it');
    try {
      await withDeadline(temporal, CALL_DEADLINE_MS, () => handle.terminate('installation deleted'));
    } catch (terminateError) {
      if (!(terminateError instanceof WorkflowNotFoundError)) throw unavailable(terminateError, 'deleted');
    }
  }
}
