import type { EntityManager } from '@mikro-orm/postgresql';
import Type from 'typebox';
import { ProblemError } from '../core/problem.js';
import { defineRoute } from './route.js';
import { ProjectIdOrName, ProjectPathParams } from '../schemas/common.js';
import {
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
  UpdateApiKeyBody,
} from '../schemas/projects.js';
import { ApiKeyEntity, type ApiKey } from '../db/entities/project.js';
import { hasApiKeyPrefix, maskApiKeys, maskedKeyPrefix } from '../core/api-key-text.js';
import { apiKeyView, createApiKey } from '../domain/projects.js';
import { hashToken } from '../crypto/secrets.js';
import { applyUpdateMask } from '../domain/update-mask.js';
import { isUuid } from '../core/ids.js';
import { forgetApiKeys } from './auth.js';

const ApiKeyParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  apiKeyId: Type.String({
    minLength: 1,
    description:
      'The key’s ID, the key itself (as the public API addresses keys), or the key as lists show it (`ferry_sk_AbCdEf...`).',
  }),
});

const ListApiKeysQuery = Type.Object({
  active: Type.Optional(
    Type.Boolean({ description: 'Only active keys (true) or only deactivated ones (false).' }),
  ),
});

/**
 * A key by its id, by the key itself (found by its hash, never echoed whole), or as lists show it
 * (its prefix and `...`), which names it while no other key of the project shares the prefix.
 */
async function findApiKey(em: EntityManager, projectId: string, idOrKey: string) {
  let apiKey: ApiKey | null = null;
  const shownPrefix = maskedKeyPrefix(idOrKey);
  if (isUuid(idOrKey)) {
    apiKey = await em.findOne(ApiKeyEntity, { id: idOrKey, projectId });
  } else if (shownPrefix) {
    const sharing = await em.find(ApiKeyEntity, { prefix: shownPrefix, projectId }, { limit: 2 });
    if (sharing.length > 1) {
      throw ProblemError.conflict(`More than one API key starts ${shownPrefix}; address it by its id.`);
    }
    apiKey = sharing[0] ?? null;
  } else if (hasApiKeyPrefix(idOrKey)) {
    apiKey = await em.findOne(ApiKeyEntity, { keyHash: hashToken(idOrKey), projectId });
  }
  if (!apiKey) throw ProblemError.notFound(`API key "${maskApiKeys(idOrKey)}" was not found.`);
  return apiKey;
}

export const apiKeyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/api-keys',
    operationId: 'listApiKeys',
    summary: 'List API keys (never the keys themselves)',
    tags: ['API keys'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    query: ListApiKeysQuery,
    responses: { 200: { description: 'API keys', schema: Type.Array(ApiKeySchema) } },
  }).handle(async ({ em, project, query }) => {
    const keys = await em.find(
      ApiKeyEntity,
      { projectId: project.id, ...(query.active !== undefined && { active: query.active }) },
      { orderBy: { createTime: 'asc' } },
    );
    return { status: 200, body: keys.map(apiKeyView) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an API key; the key is shown only in this response',
    tags: ['API keys'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: CreateApiKeyBody,
    responses: { 201: { description: 'Created', schema: CreatedApiKeySchema } },
  }).handle(async ({ em, project, body }) => {
    const { apiKey, key } = createApiKey(em, project.id, body);
    await em.flush();
    return { status: 201, body: { ...apiKeyView(apiKey), key } };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/api-keys/{apiKeyId}',
    operationId: 'getApiKey',
    summary: 'Get an API key',
    tags: ['API keys'],
    auth: ['apiKey', 'bearer'],
    params: ApiKeyParams,
    responses: { 200: { description: 'The API key', schema: ApiKeySchema } },
  }).handle(async ({ em, project, params }) => {
    return { status: 200, body: apiKeyView(await findApiKey(em, project.id, params.apiKeyId)) };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/api-keys/{apiKeyId}',
    operationId: 'updateApiKey',
    summary: 'Rename or deactivate an API key',
    tags: ['API keys'],
    auth: ['apiKey', 'bearer'],
    params: ApiKeyParams,
    body: UpdateApiKeyBody,
    responses: { 200: { description: 'The updated API key', schema: ApiKeySchema } },
  }).handle(async ({ em, project, params, body }) => {
    const apiKey = await findApiKey(em, project.id, params.apiKeyId);
    applyUpdateMask(apiKey, body.apiKey, body.updateMask, UpdateApiKeyBody.properties.apiKey, 'apiKey');
    await em.flush();
    forgetApiKeys();
    return { status: 200, body: apiKeyView(apiKey) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/api-keys/{apiKeyId}',
    operationId: 'deleteApiKey',
    summary: 'Delete an API key',
    tags: ['API keys'],
    auth: ['apiKey', 'bearer'],
    params: ApiKeyParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    await em.remove(await findApiKey(em, project.id, params.apiKeyId)).flush();
    forgetApiKeys();
    return { status: 204 };
  }),
];
