import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { canonicalName } from '../core/names.js';
import { ProblemError } from '../core/problem.js';
import { findProject } from './project-access.js';
import { hashToken, randomToken } from '../crypto/secrets.js';
import { OrgEntity, type Org } from '../db/entities/org.js';
import { ApiKeyEntity, ProjectEntity, type ApiKey, type Project } from '../db/entities/project.js';
import type { ApiKeyView, ProjectView } from '../schemas/projects.js';
import {
  API_KEY_PREFIX,
  FRONTEND_KEY_PREFIX,
  MASKED_KEY_SUFFIX,
  shownKeyPrefix,
} from '../core/api-key-text.js';
import { isFrontendOnly } from '../core/principal.js';

export function projectView(project: Project): ProjectView {
  return {
    id: project.id,
    name: project.name,
    appName: project.appName,
    orgId: project.orgId,
    createTime: project.createTime.toISOString(),
    updateTime: project.updateTime.toISOString(),
  };
}

export function apiKeyView(apiKey: ApiKey): ApiKeyView {
  return {
    id: apiKey.id,
    projectId: apiKey.projectId,
    label: apiKey.label,
    prefix: apiKey.prefix,
    key: `${apiKey.prefix}${MASKED_KEY_SUFFIX}`,
    scopes: apiKey.scopes,
    active: apiKey.active,
    ...(apiKey.lastUsedTime && { lastUsedTime: apiKey.lastUsedTime.toISOString() }),
    createTime: apiKey.createTime.toISOString(),
    updateTime: apiKey.updateTime.toISOString(),
  };
}

export async function assertProjectNameFree(em: EntityManager, name: string): Promise<void> {
  if (await findProject(em, name)) throw ProblemError.conflict(`A project named "${name}" already exists.`);
}

export async function createOrg(em: EntityManager, name: string): Promise<Org> {
  const org = em.create(OrgEntity, {
    id: randomUUID(),
    name,
    createTime: new Date(),
    updateTime: new Date(),
  });
  em.persist(org);
  return org;
}

export async function createProject(
  em: EntityManager,
  input: { name: string; appName?: string; orgId: string },
): Promise<Project> {
  // The API allows only ASCII names; `ferry projects create` allows any, kept in NFC as names are.
  const name = canonicalName(input.name);
  await assertProjectNameFree(em, name);
  if (!(await em.findOne(OrgEntity, { id: input.orgId })))
    throw ProblemError.notFound(`Org "${input.orgId}" was not found.`);
  const project = em.create(ProjectEntity, {
    id: randomUUID(),
    orgId: input.orgId,
    name,
    appName: input.appName ?? name,
    createTime: new Date(),
    updateTime: new Date(),
  });
  em.persist(project);
  return project;
}

/** Creates a key and returns it with its one-time plaintext. */
export function createApiKey(
  em: EntityManager,
  projectId: string,
  input: { label: string; scopes?: string[] },
): { apiKey: ApiKey; key: string } {
  const keyPrefix = isFrontendOnly(input.scopes ?? []) ? FRONTEND_KEY_PREFIX : API_KEY_PREFIX;
  const key = randomToken(keyPrefix);
  const apiKey = em.create(ApiKeyEntity, {
    id: randomUUID(),
    projectId,
    label: input.label,
    prefix: shownKeyPrefix(key),
    keyHash: hashToken(key),
    scopes: input.scopes ?? [],
    active: true,
    createTime: new Date(),
    updateTime: new Date(),
  });
  em.persist(apiKey);
  return { apiKey, key };
}
