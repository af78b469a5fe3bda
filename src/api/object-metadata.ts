import { refuseFrontendKey } from '../core/principal.js';
import { defineRoute } from './route.js';
import { assertActsForGroup } from '../domain/project-access.js';
import { ProblemError } from '../core/problem.js';
import { ProblemSchema } from '../schemas/common.js';
import {
  IntegrationObjectParams,
  IntegrationParams,
  ObjectMetadataQuery,
  ObjectMetadataSchema,
  ProviderObjectParams,
  ProviderParams,
  UpsertObjectMetadataBody,
  UpsertObjectMetadataQuery,
  UpsertObjectMetadataResponse,
} from '../schemas/object-metadata.js';
import { findIntegration, latestRevision } from '../domain/integrations.js';
import { findGroupConnection } from '../domain/credentials.js';
import {
  connectorOf,
  customFieldIssues,
  describeObject,
  integrationConnection,
  providerIntegrationContents,
  requireProvider,
  resolveObjectName,
  upsertCustomFields,
  upsertGroupRef,
} from '../domain/object-metadata.js';
import type { IntegrationContent } from '../schemas/integration-content.js';
import type { CustomFieldDefinition } from '../schemas/object-metadata.js';

const errors = {
  400: { description: 'Invalid request', schema: ProblemSchema },
  404: { description: 'Unknown provider, integration, group connection or object', schema: ProblemSchema },
  422: { description: 'The provider does not support this', schema: ProblemSchema },
  502: { description: 'The provider failed (see `retryable`)', schema: ProblemSchema },
};

/** Object name → definitions, with mapped object names resolved to the provider's names. */
function resolveFields(
  contents: IntegrationContent[],
  fields: Record<string, CustomFieldDefinition[]>,
): Record<string, { objectName: string; definitions: CustomFieldDefinition[] }> {
  const issues = customFieldIssues(fields);
  if (issues.length) throw ProblemError.invalid(issues);
  return Object.fromEntries(
    Object.entries(fields).map(([name, definitions]) => [
      name,
      { objectName: resolveObjectName(contents, name).objectName, definitions },
    ]),
  );
}

export const objectMetadataRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/providers/{provider}/objects/{objectName}/metadata',
    operationId: 'getObjectMetadataForConnection',
    summary: 'Describe a provider object’s fields, through a group’s connection',
    description:
      '`objectName` may be the provider’s name or the name an integration of this provider maps it to (`mapToName`).',
    tags: ['Objects & Fields'],
    auth: ['apiKey', 'bearer'],
    params: ProviderObjectParams,
    query: ObjectMetadataQuery,
    responses: { 200: { description: 'Object metadata', schema: ObjectMetadataSchema }, ...errors },
  }).handle(async ({ em, project, params, query }) => {
    const provider = requireProvider(params.provider);
    const connection = await findGroupConnection(em, project.id, query.groupRef, provider);
    const name = resolveObjectName(
      await providerIntegrationContents(em, project.id, provider),
      params.objectName,
    );
    // Several integrations may map one provider object: only a mapped name asked for is reported.
    const reported = name.objectName !== params.objectName ? name : { objectName: name.objectName };
    const connector = await connectorOf(connection, 'objectMetadata');
    return {
      status: 200,
      body: await describeObject(connector, reported, { excludeReadOnly: query.excludeReadOnly }),
    };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationIdOrName}/objects/{objectName}/metadata',
    operationId: 'getObjectMetadataForInstallation',
    summary: 'Describe an object of an integration’s provider, through a group’s connection',
    description:
      '`objectName` may be the provider’s name or the `mapToName` of a read object in the integration’s latest revision. The group’s installation of the integration gives the connection; without one, the group’s connection to the provider.',
    tags: ['Objects & Fields'],
    auth: ['apiKey', 'bearer'],
    params: IntegrationObjectParams,
    query: ObjectMetadataQuery,
    responses: { 200: { description: 'Object metadata', schema: ObjectMetadataSchema }, ...errors },
  }).handle(async ({ em, project, params, query }) => {
    const integration = await findIntegration(em, project.id, params.integrationIdOrName);
    const revision = await latestRevision(em, integration);
    const name = resolveObjectName([revision.content], params.objectName);
    const connection = await integrationConnection(em, integration, query.groupRef);
    const connector = await connectorOf(connection, 'objectMetadata');
    return {
      status: 200,
      body: await describeObject(connector, name, { excludeReadOnly: query.excludeReadOnly }),
    };
  }),
  defineRoute({
    method: 'PUT',
    path: '/projects/{projectIdOrName}/providers/{provider}/object-metadata',
    operationId: 'upsertMetadataForConnection',
    summary: 'Create or update custom fields in the provider account of a group’s connection',
    description:
      'Supported by providers whose connector can create fields (422 otherwise). Options a provider cannot keep are listed per field in `warnings`.',
    tags: ['Objects & Fields'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProviderParams,
    query: UpsertObjectMetadataQuery,
    body: UpsertObjectMetadataBody,
    responses: {
      200: { description: 'What happened to each field', schema: UpsertObjectMetadataResponse },
      ...errors,
    },
  }).handle(async ({ em, project, params, query, body, principal }) => {
    // Changes the customer's provider account; the components never call it.
    refuseFrontendKey(principal);
    const provider = requireProvider(params.provider);
    const groupRef = upsertGroupRef(body, query);
    assertActsForGroup(principal, groupRef);
    const fields = resolveFields(
      await providerIntegrationContents(em, project.id, provider),
      body.fields as Record<string, CustomFieldDefinition[]>,
    );
    const connection = await findGroupConnection(em, project.id, groupRef, provider);
    const connector = await connectorOf(connection, 'customFields');
    return { status: 200, body: await upsertCustomFields(connector, fields) };
  }),
  defineRoute({
    method: 'PUT',
    path: '/projects/{projectIdOrName}/integrations/{integrationIdOrName}/object-metadata',
    operationId: 'upsertMetadataForInstallation',
    summary: 'Create or update custom fields in the provider account of a group’s installation',
    description:
      'Object names may be mapped names of the integration’s read objects. The group’s installation gives the connection; without one, the group’s connection to the provider.',
    tags: ['Objects & Fields'],
    auth: ['apiKey', 'bearer'],
    params: IntegrationParams,
    query: UpsertObjectMetadataQuery,
    body: UpsertObjectMetadataBody,
    responses: {
      200: { description: 'What happened to each field', schema: UpsertObjectMetadataResponse },
      ...errors,
    },
  }).handle(async ({ em, project, params, query, body }) => {
    const integration = await findIntegration(em, project.id, params.integrationIdOrName);
    const groupRef = upsertGroupRef(body, query);
    const revision = await latestRevision(em, integration);
    const fields = resolveFields([revision.content], body.fields as Record<string, CustomFieldDefinition[]>);
    const connection = await integrationConnection(em, integration, groupRef);
    const connector = await connectorOf(connection, 'customFields');
    return { status: 200, body: await upsertCustomFields(connector, fields) };
  }),
];
