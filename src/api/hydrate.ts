import { defineRoute } from './route.js';
import { ProblemSchema } from '../schemas/common.js';
import { HydrateParams, HydrateQuery, HydratedRevisionSchema } from '../schemas/hydrate.js';
import { findIntegration, findRevision } from '../domain/integrations.js';
import { hydrateRevision, hydrationConnector } from '../domain/hydrate.js';
import { findConnection } from '../domain/connections/lookups.js';
import { assertActsForGroupId, scopedGroupRef } from '../domain/project-access.js';

export const hydrateRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationIdOrName}/revisions/{revisionId}:hydrate',
    operationId: 'getHydratedRevision',
    summary: 'A revision enriched with the provider’s field metadata, through one connection',
    description:
      'Each read object gains `displayName`, `allFieldsMetadata` and `allFields`; an object the provider cannot describe gets an `error` and empty field lists while the others are still described. Write objects gain `displayName`. The connection must belong to the project (404) and to the integration’s provider (400).',
    tags: ['Integrations'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: HydrateParams,
    query: HydrateQuery,
    responses: {
      200: { description: 'The hydrated revision', schema: HydratedRevisionSchema },
      400: { description: 'The connection is not of the integration’s provider', schema: ProblemSchema },
      404: { description: 'Unknown integration, revision or connection', schema: ProblemSchema },
      502: { description: 'The connection’s credentials failed (see `retryable`)', schema: ProblemSchema },
    },
  }).handle(async ({ em, project, params, query, principal }) => {
    if (scopedGroupRef(principal) !== undefined) {
      const connection = await findConnection(em, project.id, query.connectionId);
      await assertActsForGroupId(em, principal, connection.groupId);
    }
    const integration = await findIntegration(em, project.id, params.integrationIdOrName);
    const revision = await findRevision(em, integration, params.revisionId);
    const connector = await hydrationConnector(em, integration, query.connectionId);
    return { status: 200, body: await hydrateRevision(revision, connector) };
  }),
];
