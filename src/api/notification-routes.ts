import Type from 'typebox';
import { defineRoute } from './route.js';
import { assertActsForProject } from '../domain/project-access.js';
import { ProjectPathParams } from '../schemas/common.js';
import {
  CreateEventTopicRouteBody,
  EventTopicRouteParams,
  EventTopicRouteQuery,
  EventTopicRouteSchema,
} from '../schemas/notifications.js';
import { EventTopicRouteEntity } from '../db/entities/notification.js';
import { createEventTopicRoute, eventTopicRouteView, findEventTopicRoute } from '../notifications/routes.js';

export const notificationRouteRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/notification-event-topic-routes',
    operationId: 'createNotificationEventTopicRoute',
    summary: 'Route every event of one type to a topic',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    body: CreateEventTopicRouteBody,
    responses: { 201: { description: 'Created', schema: EventTopicRouteSchema } },
  }).handle(async ({ em, project, body, principal }) => {
    assertActsForProject(principal);
    const route = await em.transactional((tx) => createEventTopicRoute(tx, project.id, body));
    return { status: 201, body: eventTopicRouteView(route) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/notification-event-topic-routes',
    operationId: 'listNotificationEventTopicRoutes',
    summary: 'List event-topic routes, optionally of one topic or one event type',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    query: EventTopicRouteQuery,
    responses: { 200: { description: 'Routes', schema: Type.Array(EventTopicRouteSchema) } },
  }).handle(async ({ em, project, query }) => {
    const routes = await em.find(
      EventTopicRouteEntity,
      {
        projectId: project.id,
        ...(query.topicId && { topicId: query.topicId }),
        ...(query.eventType && { eventType: query.eventType }),
      },
      { orderBy: { createTime: 'asc', id: 'asc' } },
    );
    return { status: 200, body: routes.map(eventTopicRouteView) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/notification-event-topic-routes/{routeId}',
    operationId: 'getNotificationEventTopicRoute',
    summary: 'Get an event-topic route',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: EventTopicRouteParams,
    responses: { 200: { description: 'The route', schema: EventTopicRouteSchema } },
  }).handle(async ({ em, project, params }) => {
    return {
      status: 200,
      body: eventTopicRouteView(await findEventTopicRoute(em, project.id, params.routeId)),
    };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/notification-event-topic-routes/{routeId}',
    operationId: 'deleteNotificationEventTopicRoute',
    summary: 'Delete an event-topic route',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: EventTopicRouteParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    await em.remove(await findEventTopicRoute(em, project.id, params.routeId)).flush();
    return { status: 204 };
  }),
];
