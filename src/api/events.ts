import { defineRoute } from './route.js';
import { Paginated, ProjectPathParams } from '../schemas/common.js';
import {
  EventListQuery,
  EventParams,
  NotificationEventSchema,
  RedeliveryResultSchema,
} from '../schemas/notifications.js';
import { listEvents } from '../notifications/event-list.js';
import { redeliverEvent } from '../notifications/redeliver.js';

export const eventRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/events',
    operationId: 'listEvents',
    summary: 'List notification events, newest first, routed or not',
    description:
      'Every event the project produced, including those no route delivers anywhere. `routedTime` is set once the event was matched against the routes.',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    query: EventListQuery,
    responses: { 200: { description: 'A page of events', schema: Paginated(NotificationEventSchema) } },
  }).handle(async ({ em, project, query, settings }) => {
    const page = await listEvents(
      em,
      project.id,
      { eventType: query.eventType, pageSize: query.pageSize ?? 200, pageToken: query.pageToken },
      settings.encryptionKey,
    );
    return { status: 200, body: page };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/events/{eventId}:retry',
    operationId: 'retryEventDelivery',
    summary: 'Send a notification event again where it was not delivered',
    description:
      'Starts a new delivery to every destination the event’s routes lead to that has not accepted it (retries ran out, or the destination was disabled and is enabled again), under the same `webhook-id`. Destinations that accepted it are left alone.',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: EventParams,
    responses: { 202: { description: 'The deliveries started', schema: RedeliveryResultSchema } },
  }).handle(async ({ em, project, params }) => {
    return { status: 202, body: await redeliverEvent(em, project.id, params.eventId) };
  }),
];
