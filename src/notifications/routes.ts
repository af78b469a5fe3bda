import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { isUuid } from '../core/ids.js';
import { DestinationEntity } from '../db/entities/operation.js';
import {
  EventTopicRouteEntity,
  TopicDestinationRouteEntity,
  type EventTopicRoute,
  type TopicDestinationRoute,
} from '../db/entities/notification.js';
import { findTopic } from '../domain/topics.js';
import type { EventTopicRouteView, TopicDestinationRouteView, EventType } from '../schemas/notifications.js';

/**
 * The two hops of notification routing: an event type goes to topics (event-topic routes) and a
 * topic goes to destinations (topic-destination routes).
 */

export function eventTopicRouteView(route: EventTopicRoute): EventTopicRouteView {
  return {
    id: route.id,
    eventType: route.eventType,
    topicId: route.topicId,
    projectId: route.projectId,
    createTime: route.createTime.toISOString(),
    updateTime: route.updateTime.toISOString(),
  };
}

export function topicDestinationRouteView(route: TopicDestinationRoute): TopicDestinationRouteView {
  return {
    id: route.id,
    projectId: route.projectId,
    topicId: route.topicId,
    destinationId: route.destinationId,
    createTime: route.createTime.toISOString(),
    updateTime: route.updateTime.toISOString(),
  };
}

async function flushRoute(em: EntityManager, conflict: () => ProblemError): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw conflict();
    throw error;
  }
}

export async function createEventTopicRoute(
  em: EntityManager,
  projectId: string,
  input: { eventType: EventType; topicId: string },
): Promise<EventTopicRoute> {
  await findTopic(em, projectId, input.topicId);
  const conflict = () =>
    ProblemError.conflict(
      `Events of type "${input.eventType}" are already routed to topic "${input.topicId}".`,
    );
  if (await em.count(EventTopicRouteEntity, { projectId, ...input })) throw conflict();
  const route = em.create(EventTopicRouteEntity, {
    id: randomUUID(),
    projectId,
    eventType: input.eventType,
    topicId: input.topicId,
    createTime: new Date(),
    updateTime: new Date(),
  });
  await flushRoute(em, conflict);
  return route;
}

export async function findEventTopicRoute(
  em: EntityManager,
  projectId: string,
  routeId: string,
): Promise<EventTopicRoute> {
  const route = isUuid(routeId) ? await em.findOne(EventTopicRouteEntity, { id: routeId, projectId }) : null;
  if (!route) throw ProblemError.notFound(`Notification event-topic route "${routeId}" was not found.`);
  return route;
}

export async function createTopicDestinationRoute(
  em: EntityManager,
  projectId: string,
  input: { topicId: string; destinationId: string },
): Promise<TopicDestinationRoute> {
  await findTopic(em, projectId, input.topicId);
  if (!(await em.count(DestinationEntity, { id: input.destinationId, projectId }))) {
    throw ProblemError.notFound(`Destination "${input.destinationId}" was not found in this project.`);
  }
  const conflict = () =>
    ProblemError.conflict(
      `Destination "${input.destinationId}" is already subscribed to topic "${input.topicId}".`,
    );
  if (await em.count(TopicDestinationRouteEntity, { projectId, ...input })) throw conflict();
  const route = em.create(TopicDestinationRouteEntity, {
    id: randomUUID(),
    projectId,
    topicId: input.topicId,
    destinationId: input.destinationId,
    createTime: new Date(),
    updateTime: new Date(),
  });
  await flushRoute(em, conflict);
  return route;
}

export async function findTopicDestinationRoute(
  em: EntityManager,
  projectId: string,
  routeId: string,
): Promise<TopicDestinationRoute> {
  const route = isUuid(routeId)
    ? await em.findOne(TopicDestinationRouteEntity, { id: routeId, projectId })
    : null;
  if (!route) throw ProblemError.notFound(`Topic-destination route "${routeId}" was not found.`);
  return route;
}
