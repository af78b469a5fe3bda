import Type from 'typebox';
import { batchedList } from './batched-list.js';
import { defineRoute } from './route.js';
import { assertActsForProject } from '../domain/project-access.js';
import { ProjectPathParams } from '../schemas/common.js';
import {
  BatchQuery,
  BatchResultSchema,
  DeployedManifestSchema,
  ManifestCheckSchema,
  CreateIntegrationBody,
  IntegrationParams,
  IntegrationSchema,
  RevisionSchema,
  SourceYamlBody,
} from '../schemas/integrations.js';
import { RevisionEntity } from '../db/entities/integration.js';
import { getIntegrationView, listIntegrationViews } from '../domain/read-views.js';
import {
  addRevision,
  applyManifest,
  createIntegration,
  findIntegration,
  integrationView,
  manifestDestinationIssues,
  revisionView,
} from '../domain/integrations.js';
import { checkManifest, manifestProblem, parseManifest } from '../domain/manifest.js';
import { keepDeployedManifest, latestDeployedManifest } from '../domain/deployed-manifests.js';
import { deleteIntegrationWithInstallations } from '../domain/installations/lifecycle.js';
import { ProblemError } from '../core/problem.js';

export const integrationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations',
    operationId: 'createIntegration',
    summary: 'Create an integration with its first revision',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    body: CreateIntegrationBody,
    responses: { 201: { description: 'Created', schema: IntegrationSchema } },
  }).handle(async ({ em, project, body, principal, settings }) => {
    assertActsForProject(principal);
    const { integration, revision } = await em.transactional((tx) =>
      createIntegration(
        tx,
        project.id,
        {
          name: body.name,
          provider: body.provider,
          specVersion: body.latestRevision.specVersion,
          content: body.latestRevision.content,
        },
        settings,
      ),
    );
    return { status: 201, body: integrationView(integration, revision) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations',
    operationId: 'listIntegrations',
    summary: 'List integrations',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    responses: { 200: { description: 'Integrations', schema: Type.Array(IntegrationSchema) } },
  }).handle(async ({ em, project }) => {
    return { status: 200, body: batchedList(listIntegrationViews(em, project.id)) };
  }),
  defineRoute({
    method: 'PUT',
    path: '/projects/{projectIdOrName}/integrations:batch',
    operationId: 'batchUpsertIntegrations',
    summary: 'Apply a whole amp.yaml manifest atomically',
    description:
      'Creates the integrations the manifest declares, adds a revision to those whose content changed and, with `destructive=true`, deletes the project’s integrations the manifest does not mention. Nothing changes unless everything is valid.',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    query: BatchQuery,
    body: SourceYamlBody,
    responses: { 200: { description: 'The integrations of the manifest', schema: BatchResultSchema } },
  }).handle(async ({ em, project, query, body, settings }) => {
    const manifest = parseManifest(body.sourceYaml, settings);
    const result = await em.transactional(async (tx) => {
      const applied = await applyManifest(tx, project.id, manifest, query.destructive ?? false, settings);
      await keepDeployedManifest(tx, project.id, body.sourceYaml);
      return applied;
    });
    return {
      status: 200,
      body: result.integrations.map(({ integration, revision }) => integrationView(integration, revision)),
    };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/manifests/latest',
    operationId: 'getLatestManifest',
    summary: 'The manifest file last deployed, as written',
    description:
      'The `sourceYaml` of the latest `integrations:batch` (or revision from a manifest), with its comments, order and layout, and whether it still describes the project’s integrations exactly. A project keeps its last 20 deployed manifests. 404 when none was deployed.',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    responses: { 200: { description: 'The latest deployed manifest', schema: DeployedManifestSchema } },
  }).handle(async ({ em, project, settings }) => {
    return { status: 200, body: await latestDeployedManifest(em, project.id, settings) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations:check',
    operationId: 'checkManifest',
    summary: 'Check an amp.yaml manifest without deploying it',
    description:
      'Answers what `integrations:batch` would say of the manifest, and changes nothing: 400 with every error (each with its line and column) in one pass, or 200 with the integrations it declares and warnings for objects and fields the providers’ deep connectors do not know.',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: SourceYamlBody,
    responses: { 200: { description: 'The manifest is valid', schema: ManifestCheckSchema } },
  }).handle(async ({ em, project, body, settings }) => {
    const { manifest, warnings } = checkManifest(body.sourceYaml, settings);
    const missing = await manifestDestinationIssues(em, project.id, manifest);
    if (missing.length) throw manifestProblem(body.sourceYaml, missing);
    return {
      status: 200,
      body: {
        integrations: manifest.integrations.map(({ name, provider }) => ({ name, provider })),
        warnings,
      },
    };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationIdOrName}',
    operationId: 'getIntegration',
    summary: 'Get an integration by ID or name',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer'],
    params: IntegrationParams,
    responses: { 200: { description: 'The integration', schema: IntegrationSchema } },
  }).handle(async ({ em, project, params }) => {
    return { status: 200, body: await getIntegrationView(em, project.id, params.integrationIdOrName) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/integrations/{integrationIdOrName}',
    operationId: 'deleteIntegration',
    summary: 'Delete an integration with its installations and revisions',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer'],
    params: IntegrationParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    await deleteIntegrationWithInstallations(
      em,
      project,
      await findIntegration(em, project.id, params.integrationIdOrName),
    );
    return { status: 204 };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationIdOrName}/revisions',
    operationId: 'listRevisions',
    summary: 'List an integration’s revisions, newest first',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer'],
    params: IntegrationParams,
    responses: { 200: { description: 'Revisions', schema: Type.Array(RevisionSchema) } },
  }).handle(async ({ em, project, params }) => {
    const integration = await findIntegration(em, project.id, params.integrationIdOrName);
    const revisions = await em.find(
      RevisionEntity,
      { integrationId: integration.id },
      { orderBy: { createTime: 'desc' } },
    );
    return { status: 200, body: revisions.map(revisionView) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations/{integrationIdOrName}/revisions',
    operationId: 'createRevision',
    summary: 'Add a revision from a manifest that declares this integration',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer'],
    params: IntegrationParams,
    body: SourceYamlBody,
    responses: { 201: { description: 'The new latest revision', schema: RevisionSchema } },
  }).handle(async ({ em, project, params, body, settings }) => {
    const manifest = parseManifest(body.sourceYaml, settings);
    const revision = await em.transactional(async (tx) => {
      const integration = await findIntegration(tx, project.id, params.integrationIdOrName);
      const index = manifest.integrations.findIndex((content) => content.name === integration.name);
      if (index < 0) {
        throw ProblemError.invalid([
          {
            in: 'body',
            name: 'sourceYaml:integrations',
            detail: `the manifest does not declare integration "${integration.name}"`,
          },
        ]);
      }
      const added = await addRevision(
        tx,
        integration,
        manifest.specVersion,
        manifest.integrations[index],
        `sourceYaml:integrations[${index}]`,
        settings,
      );
      await keepDeployedManifest(tx, project.id, body.sourceYaml);
      return added;
    });
    return { status: 201, body: revisionView(revision) };
  }),
];
