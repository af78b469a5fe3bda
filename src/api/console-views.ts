import { defineRoute } from './route.js';
import { Paginated } from '../schemas/common.js';
import {
  DeliveryAttemptListQuery,
  DeliveryAttemptSchema,
  InstallationScheduleSchema,
  DeliveredMessageSchema,
  DeliveryAttemptParams,
} from '../schemas/console-views.js';
import { DestinationParams } from '../schemas/destinations.js';
import { InstallationParams } from '../schemas/installations.js';
import { DeliveryAttemptEntity } from '../db/entities/delivery.js';
import Type from 'typebox';
import { invalidPageToken, pageTokenCodec } from '../crypto/page-token.js';
import { ProblemError } from '../core/problem.js';
import { findDestination } from '../domain/destinations.js';
import { deliveredMessage } from '../domain/delivered-messages.js';
import { findIntegration } from '../domain/integrations.js';
import { findInstallation } from '../domain/installations/lookups.js';
import { describeInstallation, WorkflowNotRunningError } from '../temporal/gateway.js';
import { installationWorkflowId } from '../temporal/contracts/workflow-ids.js';

/** Tokens of a destination's attempt listing (crypto/page-token): the last attempt's id. */
const attemptsToken = pageTokenCodec(
  'delivery-attempts',
  Type.Object({ id: Type.String({ pattern: '^[0-9]{1,19}$' }) }, { additionalProperties: false }),
);

function decodeAttemptsToken(scope: string, token: string, secret: Buffer): string {
  const { id } = attemptsToken.decode(scope, token, secret);
  // An attempt id: a bigint, whose range ends short of some 19-digit numbers.
  if (BigInt(id) >= 2n ** 63n) throw invalidPageToken(token);
  return id;
}

/** The receiver's answer is shown up to this many characters. */
const EXCERPT_CHARS = 500;

/**
 * What support teams ask of a running integration beyond its resources: what was sent where (the
 * delivery attempts of a destination) and when the next reads fire (the installation workflow's
 * `describe` query). The console reads both, like any other client.
 */
export const consoleViewRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/destinations/{destinationNameOrId}/attempts/{attemptId}/message',
    operationId: 'getDeliveredMessage',
    summary: 'The message an attempt carried',
    description:
      'The exact JSON an attempt sent, for the messages Ferry keeps until retention: notifications, subscribe events and schema-watch messages. A read’s delivered pages are not kept (they are the customer’s records): their attempts answer 404, and replaying the operation reads them again.',
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: DeliveryAttemptParams,
    responses: { 200: { description: 'The message', schema: DeliveredMessageSchema } },
  }).handle(async ({ em, project, params, settings }) => {
    const destination = await findDestination(em, project.id, params.destinationNameOrId);
    const retryWindowMs = settings.delivery.retryScheduleMs.reduce((sum, ms) => sum + ms, 0);
    return { status: 200, body: await deliveredMessage(em, destination, params.attemptId, retryWindowMs) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/destinations/{destinationNameOrId}/attempts',
    operationId: 'listDeliveryAttempts',
    summary: 'List a destination’s delivery attempts, newest first',
    description:
      'Every attempt to deliver a message (records or a notification) with the receiver’s status, the latency and the start of its answer. Kept for FERRY_RETENTION_DELIVERY_ATTEMPTS_DAYS.',
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: DestinationParams,
    query: DeliveryAttemptListQuery,
    responses: { 200: { description: 'A page of attempts', schema: Paginated(DeliveryAttemptSchema) } },
  }).handle(async ({ em, project, params, query, settings }) => {
    const destination = await findDestination(em, project.id, params.destinationNameOrId);
    const scope = `${project.id}/${destination.id}`;
    const before =
      query.pageToken === undefined
        ? undefined
        : decodeAttemptsToken(scope, query.pageToken, settings.encryptionKey);
    const pageSize = query.pageSize ?? 50;
    const attempts = await em.find(
      DeliveryAttemptEntity,
      {
        projectId: project.id,
        destinationId: destination.id,
        ...(query.delivered !== undefined && { delivered: query.delivered }),
        ...(before !== undefined && { id: { $lt: before } }),
      },
      { orderBy: { id: 'desc' }, limit: pageSize + 1 },
    );
    const page = attempts.slice(0, pageSize);
    const more = attempts.length > pageSize;
    return {
      status: 200,
      body: {
        results: page.map((attempt) => ({
          id: String(attempt.id),
          messageId: attempt.messageId,
          attempt: attempt.attempt,
          kind: attempt.kind,
          ...(attempt.operationId && { operationId: attempt.operationId }),
          delivered: attempt.delivered,
          ...(attempt.pending && { pending: true }),
          ...(attempt.status != null && { status: attempt.status }),
          durationMs: attempt.durationMs,
          ...(attempt.responseBody != null && {
            responseExcerpt: attempt.responseBody.slice(0, EXCERPT_CHARS),
          }),
          ...(attempt.error != null && { error: attempt.error }),
          createTime: attempt.createTime.toISOString(),
        })),
        pagination: {
          done: !more,
          ...(more && {
            nextPageToken: attemptsToken.encode(
              scope,
              { id: String(page[page.length - 1].id) },
              settings.encryptionKey,
            ),
          }),
        },
      },
    };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/installations/{installationId}/schedule',
    operationId: 'getInstallationSchedule',
    summary: 'The installation’s read schedules, as its workflow holds them',
    description:
      'Answered by the installation workflow’s `describe` query: each object’s cron, whether it is paused, its next fire, a running or queued read and the last run, and the latest fires. 409 while the workflow is not running, 503 when Temporal is unreachable.',
    tags: ['Installations'],
    auth: ['apiKey', 'bearer'],
    params: InstallationParams,
    responses: { 200: { description: 'The schedules', schema: InstallationScheduleSchema } },
  }).handle(async ({ em, project, params, settings }) => {
    const integration = await findIntegration(em, project.id, params.integrationId);
    const installation = await findInstallation(em, project.id, params.installationId, integration.id);
    const described = await describeInstallation(installation.id, { deadlineMs: 5_000 }).catch((error) => {
      if (!(error instanceof WorkflowNotRunningError)) throw error;
      throw new ProblemError({
        status: 409,
        detail: 'The installation’s workflow is not running, so it has no schedule to tell.',
        remedy: 'Workers restart missing installation workflows within FERRY_REPAIR_INTERVAL_SECONDS.',
        retryable: true,
      });
    });
    const workflowId = installationWorkflowId(installation.id);
    const { temporalUiUrl, temporal } = settings;
    return {
      status: 200,
      body: {
        ready: described.ready,
        configId: described.configId,
        objects: described.objects.map((object) => ({
          objectName: object.objectName,
          schedule: object.schedule,
          paused: object.paused,
          ...(object.pauseNote !== undefined && { pauseNote: object.pauseNote }),
          ...(object.nextFireAt && { nextFireAt: object.nextFireAt }),
          needsBackfill: object.needsBackfill,
          queuedTriggers: object.queuedTriggers,
          ...(object.running && { running: object.running }),
          ...(object.lastRun && { lastRun: object.lastRun }),
          consecutiveAuthFailures: object.consecutiveAuthFailures,
        })),
        recentFires: described.recentFires,
        temporal: {
          workflowId,
          url: `${temporalUiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`,
        },
      },
    };
  }),
];
