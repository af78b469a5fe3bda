import Type from 'typebox';
import { defineRoute } from './route.js';
import { ProjectPathParams } from '../schemas/common.js';
import {
  CreateJwtKeyBody,
  JwtKeyListQuery,
  JwtKeyParams,
  CreatedJwtKeySchema,
  JwtKeySchema,
  UpdateJwtKeyBody,
} from '../schemas/jwt-keys.js';
import { JwtKeyEntity } from '../db/entities/jwt-key.js';
import { createJwtKey, findJwtKey, JWT_KEY_NOT_FOUND_REMEDY, jwtKeyView } from '../domain/jwt-keys.js';
import { applyUpdateMask } from '../domain/update-mask.js';

/** The spec lists only X-Api-Key for the JWT key endpoints. */
export const jwtKeyRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/jwt-keys',
    operationId: 'createJwtKey',
    summary: 'Register the public half of a key that signs project bearer tokens',
    tags: ['JWT keys'],
    auth: ['apiKey'],
    notFoundRemedy: JWT_KEY_NOT_FOUND_REMEDY,
    params: ProjectPathParams,
    body: CreateJwtKeyBody,
    responses: { 201: { description: 'Created', schema: CreatedJwtKeySchema } },
  }).handle(async ({ em, project, body }) => {
    // RS256 and RSA name the same keys; a key is always shown as RSA.
    const key = createJwtKey(em, project.id, { ...body, algorithm: 'RSA' });
    await em.flush();
    return { status: 201, body: { ...jwtKeyView(key), kid: key.id } };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/jwt-keys',
    operationId: 'listJwtKeys',
    summary: 'List JWT keys',
    tags: ['JWT keys'],
    auth: ['apiKey'],
    notFoundRemedy: JWT_KEY_NOT_FOUND_REMEDY,
    params: ProjectPathParams,
    query: JwtKeyListQuery,
    responses: { 200: { description: 'JWT keys', schema: Type.Array(JwtKeySchema) } },
  }).handle(async ({ em, project, query }) => {
    const keys = await em.find(
      JwtKeyEntity,
      { projectId: project.id, ...(query.active && { active: true }) },
      { orderBy: { createTime: 'asc', id: 'asc' } },
    );
    return { status: 200, body: keys.map(jwtKeyView) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/jwt-keys/{keyId}',
    operationId: 'getJwtKey',
    summary: 'Get a JWT key',
    tags: ['JWT keys'],
    auth: ['apiKey'],
    notFoundRemedy: JWT_KEY_NOT_FOUND_REMEDY,
    params: JwtKeyParams,
    responses: { 200: { description: 'The JWT key', schema: JwtKeySchema } },
  }).handle(async ({ em, project, params }) => {
    return { status: 200, body: jwtKeyView(await findJwtKey(em, project.id, params.keyId)) };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/jwt-keys/{keyId}',
    operationId: 'updateJwtKey',
    summary: 'Rename, deactivate or reactivate a JWT key',
    tags: ['JWT keys'],
    auth: ['apiKey'],
    notFoundRemedy: JWT_KEY_NOT_FOUND_REMEDY,
    params: JwtKeyParams,
    body: UpdateJwtKeyBody,
    responses: { 200: { description: 'The updated JWT key', schema: JwtKeySchema } },
  }).handle(async ({ em, project, params, body }) => {
    const key = await findJwtKey(em, project.id, params.keyId);
    applyUpdateMask(key, body.jwtKey, body.updateMask, UpdateJwtKeyBody.properties.jwtKey, 'jwtKey');
    await em.flush();
    return { status: 200, body: jwtKeyView(key) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/jwt-keys/{keyId}',
    operationId: 'deleteJwtKey',
    summary: 'Delete a JWT key; tokens signed with it stop working at once',
    tags: ['JWT keys'],
    auth: ['apiKey'],
    notFoundRemedy: JWT_KEY_NOT_FOUND_REMEDY,
    params: JwtKeyParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    await em.remove(await findJwtKey(em, project.id, params.keyId)).flush();
    return { status: 204 };
  }),
];
