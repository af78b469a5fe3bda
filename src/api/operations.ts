import Type from 'typebox';
import { ProblemError } from '../core/problem.js';
import { defineRoute } from './route.js';
import {
  InstallationOperationsParams,
  OperationListQuery,
  OperationLogSchema,
  OperationPageSchema,
  OperationParams,
  OperationSchema,
  RetryResultSchema,
} from '../schemas/operations.js';
import { retryOperation } from '../domain/operation-retry.js';
import { findOperation } from '../domain/operations.js';
import { getOperationView, operationPageView } from '../domain/read-views.js';
import { listLogs } from '../domain/operation-logs.js';

export const operationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations/{installationId}/operations',
    operationId: 'listOperations',
    summary: 'List an installation’s operations, newest first',
    description:
      'Pages are stable while new operations arrive: pass `pagination.nextPageToken` back as `pageToken` unchanged.',
    tags: ['Operations'],
    auth: ['apiKey', 'bearer'],
    params: InstallationOperationsParams,
    query: OperationListQuery,
    responses: { 200: { description: 'A page of operations', schema: OperationPageSchema } },
  }).handle(async ({ em, project, params, query, koa, settings }) => {
    // The query converter would truncate `2.5` to 2; a page size is a whole number as written.
    const rawPageSize = koa.query.pageSize;
    if (rawPageSize !== undefined && !/^\d+$/.test(String(rawPageSize))) {
      throw ProblemError.invalid([
        {
          in: 'query',
          name: 'pageSize',
          value: rawPageSize,
          detail: 'pageSize must be an integer from 1 to 1000',
        },
      ]);
    }
    const page = await operationPageView(
      em,
      project.id,
      params.integrationId,
      params.installationId,
      { pageSize: query.pageSize ?? 200, pageToken: query.pageToken },
      settings,
    );
    return { status: 200, body: page };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/operations/{operationId}',
    operationId: 'getOperation',
    summary: 'Get an operation',
    tags: ['Operations'],
    auth: ['apiKey', 'bearer'],
    params: OperationParams,
    responses: { 200: { description: 'The operation', schema: OperationSchema } },
  }).handle(async ({ em, project, params, settings }) => {
    return { status: 200, body: await getOperationView(em, project.id, params.operationId, settings) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/operations/{operationId}/logs',
    operationId: 'listOperationLogs',
    summary: 'List an operation’s logs, oldest first',
    description: 'At most 10,000 entries. Severities: DEBUG (one per provider request), INFO, WARN, ERROR.',
    tags: ['Operations'],
    auth: ['apiKey', 'bearer'],
    params: OperationParams,
    responses: { 200: { description: 'Log entries', schema: Type.Array(OperationLogSchema) } },
  }).handle(async ({ em, project, params }) => {
    const operation = await findOperation(em, project.id, params.operationId);
    return { status: 200, body: await listLogs(em, project.id, operation.id) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/operations/{operationId}:retry',
    operationId: 'retryOperation',
    summary: 'Retry a failed operation',
    description:
      'Runs a failed operation again as a new operation linked to it (`metadata.retryOf`), with the usual events. A read resumes from its last delivered page, in turn with its object’s other reads; an asynchronous write sends only the records that failed. 409 for an operation that did not fail; 422 for one that cannot be retried (a synchronous write, whose caller has the answer).',
    tags: ['Operations'],
    auth: ['apiKey', 'bearer'],
    params: OperationParams,
    responses: { 201: { description: 'The retry’s operation', schema: RetryResultSchema } },
  }).handle(async ({ em, project, params }) => {
    return { status: 201, body: await retryOperation(em, project, params.operationId) };
  }),
];
