import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotificationEventEntity, type NotificationEvent } from '../db/entities/event.js';

/** Every notification event type of the spec's Events table. */
export const eventTypes = [
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
] as const;

export type EventType = (typeof eventTypes)[number];

/**
 * Writes a notification event into the outbox with the caller's entity manager, so it commits in
 * the same transaction as the change it reports. Routing and delivery happen after the commit.
 */
export function recordEvent(
  em: EntityManager,
  projectId: string,
  type: EventType,
  data: Record<string, unknown>,
): NotificationEvent {
  const event = em.create(NotificationEventEntity, {
    id: randomUUID(),
    projectId,
    type,
    data,
    createTime: new Date(),
  });
  em.persist(event);
  return event;
}
