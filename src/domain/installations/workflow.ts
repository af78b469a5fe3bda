import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import { GroupEntity, type Group } from '../../db/entities/connection.js';
import { InstallationEntity, type Installation } from '../../db/entities/installation.js';
import { IntegrationEntity, RevisionEntity, type Integration } from '../../db/entities/integration.js';
import { OperationEntity } from '../../db/entities/operation.js';
import { ProjectEntity, type Project } from '../../db/entities/project.js';
import { logger } from '../../logger.js';
import type {
  ApplyConfigResult,
  InstallationConfigMessage,
  PauseRequest,
  ResumeRequest,
  TriggerReadRequest,
} from '../../temporal/contracts/installation.js';
import { pauseSignal, resumeSignal, triggerReadSignal } from '../../temporal/contracts/installation.js';
import {
  WorkflowNotRunningError,
  WorkflowRefusedError,
  applyInstallationConfig,
  signalInstallation,
  startInstallationWorkflow,
  type InstallationWorkflowIdentity,
  type WorkflowIdentity,
} from '../../temporal/gateway.js';
import { currentConfig } from './event-data.js';
import { configMessage } from './read-plan.js';

/**
 * The installation's workflow as the domain sees it. One policy for a workflow that is not running
 * (Temporal lost it, or it ended by mistake): PostgreSQL is the record, so the workflow is started
 * again from the installation's current config and the message is sent once more.
 */

export function identityOf(
  project: Pick<Project, 'id' | 'name'>,
  integration: Integration,
  group: Group,
  installationId: string,
): InstallationWorkflowIdentity {
  return {
    installationId,
    projectId: project.id,
    projectName: project.name,
    integrationId: integration.id,
    integrationName: integration.name,
    provider: integration.provider,
    groupRef: group.groupRef,
    groupName: group.groupName,
  };
}

/** The search attributes of the runs an installation starts (writes, change events): who they work for. */
export async function runIdentityOf(
  em: EntityManager,
  installation: Installation,
): Promise<WorkflowIdentity> {
  const [integration, group] = await Promise.all([
    em.findOne(IntegrationEntity, { id: installation.integrationId }),
    em.findOne(GroupEntity, { id: installation.groupId }),
  ]);
  return {
    projectId: installation.projectId,
    integrationId: installation.integrationId,
    installationId: installation.id,
    ...(integration && { provider: integration.provider }),
    ...(group && { groupRef: group.groupRef }),
  };
}

/** The message a workflow applies for the installation's current config. */
export async function currentConfigMessage(
  em: EntityManager,
  installation: Installation,
): Promise<InstallationConfigMessage> {
  const config = await currentConfig(em, installation);
  const revision = await em.findOneOrFail(RevisionEntity, { id: config.revisionId });
  return configMessage(config, revision.content);
}

/**
 * Starts the installation's workflow from what PostgreSQL holds, unless a run is open. Returns
 * whether a run was started; false too for an installation that no longer exists.
 */
export async function ensureInstallationWorkflow(
  em: EntityManager,
  installationId: string,
): Promise<boolean> {
  const fork = em.fork();
  const installation = await fork.findOne(InstallationEntity, { id: installationId });
  if (!installation) return false;
  const [integration, group, project, message, operation] = await Promise.all([
    fork.findOneOrFail(IntegrationEntity, { id: installation.integrationId }),
    fork.findOneOrFail(GroupEntity, { id: installation.groupId }),
    fork.findOneOrFail(ProjectEntity, { id: installation.projectId }),
    currentConfigMessage(fork, installation),
    fork.findOne(OperationEntity, { installationId: installation.id }, { fields: ['id'] }),
  ]);
  // A new installation whose workflow never ran (its start at creation failed) keeps the schedule
  // it was created with, and runs the fire it missed. One that ran before starts afresh: a fire
  // missed while its workflow was gone is not made up beside the reads being resumed.
  return startInstallationWorkflow(
    identityOf(project, integration, group, installation.id),
    message,
    operation ? undefined : installation.createTime,
  );
}

/** Sends a message to the installation's workflow, restarting the workflow from PostgreSQL when none runs. */
export async function tellInstallation<T>(
  em: EntityManager,
  installationId: string,
  send: () => Promise<T>,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof WorkflowNotRunningError)) throw error;
    logger.warn({ installationId }, 'installation workflow was not running; restarting it from PostgreSQL');
    await ensureInstallationWorkflow(em, installationId);
    return send();
  }
}

export function triggerInstallationRead(
  em: EntityManager,
  installationId: string,
  request: TriggerReadRequest,
): Promise<void> {
  return tellInstallation(em, installationId, () =>
    signalInstallation(installationId, triggerReadSignal, request),
  );
}

export function pauseInstallation(
  em: EntityManager,
  installationId: string,
  request: PauseRequest,
): Promise<void> {
  return tellInstallation(em, installationId, () => signalInstallation(installationId, pauseSignal, request));
}

export function resumeInstallation(
  em: EntityManager,
  installationId: string,
  request: ResumeRequest,
): Promise<void> {
  return tellInstallation(em, installationId, () =>
    signalInstallation(installationId, resumeSignal, request),
  );
}

/**
 * Hands a config version to the running workflow. A refusal by the workflow's validator is a 400
 * problem; a workflow that is not running throws WorkflowNotRunningError for the caller to restart
 * it once the new config is committed (a restart inside the transaction would read the old one).
 */
export async function sendInstallationConfig(
  installationId: string,
  message: InstallationConfigMessage,
  updateId?: string,
): Promise<ApplyConfigResult> {
  try {
    return await applyInstallationConfig(installationId, message, updateId);
  } catch (error) {
    if (!(error instanceof WorkflowRefusedError)) throw error;
    throw ProblemError.invalid(
      [
        {
          in: 'body',
          name: 'installation.config',
          detail: `the installation workflow refused the config: ${error.message}`,
        },
      ],
      'The installation workflow refused the config.',
    );
  }
}
