import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { DestinationEntity } from '../db/entities/operation.js';
import { isUuid } from '../core/ids.js';
import {
  IntegrationEntity,
  RevisionEntity,
  type Integration,
  type Revision,
} from '../db/entities/integration.js';
import type { IntegrationContent, Manifest } from '../schemas/integration-content.js';
import type { IntegrationView, RevisionView } from '../schemas/integrations.js';
import { integrationContentIssues, type ContentRules } from './integration-content.js';

export function revisionView(revision: Revision): RevisionView {
  return {
    id: revision.id,
    specVersion: revision.specVersion,
    createTime: revision.createTime.toISOString(),
    content: revision.content,
  };
}

export function integrationView(integration: Integration, latest: Revision): IntegrationView {
  return {
    id: integration.id,
    projectId: integration.projectId,
    name: integration.name,
    provider: integration.provider,
    createTime: integration.createTime.toISOString(),
    updateTime: integration.updateTime.toISOString(),
    latestRevision: revisionView(latest),
  };
}

export async function findIntegration(
  em: EntityManager,
  projectId: string,
  idOrName: string,
): Promise<Integration> {
  const integration = await em.findOne(
    IntegrationEntity,
    isUuid(idOrName)
      ? { projectId, $or: [{ id: idOrName }, { name: idOrName }] }
      : { projectId, name: idOrName },
  );
  if (!integration) throw ProblemError.notFound(`Integration "${idOrName}" was not found.`);
  return integration;
}

export async function latestRevision(em: EntityManager, integration: Integration): Promise<Revision> {
  return em.findOneOrFail(RevisionEntity, { id: integration.latestRevisionId });
}

export async function findRevision(
  em: EntityManager,
  integration: Integration,
  revisionId: string,
): Promise<Revision> {
  const revision = isUuid(revisionId)
    ? await em.findOne(RevisionEntity, { id: revisionId, integrationId: integration.id })
    : null;
  if (!revision)
    throw ProblemError.notFound(
      `Revision "${revisionId}" of integration "${integration.name}" was not found.`,
    );
  return revision;
}

/** Every destination the content names, with the path that names it. */
function namedDestinations(content: IntegrationContent, prefix: string): { name: string; at: string }[] {
  return [
    ...(content.read?.objects ?? []).map((object, index) => ({
      name: object.destination,
      at: `${prefix}.read.objects[${index}].destination`,
    })),
    ...(content.subscribe?.objects ?? []).map((object, index) => ({
      name: object.destination,
      at: `${prefix}.subscribe.objects[${index}].destination`,
    })),
    ...(content.watchSchema
      ? [{ name: content.watchSchema.destination, at: `${prefix}.watchSchema.destination` }]
      : []),
  ];
}

/** A manifest may only name destinations that exist, so installing it cannot fail on one later. */
async function missingDestinationIssues(
  em: EntityManager,
  projectId: string,
  content: IntegrationContent,
  prefix: string,
): Promise<ProblemIssue[]> {
  const named = namedDestinations(content, prefix);
  if (!named.length) return [];
  const existing = new Set(
    (
      await em.find(
        DestinationEntity,
        { projectId, name: { $in: [...new Set(named.map((use) => use.name))] } },
        { fields: ['name'] },
      )
    ).map((destination) => destination.name),
  );
  return named
    .filter((use) => !existing.has(use.name))
    .map((use) => ({
      in: 'body' as const,
      name: use.at,
      value: use.name,
      detail: `${use.at} names destination "${use.name}", which does not exist in this project; create it first`,
    }));
}

/** The destinations a manifest names that the project does not have, named as in the manifest. */
export async function manifestDestinationIssues(
  em: EntityManager,
  projectId: string,
  manifest: Manifest,
): Promise<ProblemIssue[]> {
  const issues: ProblemIssue[] = [];
  for (const [index, content] of manifest.integrations.entries())
    issues.push(...(await missingDestinationIssues(em, projectId, content, `integrations[${index}]`)));
  return issues;
}

/**
 * Rejects content whose own rules fail, that names another integration or provider, or that names
 * a destination the project does not have.
 */
async function assertContent(
  em: EntityManager,
  projectId: string,
  content: IntegrationContent,
  expected: { name: string; provider: string },
  prefix: string,
  rules: ContentRules,
): Promise<void> {
  const issues = integrationContentIssues(content, prefix, rules);
  issues.push(...(await missingDestinationIssues(em, projectId, content, prefix)));
  if (content.name !== expected.name) {
    issues.push({
      in: 'body',
      name: `${prefix}.name`,
      value: content.name,
      detail: `${prefix}.name must equal the integration name "${expected.name}"`,
    });
  }
  if (content.provider !== expected.provider) {
    issues.push({
      in: 'body',
      name: `${prefix}.provider`,
      value: content.provider,
      detail: `${prefix}.provider must equal the integration provider "${expected.provider}"`,
    });
  }
  if (issues.length) throw ProblemError.invalid(issues);
}

function newRevision(integration: Integration, specVersion: string, content: IntegrationContent): Revision {
  return {
    id: randomUUID(),
    projectId: integration.projectId,
    integrationId: integration.id,
    specVersion,
    content,
    createTime: new Date(),
  };
}

export async function createIntegration(
  em: EntityManager,
  projectId: string,
  input: { name: string; provider: string; specVersion: string; content: IntegrationContent },
  rules: ContentRules,
  prefix = 'latestRevision.content',
): Promise<{ integration: Integration; revision: Revision }> {
  await assertContent(em, projectId, input.content, input, prefix, rules);
  if (await em.count(IntegrationEntity, { projectId, name: input.name })) {
    throw ProblemError.conflict(`An integration named "${input.name}" already exists in this project.`);
  }
  const now = new Date();
  const integration = em.create(IntegrationEntity, {
    id: randomUUID(),
    projectId,
    name: input.name,
    provider: input.provider,
    latestRevisionId: randomUUID(),
    createTime: now,
    updateTime: now,
  });
  const revision = em.create(RevisionEntity, {
    ...newRevision(integration, input.specVersion, input.content),
    id: integration.latestRevisionId,
  });
  em.persist([integration, revision]);
  return { integration, revision };
}

/** A new revision becomes the latest; the provider of an integration never changes. */
export async function addRevision(
  em: EntityManager,
  integration: Integration,
  specVersion: string,
  content: IntegrationContent,
  prefix: string,
  rules: ContentRules,
): Promise<Revision> {
  await assertContent(em, integration.projectId, content, integration, prefix, rules);
  const revision = em.create(RevisionEntity, newRevision(integration, specVersion, content));
  integration.latestRevisionId = revision.id;
  integration.updateTime = new Date();
  em.persist(revision);
  return revision;
}

/**
 * Applies a whole manifest: new integrations are created, changed ones get a revision, unchanged
 * ones are left alone, and with `destructive` the project's integrations absent from it are
 * removed. The caller runs this in one transaction, so a failure anywhere changes nothing.
 */
export async function applyManifest(
  em: EntityManager,
  projectId: string,
  manifest: Manifest,
  destructive: boolean,
  rules: ContentRules,
): Promise<{ integrations: { integration: Integration; revision: Revision }[]; deleted: string[] }> {
  const existing = await em.find(IntegrationEntity, { projectId });
  const results: { integration: Integration; revision: Revision }[] = [];
  for (const [index, content] of manifest.integrations.entries()) {
    const prefix = `sourceYaml:integrations[${index}]`;
    const current = existing.find((integration) => integration.name === content.name);
    if (!current) {
      const input = {
        name: content.name,
        provider: content.provider,
        specVersion: manifest.specVersion,
        content,
      };
      results.push(await createIntegration(em, projectId, input, rules, prefix));
      continue;
    }
    if (current.provider !== content.provider) {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: `${prefix}.provider`,
          value: content.provider,
          detail: `integration "${current.name}" uses provider "${current.provider}"; a provider cannot change`,
        },
      ]);
    }
    const latest = await latestRevision(em, current);
    const unchanged =
      latest.specVersion === manifest.specVersion && isDeepStrictEqual(latest.content, content);
    results.push({
      integration: current,
      revision: unchanged
        ? latest
        : await addRevision(em, current, manifest.specVersion, content, prefix, rules),
    });
  }
  const deleted: string[] = [];
  if (destructive) {
    const wanted = new Set(manifest.integrations.map((content) => content.name));
    for (const integration of existing.filter((candidate) => !wanted.has(candidate.name))) {
      await deleteIntegration(em, integration);
      deleted.push(integration.name);
    }
  }
  return { integrations: results, deleted };
}

/** Hooks run before an integration is deleted (e.g. refusing while installations exist). */
const deletionGuards: ((em: EntityManager, integration: Integration) => Promise<void>)[] = [];

export function addIntegrationDeletionGuard(
  guard: (em: EntityManager, integration: Integration) => Promise<void>,
): void {
  deletionGuards.push(guard);
}

export async function deleteIntegration(em: EntityManager, integration: Integration): Promise<void> {
  for (const guard of deletionGuards) await guard(em, integration);
  await em.nativeDelete(RevisionEntity, { integrationId: integration.id });
  em.remove(integration);
}
