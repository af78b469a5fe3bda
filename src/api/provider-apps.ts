import Type from 'typebox';
import { defineRoute } from './route.js';
import { assertActsForProject } from '../domain/project-access.js';
import { ProjectPathParams } from '../schemas/common.js';
import {
  CreateProviderAppBody,
  ProviderAppParams,
  ProviderAppSchema,
  UpdateProviderAppBody,
} from '../schemas/provider-apps.js';
import {
  createProviderApp,
  deleteProviderApp,
  findProviderApp,
  listProviderApps,
  providerAppView,
  updateProviderApp,
} from '../domain/provider-apps.js';

export const providerAppRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/provider-apps',
    operationId: 'createProviderApp',
    summary: 'Register the builder’s OAuth client at a provider',
    description:
      'The provider must be an OAuth 2.0 provider of the catalog. The client secret is stored encrypted and never returned. The first app created for a provider is the project’s default for it. Answers 200, as the public service does.',
    tags: ['Provider apps'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: CreateProviderAppBody,
    responses: { 200: { description: 'The provider app', schema: ProviderAppSchema } },
  }).handle(async ({ em, project, body }) => {
    const app = await em.transactional((tx) => createProviderApp(tx, project.id, body));
    return { status: 200, body: providerAppView(app) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/provider-apps',
    operationId: 'listProviderApps',
    summary: 'List provider apps, oldest first',
    tags: ['Provider apps'],
    // Read by the public React components with the browser's token; client secrets are never shown.
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    responses: { 200: { description: 'Provider apps', schema: Type.Array(ProviderAppSchema) } },
  }).handle(async ({ em, project }) => {
    return { status: 200, body: (await listProviderApps(em, project.id)).map(providerAppView) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/provider-apps/{providerAppId}',
    operationId: 'getProviderApp',
    summary: 'Get a provider app',
    tags: ['Provider apps'],
    auth: ['apiKey', 'bearer'],
    params: ProviderAppParams,
    responses: { 200: { description: 'The provider app', schema: ProviderAppSchema } },
  }).handle(async ({ em, project, params }) => {
    return {
      status: 200,
      body: providerAppView(await findProviderApp(em, project.id, params.providerAppId)),
    };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/provider-apps/{providerAppId}',
    operationId: 'updateProviderApp',
    summary: 'Update a provider app',
    description:
      '`updateMask` names the fields to change: clientId, clientSecret, externalRef, scopes, metadata. The provider cannot change.',
    tags: ['Provider apps'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProviderAppParams,
    body: UpdateProviderAppBody,
    responses: { 200: { description: 'The updated provider app', schema: ProviderAppSchema } },
  }).handle(async ({ em, project, params, body, principal }) => {
    assertActsForProject(principal);
    const app = await em.transactional(async (tx) => {
      const found = await findProviderApp(tx, project.id, params.providerAppId);
      updateProviderApp(found, body);
      return found;
    });
    return { status: 200, body: providerAppView(app) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/provider-apps/{providerAppId}',
    operationId: 'deleteProviderApp',
    summary: 'Delete a provider app that no connection uses',
    tags: ['Provider apps'],
    auth: ['apiKey', 'bearer'],
    params: ProviderAppParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    await em.transactional(async (tx) =>
      deleteProviderApp(tx, await findProviderApp(tx, project.id, params.providerAppId)),
    );
    return { status: 204 };
  }),
];
