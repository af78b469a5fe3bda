import Type from 'typebox';
import { defineRoute } from './route.js';
import { ProjectPathParams } from '../schemas/common.js';
import {
  CreateTopicDestinationRouteBody,
  TopicDestinationRouteParams,
  TopicDestinationRouteQuery,
  TopicDestinationRouteSchema,
} from '../schemas/notifications.js';
import { TopicDestinationRouteEntity } from '../db/entities/notification.js';
import {
  createTopicDestinationRoute,
  findTopicDestinationRoute,
  topicDestinationRouteView,
} from '../notifications/routes.js';

export const topicDestinationRouteRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/topic-destination-routes',
    operationId: 'createTopicDestinationRoute',
    summary: 'Subscribe a destination to a topic',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: CreateTopicDestinationRouteBody,
    responses: { 201: { description: 'Created', schema: TopicDestinationRouteSchema } },
  }).handle(async ({ em, project, body }) => {
    const route = await em.transactional((tx) => createTopicDestinationRoute(tx, project.id, body));
    return { status: 201, body: topicDestinationRouteView(route) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/topic-destination-routes',
    operationId: 'listTopicDestinationRoutes',
    summary: 'List topic-destination routes, optionally of one topic or one destination',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    query: TopicDestinationRouteQuery,
    responses: { 200: { description: 'Routes', schema: Type.Array(TopicDestinationRouteSchema) } },
  }).handle(async ({ em, project, query }) => {
    const routes = await em.find(
      TopicDestinationRouteEntity,
      {
        projectId: project.id,
        ...(query.topicId && { topicId: query.topicId }),
        ...(query.destinationId && { destinationId: query.destinationId }),
      },
      { orderBy: { createTime: 'asc', id: 'asc' } },
    );
    return { status: 200, body: routes.map(topicDestinationRouteView) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/topic-destination-routes/{routeId}',
    operationId: 'getTopicDestinationRoute',
    summary: 'Get a topic-destination route',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: TopicDestinationRouteParams,
    responses: { 200: { description: 'The route', schema: TopicDestinationRouteSchema } },
  }).handle(async ({ em, project, params }) => {
    return {
      status: 200,
      body: topicDestinationRouteView(await findTopicDestinationRoute(em, project.id, params.routeId)),
    };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/topic-destination-routes/{routeId}',
    operationId: 'deleteTopicDestinationRoute',
    summary: 'Unsubscribe a destination from a topic',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: TopicDestinationRouteParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    await em.remove(await findTopicDestinationRoute(em, project.id, params.routeId)).flush();
    return { status: 204 };
  }),
];
