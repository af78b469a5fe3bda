import { defineRoute } from './route.js';
import { ProblemSchema } from '../schemas/common.js';
import { SearchBody, SearchParams, SearchQuery, SearchResponse } from '../schemas/search.js';
import { searchRecords } from '../domain/search.js';

export const searchRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}',
    operationId: 'searchRecords',
    summary: 'Find records in the group’s provider account by field values',
    description:
      'Records of a read object of the installation (`?groupRef=` or `?installationId=`) whose fields equal the values given (`operator: "eq"`, where the provider’s `support.search.operators.equals` is true), fetched from the provider now. Only fields the installation reads may be filtered on; each record comes as reads deliver it: `fields`, `mappedFields` and `raw`. Pass `nextPageToken` back as `pageToken` for the next page. The example works on the README quick start’s stack: project `development`, integration `crm-read`, group `acme`.',
    tags: ['Search'],
    hosts: ['search'],
    auth: ['apiKey', 'bearer'],
    params: SearchParams,
    query: SearchQuery,
    body: SearchBody,
    bodyExample: {
      objectName: 'contacts',
      fieldFilters: [{ fieldName: 'email', operator: 'eq', value: 'ada@example.com' }],
      pageSize: 50,
    },
    responses: {
      200: { description: 'One page of matching records', schema: SearchResponse },
      400: { description: 'Invalid request, an unsupported operator or page token', schema: ProblemSchema },
      401: { description: 'Missing or invalid credentials', schema: ProblemSchema },
      404: {
        description: 'No installation for the group, or not a read object of it',
        schema: ProblemSchema,
      },
      422: {
        description: 'A field the installation does not read, or a provider that cannot search',
        schema: ProblemSchema,
      },
      502: { description: 'The provider failed (see `retryable`)', schema: ProblemSchema },
    },
  }).handle(async ({ em, project, params, query, body }) => {
    const answer = await searchRecords(em, project.id, params.integrationId, query, body);
    return { status: 200, body: answer };
  }),
];
