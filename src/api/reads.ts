import { defineRoute } from './route.js';
import {
  BackfillProgressParams,
  BackfillProgressSchema,
  DeliverResultsBody,
  ReadObjectParams,
  TriggerReadBody,
  TriggerReadResponse,
} from '../schemas/reads.js';
import { findInstallationOfIntegration } from '../domain/reads/installation-context.js';
import {
  backfillProgressView,
  deliverResults,
  latestBackfill,
  MAX_QUEUED_TRIGGERED_READS,
  triggerRead,
} from '../domain/reads/requests.js';

export const readRoutes = [
  // Before triggerRead: `{objectName}` would otherwise swallow `contacts:deliverResults`.
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/objects/{objectName}:deliverResults',
    operationId: 'deliverResults',
    summary: 'Send pages of an on-request object now',
    description:
      'For read objects with `delivery.mode: onRequest`: sends up to `pages` stored pages to the destination, oldest first, and the rest of the request as soon as more pages are read. Deprecated: trigger a read instead.',
    tags: ['Reads'],
    hosts: ['read'],
    auth: ['apiKey', 'bearer'],
    deprecated: true,
    params: ReadObjectParams,
    body: DeliverResultsBody,
    responses: { 204: { description: 'The stored pages asked for were delivered, or are owed' } },
  }).handle(async ({ em, project, params, body, settings }) => {
    await deliverResults(em, project.id, params.integrationId, params.objectName, body, settings);
    return { status: 204 };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/objects/{objectName}',
    operationId: 'triggerRead',
    summary: 'Trigger a read of one object now',
    description:
      'Answers at once with the operation; the read runs in the installation’s workflow. Without `sinceTimestamp` the whole history is read (a backfill). Follow it with GET /projects/{projectIdOrName}/operations/{operationId} and the `read.triggered.*` events. ' +
      `An object holds at most ${MAX_QUEUED_TRIGGERED_READS} triggered reads waiting or running: one more is answered 429 with Retry-After. ` +
      'The example works on the README quick start’s stack: project `development`, integration `crm-read`; object `contacts`, group `acme`.',
    tags: ['Reads'],
    hosts: ['read'],
    auth: ['apiKey', 'bearer'],
    params: ReadObjectParams,
    body: TriggerReadBody,
    bodyExample: { groupRef: 'acme', mode: 'async', sinceTimestamp: '2026-01-01T00:00:00Z' },
    responses: {
      201: { description: 'The read’s operation', schema: TriggerReadResponse },
    },
  }).handle(async ({ em, project, params, body }) => {
    const result = await triggerRead(em, project.id, params.integrationId, params.objectName, body);
    return { status: 201, body: result };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations/{installationId}/objects/{objectName}/backfill-progress',
    operationId: 'getBackfillProgress',
    summary: 'Progress of an object’s latest backfill',
    tags: ['Reads'],
    auth: ['apiKey', 'bearer'],
    params: BackfillProgressParams,
    responses: { 200: { description: 'The latest backfill’s progress', schema: BackfillProgressSchema } },
  }).handle(async ({ em, project, params }) => {
    const installation = await findInstallationOfIntegration(
      em,
      project.id,
      params.integrationId,
      params.installationId,
    );
    return {
      status: 200,
      body: {
        installationId: installation.id,
        objectName: params.objectName,
        ...backfillProgressView(await latestBackfill(em, installation, params.objectName)),
      },
    };
  }),
];
