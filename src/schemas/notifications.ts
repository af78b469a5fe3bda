import Type, { type Static } from 'typebox';
import { DateTime, PaginationQuery, ProjectIdOrName, Uuid } from './common.js';

export const EventTypeSchema = Type.Enum(
  [
    'connection.created',
    'connection.error',
    'connection.refreshed',
    'connection.updated',
    'connection.deleted',
    'installation.created',
    'installation.updated',
    'installation.deleted',
    'read.schedule.paused',
    'read.backfill.done',
    'read.triggered.done',
    'read.triggered.error',
    'write.async.done',
    'subscribe.create.error',
    'subscribe.update.error',
    'subscribe.delete.error',
    'subscribe.create.success',
    'subscribe.update.success',
    'subscribe.delete.success',
    'destination.webhook.disabled',
    'destination.delivery.error',
    // Ferry's own, beside destination.webhook.disabled: the same moment for a destination of any type.
    'destination.disabled',
  ],
  { description: 'A notification event type (spec: Events).' },
);
/** Every notification event type of the spec's Events table. */
export type EventType = Static<typeof EventTypeSchema>;
export const eventTypes = EventTypeSchema.enum as readonly EventType[];

/** The spec's notification event-topic route. */
export const EventTopicRouteSchema = Type.Object({
  id: Uuid,
  eventType: Type.String(),
  topicId: Uuid,
  projectId: Uuid,
  createTime: DateTime,
  updateTime: DateTime,
});
export type EventTopicRouteView = Static<typeof EventTopicRouteSchema>;

export const CreateEventTopicRouteBody = Type.Object(
  { eventType: EventTypeSchema, topicId: Uuid },
  { additionalProperties: false },
);

export const EventTopicRouteQuery = Type.Object({
  topicId: Type.Optional(Uuid),
  eventType: Type.Optional(EventTypeSchema),
});

export const EventTopicRouteParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  routeId: Type.String({ minLength: 1, description: 'The route ID.' }),
});

export const TopicDestinationRouteSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  topicId: Uuid,
  destinationId: Uuid,
  createTime: DateTime,
  updateTime: DateTime,
});
export type TopicDestinationRouteView = Static<typeof TopicDestinationRouteSchema>;

export const CreateTopicDestinationRouteBody = Type.Object(
  { topicId: Uuid, destinationId: Uuid },
  { additionalProperties: false },
);

export const TopicDestinationRouteQuery = Type.Object({
  topicId: Type.Optional(Uuid),
  destinationId: Type.Optional(Uuid),
});

export const TopicDestinationRouteParams = EventTopicRouteParams;

/** An outbox event as the events list shows it. */
export const NotificationEventSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  eventType: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'The payload delivered as `data`.' }),
  createTime: DateTime,
  routedTime: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'When the event was matched against the routes; absent while it waits.',
    }),
  ),
});
export type NotificationEventView = Static<typeof NotificationEventSchema>;

export const EventListQuery = Type.Object({
  eventType: Type.Optional(EventTypeSchema),
  ...PaginationQuery.properties,
});

export const EventParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  eventId: Type.String({ minLength: 1, description: 'The event ID.' }),
});

export const RedeliveryResultSchema = Type.Object({
  eventId: Uuid,
  destinationIds: Type.Array(Uuid, { description: 'Destinations the event is sent to again.' }),
});
