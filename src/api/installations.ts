import Type from 'typebox';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../core/principal.js';
import { batchedList } from './batched-list.js';
import { defineRoute } from './route.js';
import { ProjectPathParams } from '../schemas/common.js';
import {
  CreateInstallationBody,
  CreateInstallationQuery,
  GroupRefQuery,
  InstallationParams,
  InstallationSchema,
  IntegrationInstallationsParams,
  UpdateInstallationBody,
} from '../schemas/installations.js';
import { findIntegration } from '../domain/integrations.js';
import { assertActsForGroup, assertActsForGroupId, scopedGroupRef } from '../domain/project-access.js';
import {
  changeInstallationConfig,
  createInstallation,
  deleteInstallation,
} from '../domain/installations/lifecycle.js';
import { findInstallation } from '../domain/installations/lookups.js';
import { getInstallationView, listInstallationViews } from '../domain/read-views.js';
import { applyInstallationMask, maskedInstallationFields } from '../domain/installations/update-mask.js';
import { configContentRoutes } from './installation-config.js';
import { installationPauseRoutes } from './installation-pauses.js';

const tags = ['Installations'];

/** A project JWT minted for one group changes only that group's installation (403 otherwise). */
async function actsForInstallation(
  em: EntityManager,
  principal: Principal,
  projectId: string,
  installationId: string,
  integrationId: string,
): Promise<void> {
  if (scopedGroupRef(principal) === undefined) return;
  const installation = await findInstallation(em, projectId, installationId, integrationId);
  await assertActsForGroupId(em, principal, installation.groupId);
}

export const installationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations',
    operationId: 'createInstallation',
    summary: 'Install an integration for a group',
    description:
      'Creates the installation with its first config version and starts its workflow. Without `connectionId` the group’s connection for the integration’s provider is used. The config is validated against the revision (`config.revisionId`, latest by default). One installation per integration and group (409). 503 when Temporal is unreachable; nothing is created then. The example works on the README quick start’s stack: project `development`, integration `crm-read`, group `acme`.',
    tags,
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: IntegrationInstallationsParams,
    query: CreateInstallationQuery,
    body: CreateInstallationBody,
    // `config.createdBy` left out: Ferry credits the version to the caller.
    bodyExample: {
      groupRef: 'acme',
      config: {
        content: {
          provider: 'sandboxApiKey',
          read: {
            objects: {
              contacts: {
                objectName: 'contacts',
                schedule: '*/30 * * * *',
                destination: 'records',
                selectedFields: { company: true },
              },
            },
          },
        },
      },
    },
    responses: { 201: { description: 'The new installation', schema: InstallationSchema } },
  }).handle(async ({ em, project, params, body, principal, settings }) => {
    assertActsForGroup(principal, body.groupRef);
    const integration = await findIntegration(em, project.id, params.integrationId);
    return {
      status: 201,
      body: await createInstallation(em, project, integration, body, principal, settings),
    };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/installations',
    operationId: 'listProjectInstallations',
    summary: 'List the installations of a project',
    tags,
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    query: GroupRefQuery,
    responses: { 200: { description: 'Installations', schema: Type.Array(InstallationSchema) } },
  }).handle(async ({ em, project, query, principal }) => {
    const groupRef = query.groupRef ?? scopedGroupRef(principal);
    assertActsForGroup(principal, groupRef);
    return { status: 200, body: batchedList(listInstallationViews(em, project.id, { groupRef })) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations',
    operationId: 'listInstallations',
    summary: 'List the installations of an integration',
    tags,
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: IntegrationInstallationsParams,
    query: GroupRefQuery,
    responses: { 200: { description: 'Installations', schema: Type.Array(InstallationSchema) } },
  }).handle(async ({ em, project, params, query, principal }) => {
    const groupRef = query.groupRef ?? scopedGroupRef(principal);
    assertActsForGroup(principal, groupRef);
    const integration = await findIntegration(em, project.id, params.integrationId);
    return {
      status: 200,
      body: batchedList(listInstallationViews(em, project.id, { integrationId: integration.id, groupRef })),
    };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations/{installationId}',
    operationId: 'getInstallation',
    summary: 'Get an installation',
    tags,
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: InstallationParams,
    responses: { 200: { description: 'The installation', schema: InstallationSchema } },
  }).handle(async ({ em, project, params, principal }) => {
    const { view, groupRef } = await getInstallationView(
      em,
      project.id,
      params.integrationId,
      params.installationId,
    );
    assertActsForGroup(principal, groupRef);
    return { status: 200, body: view };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations/{installationId}',
    operationId: 'updateInstallation',
    summary: 'Update an installation’s config with a field mask',
    description:
      '`updateMask` lists dotted paths into the installation, e.g. `config.content.read.objects.contacts.schedule` or `config.content.read.objects.contacts`, with `*` for every key at a level (`config.content.read.objects.*.schedule`); each takes the value at the same path of `installation` (absent there: removed). Updatable: `config.revisionId` and paths under `config.content` (except `provider`); `config.createdBy` names who made the new config version; `connectionId` is accepted when it names the connection in use (a group holds one connection per provider; new credentials go to that connection). The result makes a new config version, validated whole, which the running workflow applies at once (a changed schedule re-plans its timer; a subscribe change runs the provider subscription change in the background). 503 when Temporal is unreachable; nothing changes then.',
    tags,
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: InstallationParams,
    body: UpdateInstallationBody,
    responses: { 200: { description: 'The updated installation', schema: InstallationSchema } },
  }).handle(async ({ em, project, params, body, principal, settings }) => {
    const integration = await findIntegration(em, project.id, params.integrationId);
    await actsForInstallation(em, principal, project.id, params.installationId, integration.id);
    const installation = body.installation as Record<string, unknown>;
    const view = await changeInstallationConfig(
      em,
      project,
      integration,
      params.installationId,
      principal,
      {
        createdBy: body.installation.config?.createdBy,
        ...maskedInstallationFields(installation, body.updateMask),
        change: async (current) => applyInstallationMask(current, installation, body.updateMask),
      },
      settings,
    );
    return { status: 200, body: view };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations/{installationId}',
    operationId: 'deleteInstallation',
    summary: 'Delete an installation',
    description:
      'Ends the installation’s workflow (running reads are cancelled, provider subscriptions removed), then deletes the installation, and its connection when no other installation uses it. 503 when Temporal is unreachable; nothing is deleted then.',
    tags,
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: InstallationParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params, principal }) => {
    const integration = await findIntegration(em, project.id, params.integrationId);
    await actsForInstallation(em, principal, project.id, params.installationId, integration.id);
    await deleteInstallation(em, project, integration, params.installationId);
    return { status: 204 };
  }),
  ...configContentRoutes,
  ...installationPauseRoutes,
];
