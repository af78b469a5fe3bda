import { EntitySchema } from '@mikro-orm/core';
import { timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

/** A named channel that notification events are routed to, and that destinations subscribe to. */
export interface Topic {
  id: string;
  projectId: string;
  name: string;
  createTime: Date;
  updateTime: Date;
}

export const TopicEntity = new EntitySchema<Topic>({
  name: 'Topic',
  tableName: 'topics',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    name: { type: 'string' },
    ...timestamps,
  },
});

/** Sends every event of one type to one topic (the spec's notification event-topic route). */
export interface EventTopicRoute {
  id: string;
  projectId: string;
  eventType: string;
  topicId: string;
  createTime: Date;
  updateTime: Date;
}

export const EventTopicRouteEntity = new EntitySchema<EventTopicRoute>({
  name: 'EventTopicRoute',
  tableName: 'event_topic_routes',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    eventType: { type: 'string' },
    topicId: uuidColumn,
    ...timestamps,
  },
});

/** Subscribes one destination to one topic. */
export interface TopicDestinationRoute {
  id: string;
  projectId: string;
  topicId: string;
  destinationId: string;
  createTime: Date;
  updateTime: Date;
}

export const TopicDestinationRouteEntity = new EntitySchema<TopicDestinationRoute>({
  name: 'TopicDestinationRoute',
  tableName: 'topic_destination_routes',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    topicId: uuidColumn,
    destinationId: uuidColumn,
    ...timestamps,
  },
});
