import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../core/ids.js';
import { ProblemError } from '../core/problem.js';
import { DeliveryAttemptEntity } from '../db/entities/delivery.js';
import { NotificationEventEntity } from '../db/entities/event.js';
import { startNotificationDelivery } from '../temporal/gateway.js';
import { eventIdentity, notificationDeliveryMessageId } from './message.js';
import { destinationsForEvent } from './routing.js';

/**
 * Sends a notification event again to every destination its routes lead to that has not accepted
 * it: a new delivery workflow per destination, under the same message id, so a receiver that did
 * get it after all deduplicates. Destinations that accepted it are left alone.
 */
export async function redeliverEvent(
  em: EntityManager,
  projectId: string,
  eventId: string,
): Promise<{ eventId: string; destinationIds: string[] }> {
  const event = isUuid(eventId)
    ? await em.findOne(NotificationEventEntity, { id: eventId, projectId })
    : null;
  if (!event) throw ProblemError.notFound(`Event ${eventId} was not found.`);
  const routed = await destinationsForEvent(em, {
    id: event.id,
    projectId,
    type: event.type,
    ...(typeof event.data.destinationId === 'string' && { subjectDestinationId: event.data.destinationId }),
  });
  const pending: string[] = [];
  for (const destinationId of routed) {
    const messageId = notificationDeliveryMessageId(eventId, destinationId);
    if (!(await em.count(DeliveryAttemptEntity, { projectId, destinationId, messageId, delivered: true }))) {
      pending.push(destinationId);
    }
  }
  const retry = `retry-${Date.now()}`;
  for (const destinationId of pending) {
    await startNotificationDelivery(
      { eventId, destinationId, projectId },
      { eventType: event.type, workflowIdSuffix: retry, identity: eventIdentity(projectId, event.data) },
    );
  }
  return { eventId, destinationIds: pending };
}
