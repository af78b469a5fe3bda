import { defineRoute } from './route.js';
import { ProblemSchema } from '../schemas/common.js';
import { WriteBody, WriteParams, WriteResponse } from '../schemas/write.js';
import { prepareWrite } from '../domain/writes/prepare.js';
import { startAsyncWrite, writeSynchronously } from '../domain/writes/run.js';

export const writeRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/objects/{objectName}',
    operationId: 'writeRecords',
    summary: 'Create, update or delete records in the group’s provider account',
    description:
      'The object must be a write object of the group’s installation config; its `selectedValueDefaults` fill fields the records leave out. `record` writes one record, `batch` up to 100. Synchronous (default): answers with the result, `result` for a record, `results` for a batch. Asynchronous: answers `{operationId}` at once and reports `write.async.done`. Deletes are synchronous and need `deletionSettings.enabled`. The example works on the README quick start’s stack: project `development`, integration `crm-write`, group `acme`.',
    tags: ['Write'],
    hosts: ['write'],
    auth: ['apiKey', 'bearer'],
    params: WriteParams,
    body: WriteBody,
    bodyExample: {
      groupRef: 'acme',
      type: 'create',
      record: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    },
    responses: {
      200: {
        description: 'The operation and, when synchronous, each record’s result',
        schema: WriteResponse,
      },
      400: { description: 'Invalid request', schema: ProblemSchema },
      404: {
        description: 'No installation for the group, or not a write object of it',
        schema: ProblemSchema,
      },
      413: { description: 'An asynchronous batch too large to queue', schema: ProblemSchema },
      422: { description: 'The provider cannot write this, or refused the record', schema: ProblemSchema },
      502: { description: 'The provider failed (see `retryable`)', schema: ProblemSchema },
      503: { description: 'The workflow service is unreachable', schema: ProblemSchema },
    },
  }).handle(async ({ em, project, params, body, settings }) => {
    const write = await prepareWrite(em, project.id, params.integrationId, params.objectName, body);
    const answer =
      write.mode === 'asynchronous'
        ? await startAsyncWrite(em, write)
        : await writeSynchronously(em, write, settings.repair.stuckAfterMs);
    return { status: 200, body: answer };
  }),
];
