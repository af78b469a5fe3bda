import { defineRoute } from './route.js';
import { Paginated, ProjectPathParams } from '../schemas/common.js';
import { EventListQuery, NotificationEventSchema } from '../schemas/notifications.js';
import { listEvents } from '../notifications/event-list.js';

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
  }).handle(async ({ em, project, query }) => {
    const page = await listEvents(em, project.id, {
      eventType: query.eventType,
      pageSize: query.pageSize ?? 200,
      pageToken: query.pageToken,
    });
    return { status: 200, body: page };
  }),
];
