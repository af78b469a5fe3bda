import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { DeployedManifestEntity, IntegrationEntity, RevisionEntity } from '../db/entities/integration.js';
import type { DeployedManifestView } from '../schemas/integrations.js';
import type { ContentRules } from './integration-content.js';
import { parseManifest } from './manifest.js';

/** Deployed manifests a project keeps, newest first. */
export const KEPT_MANIFESTS = 20;

/**
 * Keeps the manifest file a builder deployed, as written, in the caller's transaction (so a refused
 * deploy keeps nothing), and lets the oldest beyond KEPT_MANIFESTS go.
 */
export async function keepDeployedManifest(
  em: EntityManager,
  projectId: string,
  sourceYaml: string,
): Promise<void> {
  em.persist(
    em.create(DeployedManifestEntity, { id: randomUUID(), projectId, sourceYaml, createTime: new Date() }),
  );
  await em.flush();
  await em.execute(
    `delete from deployed_manifests where project_id = ? and id not in (
       select id from deployed_manifests where project_id = ? order by create_time desc, id desc limit ?)`,
    [projectId, projectId, KEPT_MANIFESTS],
    'run',
  );
}

/**
 * The manifest last deployed to the project, and whether it still describes the live integrations:
 * the file the builder keeps, for the console's editor; 404 when none was deployed.
 */
export async function latestDeployedManifest(
  em: EntityManager,
  projectId: string,
  rules: ContentRules,
): Promise<DeployedManifestView> {
  const [latest] = await em.find(
    DeployedManifestEntity,
    { projectId },
    { orderBy: { createTime: 'desc', id: 'desc' }, limit: 1 },
  );
  if (!latest) throw ProblemError.notFound('No manifest was deployed to this project yet.');
  return {
    sourceYaml: latest.sourceYaml,
    createTime: latest.createTime.toISOString(),
    matchesLive: await describesLive(em, projectId, latest.sourceYaml, rules),
  };
}

async function describesLive(
  em: EntityManager,
  projectId: string,
  sourceYaml: string,
  rules: ContentRules,
): Promise<boolean> {
  let manifest;
  try {
    manifest = parseManifest(sourceYaml, rules);
  } catch {
    // Valid when deployed, refused by today's rules (a longer minimum schedule): not what runs.
    return false;
  }
  const integrations = await em.find(IntegrationEntity, { projectId });
  if (integrations.length !== manifest.integrations.length) return false;
  const revisions = new Map(
    (
      await em.find(RevisionEntity, { id: integrations.map((integration) => integration.latestRevisionId) })
    ).map((revision) => [revision.id, revision]),
  );
  return manifest.integrations.every((content) => {
    const integration = integrations.find((candidate) => candidate.name === content.name);
    const revision = integration && revisions.get(integration.latestRevisionId);
    return (
      revision !== undefined &&
      revision.specVersion === manifest.specVersion &&
      isDeepStrictEqual(revision.content, content)
    );
  });
}
