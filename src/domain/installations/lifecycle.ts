import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Principal } from '../../core/principal.js';
import { isUuid } from '../../core/ids.js';
import { ProblemError, type ProblemIssue } from '../../core/problem.js';
import {
  ConnectionEntity,
  ConsumerEntity,
  GroupEntity,
  type Connection,
  type Group,
} from '../../db/entities/connection.js';
import {
  InstallationConfigEntity,
  InstallationEntity,
  type Installation,
  type InstallationConfig,
} from '../../db/entities/installation.js';
import { RevisionEntity, type Integration, type Revision } from '../../db/entities/integration.js';
import type { Project } from '../../db/entities/project.js';
import { logger } from '../../logger.js';
import type { InstallationConfigContent, InstallationView } from '../../schemas/installations.js';
import { connectionView } from '../connections/views.js';
import { deleteConnection } from '../connections/writes.js';
import { recordEvent } from '../events.js';
import { withRepairMark } from '../marked-changes.js';
import {
  addIntegrationDeletionGuard,
  deleteIntegration,
  findIntegration,
  latestRevision,
} from '../integrations.js';
import { assertValidConfigContent } from './config-validation.js';
import type { ContentRules } from '../integration-content.js';
import { currentConfig, installationEventData } from './event-data.js';
import { findInstallation, getInstallationView } from './lookups.js';
import { configMessage } from './read-plan.js';
import { installationView } from './views.js';
import { namedDestinations } from './health.js';
import {
  WorkflowNotRunningError,
  endInstallationWorkflow,
  startInstallationWorkflow,
  terminateInstallationWorkflow,
} from '../../temporal/gateway.js';
import { ensureInstallationWorkflow, identityOf, sendInstallationConfig } from './workflow.js';

/**
 * Creating, reconfiguring and deleting installations, each kept in step with the installation's
 * workflow; deleting an integration with its installations; and the rule that an integration's
 * rows cannot go while installations of it remain.
 */

addIntegrationDeletionGuard(async (em, integration) => {
  const count = await em.count(InstallationEntity, { integrationId: integration.id });
  if (count > 0) {
    throw ProblemError.conflict(
      `Integration "${integration.name}" has ${count} installation${count === 1 ? '' : 's'}; delete ${count === 1 ? 'it' : 'them'} first.`,
    );
  }
});

/** JSON equality regardless of key order (jsonb does not keep it). */
function sameJson(left: unknown, right: unknown): boolean {
  const canonical = (value: unknown): string =>
    JSON.stringify(value, (_key, inner: unknown) =>
      inner && typeof inner === 'object' && !Array.isArray(inner)
        ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : inner,
    );
  return canonical(left) === canonical(right);
}

function bodyIssue(name: string, value: unknown, detail: string): ProblemIssue {
  return { in: 'body', name, value, detail: `${name} ${detail}` };
}

/** `builder:{id}` for API keys and builders, `consumer:{subject}` for a project JWT minted for an end user. */
export function configAuthor(principal: Principal, requested?: string): string {
  if (requested) {
    // Code in a browser acts for a consumer: it may name one, but not credit the builder.
    const fromBrowser =
      principal.kind === 'projectJwt' || (principal.kind === 'apiKey' && principal.frontendOnly === true);
    if (fromBrowser && !requested.startsWith('consumer:')) {
      throw new ProblemError({
        status: 403,
        detail: `A project JWT or frontend key can credit a config to a consumer ("consumer:…"), not "${requested}".`,
      });
    }
    return requested;
  }
  switch (principal.kind) {
    case 'apiKey':
      return `builder:${principal.apiKeyId}`;
    case 'builder':
      return `builder:${principal.builderId}`;
    case 'projectJwt':
      return principal.subject ? `consumer:${principal.subject}` : `builder:${principal.keyId}`;
    default:
      return 'builder:unknown';
  }
}

/** The revision a config is for: the integration's latest unless named; another integration's is refused. */
async function resolveRevision(
  em: EntityManager,
  integration: Integration,
  revisionId: string | undefined,
  field: string,
): Promise<Revision> {
  if (revisionId === undefined) return latestRevision(em, integration);
  const revision = isUuid(revisionId)
    ? await em.findOne(RevisionEntity, { id: revisionId, integrationId: integration.id })
    : null;
  if (!revision) {
    throw ProblemError.invalid([
      bodyIssue(field, revisionId, `is not a revision of integration "${integration.name}"`),
    ]);
  }
  return revision;
}

/** The named connection, which must be the group's and the integration provider's; else the group's connection. */
async function resolveConnection(
  em: EntityManager,
  integration: Integration,
  group: Group,
  connectionId: string | undefined,
  field = 'connectionId',
): Promise<Connection> {
  if (connectionId === undefined) {
    const connection = await em.findOne(
      ConnectionEntity,
      { projectId: integration.projectId, groupId: group.id, provider: integration.provider },
      { orderBy: { updateTime: 'desc' } },
    );
    if (!connection) {
      throw ProblemError.invalid([
        bodyIssue(
          'groupRef',
          group.groupRef,
          `names a group with no ${integration.provider} connection; connect it first or pass connectionId`,
        ),
      ]);
    }
    return connection;
  }
  const connection = isUuid(connectionId)
    ? await em.findOne(ConnectionEntity, { id: connectionId, projectId: integration.projectId })
    : null;
  if (!connection)
    throw ProblemError.invalid([bodyIssue(field, connectionId, 'names no connection of this project')]);
  if (connection.provider !== integration.provider) {
    throw ProblemError.invalid([
      bodyIssue(
        field,
        connectionId,
        `is a ${connection.provider} connection; integration "${integration.name}" needs ${integration.provider}`,
      ),
    ]);
  }
  if (connection.groupId !== group.id) {
    throw ProblemError.invalid([
      bodyIssue(field, connectionId, `belongs to another group than "${group.groupRef}"`),
    ]);
  }
  return connection;
}

/**
 * `connectionId` in an update mask. A group holds one connection per provider, and an installation
 * uses its group's, so the only connection it can name is the one in use: anything else is refused
 * by name (why, where the connection says), and new credentials go to that connection instead.
 */
async function assertSameConnection(
  em: EntityManager,
  integration: Integration,
  installation: Installation,
  connectionId: string,
): Promise<void> {
  if (connectionId === installation.connectionId) return;
  const group = await em.findOneOrFail(GroupEntity, { id: installation.groupId });
  await resolveConnection(em, integration, group, connectionId, 'installation.connectionId');
  throw ProblemError.invalid([
    bodyIssue('installation.connectionId', connectionId, 'is not the connection this installation uses'),
  ]);
}

export interface CreateInstallationInput {
  groupRef: string;
  connectionId?: string;
  config: { revisionId?: string; createdBy?: string; content: unknown };
}

/**
 * Creates an installation with its first config and starts its workflow, or leaves nothing behind.
 *
 * The workflow is started inside the database transaction, after the rows are flushed and before the
 * commit: if Temporal is unreachable the transaction rolls back and the caller gets a 503; if the
 * commit fails after the start, the workflow is terminated. The other order (commit, then start, then
 * delete on failure) would let the `installation.created` event escape through the outbox for an
 * installation that never ran. Should the terminate fail too, the workflow's first activity finds no
 * installation and the run ends by itself.
 */
export async function createInstallation(
  em: EntityManager,
  project: Project,
  integration: Integration,
  input: CreateInstallationInput,
  principal: Principal,
  rules: ContentRules,
): Promise<InstallationView> {
  const installationId = randomUUID();
  return withRepairMark({ projectId: project.id, installationId, reason: 'create installation' }, () =>
    insertInstallation(em, project, integration, input, principal, rules, installationId),
  );
}

async function insertInstallation(
  em: EntityManager,
  project: Project,
  integration: Integration,
  input: CreateInstallationInput,
  principal: Principal,
  rules: ContentRules,
  installationId: string,
): Promise<InstallationView> {
  let startedId: string | undefined;
  try {
    const parts = await em.transactional(async (tx) => {
      const group = await tx.findOne(GroupEntity, { projectId: project.id, groupRef: input.groupRef });
      if (!group)
        throw ProblemError.invalid([bodyIssue('groupRef', input.groupRef, 'names no group of this project')]);
      const connection = await resolveConnection(tx, integration, group, input.connectionId);
      const revision = await resolveRevision(tx, integration, input.config.revisionId, 'config.revisionId');
      const content = await assertValidConfigContent(
        tx,
        { projectId: project.id, provider: integration.provider, manifest: revision.content, rules },
        input.config.content,
      );
      if (await tx.count(InstallationEntity, { integrationId: integration.id, groupId: group.id })) {
        throw ProblemError.conflict(
          `Group "${group.groupRef}" already has an installation of integration "${integration.name}".`,
        );
      }
      const now = new Date();
      const config = tx.create(InstallationConfigEntity, {
        id: randomUUID(),
        projectId: project.id,
        installationId,
        revisionId: revision.id,
        content,
        createdBy: configAuthor(principal, input.config.createdBy),
        createTime: now,
      });
      const consumerRef = (await loadConsumerRef(tx, connection)) ?? connection.consumerId;
      const created = tx.create(InstallationEntity, {
        id: installationId,
        projectId: project.id,
        integrationId: integration.id,
        groupId: group.id,
        connectionId: connection.id,
        configId: config.id,
        createdBy: `consumer:${consumerRef}`,
        healthStatus: 'healthy',
        createTime: now,
        updateTime: now,
      });
      recordEvent(tx, project.id, 'installation.created', await installationEventData(tx, created, config));
      await tx.flush();
      await startInstallationWorkflow(
        identityOf(project, integration, group, installationId),
        configMessage(config, revision.content),
        now,
      );
      startedId = installationId;
      return { installation: created, config, group, connection };
    });
    return installationView({
      ...parts,
      connection: await connectionView(em, parts.connection),
      destinations: await namedDestinations(
        em,
        project.id,
        parts.config.content as InstallationConfigContent,
      ),
    });
  } catch (error) {
    if (startedId) await terminateInstallationWorkflow(startedId, 'installation was not committed');
    if (error instanceof UniqueConstraintViolationException) {
      throw ProblemError.conflict(
        `Group "${input.groupRef}" already has an installation of integration "${integration.name}".`,
      );
    }
    throw error;
  }
}

async function loadConsumerRef(em: EntityManager, connection: Connection): Promise<string | undefined> {
  return (await em.findOne(ConsumerEntity, { id: connection.consumerId }))?.consumerRef;
}

export interface ConfigChange {
  /** Builds the new config from the current one; throws a 400 problem for bad input. */
  change(current: { revisionId: string; content: InstallationConfigContent }): Promise<{
    revisionId: string;
    content: unknown;
  }>;
  createdBy?: string;
  /** A connection the caller named; it must be the one the installation uses. */
  connectionId?: string;
}

/**
 * Makes a new config version of an installation and hands it to the running workflow, or changes
 * nothing. Like creation, the workflow is told inside the transaction (after the flush, before the
 * commit), with the installation row locked so concurrent changes reach the workflow in commit order:
 * - Temporal or the worker does not answer: rollback and 503, the old config stays in force everywhere.
 * - The commit fails after the workflow accepted the update: the previous config is sent back.
 * - No workflow is running (it was lost): the change commits and the workflow is started afresh from
 *   PostgreSQL, as `ferry reconcile` would.
 * An unchanged config makes no new version.
 */
export async function changeInstallationConfig(
  em: EntityManager,
  project: Project,
  integration: Integration,
  installationId: string,
  principal: Principal,
  change: ConfigChange,
  rules: ContentRules,
): Promise<InstallationView> {
  const apply = () => applyConfigChange(em, project, integration, installationId, principal, change, rules);
  // Not an id, so no installation (the lookup answers 404) and nothing to mark.
  if (!isUuid(installationId)) return apply();
  return withRepairMark(
    { projectId: project.id, installationId, reason: 'change installation config' },
    apply,
  );
}

async function applyConfigChange(
  em: EntityManager,
  project: Project,
  integration: Integration,
  installationId: string,
  principal: Principal,
  change: ConfigChange,
  rules: ContentRules,
): Promise<InstallationView> {
  let applied: { previous: InstallationConfig; manifest: Revision } | undefined;
  let restart = false;
  try {
    const installation = await em.transactional(async (tx) => {
      const installation = await findInstallation(tx, project.id, installationId, integration.id, {
        lock: true,
      });
      const previous = await currentConfig(tx, installation);
      const previousContent = previous.content;
      const next = await change.change({ revisionId: previous.revisionId, content: previousContent });
      const revision = await resolveRevision(
        tx,
        integration,
        next.revisionId,
        'installation.config.revisionId',
      );
      const content = await assertValidConfigContent(
        tx,
        { projectId: project.id, provider: integration.provider, manifest: revision.content, rules },
        next.content,
      );
      if (change.connectionId !== undefined) {
        await assertSameConnection(tx, integration, installation, change.connectionId);
      }
      if (revision.id === previous.revisionId && sameJson(content, previousContent)) return installation;
      const now = new Date();
      const config = tx.create(InstallationConfigEntity, {
        id: randomUUID(),
        projectId: project.id,
        installationId: installation.id,
        revisionId: revision.id,
        content,
        createdBy: configAuthor(principal, change.createdBy),
        createTime: now,
      });
      installation.configId = config.id;
      installation.updateTime = now;
      recordEvent(
        tx,
        project.id,
        'installation.updated',
        await installationEventData(tx, installation, config, previous),
      );
      await tx.flush();
      try {
        await sendInstallationConfig(installation.id, configMessage(config, revision.content));
        const previousRevision =
          previous.revisionId === revision.id
            ? revision
            : await tx.findOneOrFail(RevisionEntity, { id: previous.revisionId });
        applied = { previous, manifest: previousRevision };
      } catch (error) {
        if (!(error instanceof WorkflowNotRunningError)) throw error;
        restart = true;
      }
      return installation;
    });
    if (restart) await ensureInstallationWorkflow(em, installation.id);
    return getInstallationView(em, installation);
  } catch (error) {
    if (applied) {
      await sendInstallationConfig(
        installationId,
        configMessage(applied.previous, applied.manifest.content),
        `restore/${applied.previous.id}/${randomUUID()}`,
      ).catch((undoError: unknown) =>
        logger.error(
          { err: undoError, installationId },
          'could not restore the previous config in the workflow',
        ),
      );
    }
    throw error;
  }
}

/**
 * Deletes an installation. Its workflow ends first (cancelling running reads and removing provider
 * subscriptions): if Temporal is unreachable the caller gets a 503 and nothing is deleted. Then, in
 * one transaction, the rows go (configs and watermarks cascade), the connection too when no other
 * installation uses it, with `installation.deleted` (and `connection.deleted`) events. If that
 * transaction failed, the installation would be left without a workflow, which reconcile restarts.
 */
export async function deleteInstallation(
  em: EntityManager,
  project: Project,
  integration: Integration,
  installationId: string,
): Promise<void> {
  const installation = await findInstallation(em, project.id, installationId, integration.id);
  await withRepairMark(
    { projectId: project.id, installationId: installation.id, reason: 'delete installation' },
    async () => {
      await endInstallationWorkflow(installation.id);
      await removeInstallationRows(em, project, integration, installation);
    },
  );
}

/**
 * Deletes an integration and all its installations, as the public API does: each installation as
 * its own delete does (workflow ended, `installation.deleted` recorded, its connection deleted once
 * no installation uses it), then the integration with its revisions. Interrupted, a retry finishes
 * it; an installation created meanwhile makes it a 409, with nothing of the integration gone.
 */
export async function deleteIntegrationWithInstallations(
  em: EntityManager,
  project: Project,
  integration: Integration,
): Promise<void> {
  for (;;) {
    const installations = await em.find(
      InstallationEntity,
      { projectId: project.id, integrationId: integration.id },
      { fields: ['id'], limit: 100 },
    );
    for (const { id } of installations) {
      await deleteInstallation(em, project, integration, id).catch((error: unknown) => {
        // Deleted by a request of its own meanwhile: as good.
        if (!(error instanceof ProblemError && error.status === 404)) throw error;
      });
    }
    if (installations.length < 100) break;
  }
  await em.transactional(async (tx) =>
    deleteIntegration(tx, await findIntegration(tx, project.id, integration.id)),
  );
}

async function removeInstallationRows(
  em: EntityManager,
  project: Project,
  integration: Integration,
  installation: Installation,
): Promise<void> {
  await em.transactional(async (tx) => {
    const locked = await findInstallation(tx, project.id, installation.id, integration.id, { lock: true });
    const config = await currentConfig(tx, locked);
    recordEvent(tx, project.id, 'installation.deleted', await installationEventData(tx, locked, config));
    tx.remove(locked);
    await tx.flush();
    const connection = await tx.findOne(ConnectionEntity, { id: locked.connectionId });
    if (connection && !(await tx.count(InstallationEntity, { connectionId: connection.id }))) {
      await deleteConnection(tx, connection);
    }
  });
}
