import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotificationEventEntity, type NotificationEvent } from '../db/entities/event.js';
import type { EventType } from '../schemas/notifications.js';

/**
 * Writes a notification event into the outbox with the caller's entity manager, so it commits in
 * the same transaction as the change it reports. Routing and delivery happen after the commit.
 * A field whose value is not known (null) is left out: the public payload types have no nullable
 * field (`fromTimestamp` of a read with no start is a string or absent, never null).
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
    data: Object.fromEntries(
      Object.entries(data).filter(([, value]) => value !== null && value !== undefined),
    ),
    createTime: new Date(),
  });
  em.persist(event);
  return event;
}
