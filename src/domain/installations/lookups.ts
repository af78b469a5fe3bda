import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../core/ids.js';
import { ProblemError } from '../../core/problem.js';
import { GroupEntity } from '../../db/entities/connection.js';
import { InstallationEntity, type Installation } from '../../db/entities/installation.js';
import type { InstallationView } from '../../schemas/installations.js';
import { installationView, loadInstallationParts } from './views.js';
import { currentConfigMessage } from './workflow.js';

/**
 * Finding a project's installations: one by id (locked when it is about to change), their views,
 * and the read objects its config plans.
 */

export async function findInstallation(
  em: EntityManager,
  projectId: string,
  installationId: string,
  integrationId?: string,
  options: { lock?: boolean } = {},
): Promise<Installation> {
  const installation = isUuid(installationId)
    ? await em.findOne(
        InstallationEntity,
        { id: installationId, projectId, ...(integrationId && { integrationId }) },
        options.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {},
      )
    : null;
  if (!installation) throw ProblemError.notFound(`Installation "${installationId}" was not found.`);
  return installation;
}

export async function listInstallations(
  em: EntityManager,
  projectId: string,
  filter: { integrationId?: string; groupRef?: string },
): Promise<InstallationView[]> {
  let groupId: string | undefined;
  if (filter.groupRef !== undefined) {
    const group = await em.findOne(GroupEntity, { projectId, groupRef: filter.groupRef });
    if (!group) return [];
    groupId = group.id;
  }
  const installations = await em.find(
    InstallationEntity,
    {
      projectId,
      ...(filter.integrationId && { integrationId: filter.integrationId }),
      ...(groupId && { groupId }),
    },
    { orderBy: { createTime: 'asc', id: 'asc' } },
  );
  return (await loadInstallationParts(em, installations)).map(installationView);
}

export async function getInstallationView(
  em: EntityManager,
  installation: Installation,
): Promise<InstallationView> {
  const [parts] = await loadInstallationParts(em, [installation]);
  return installationView(parts);
}

/** The effective read objects of an installation, for checking the names a pause or trigger gives. */
export async function plannedReadObjects(em: EntityManager, installation: Installation): Promise<string[]> {
  return (await currentConfigMessage(em, installation)).reads.map((read) => read.objectName);
}
