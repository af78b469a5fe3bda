import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { DeliveryAttemptEntity } from '../db/entities/delivery.js';
import { NotificationEventEntity } from '../db/entities/event.js';
import type { Destination } from '../db/entities/operation.js';
import { SchemaWatchMessageEntity } from '../db/entities/schema-watch.js';
import { SubscriptionEventEntity } from '../db/entities/subscription-event.js';
import { stableMessageId } from '../delivery/messages.js';
import { notificationBody, notificationDeliveryMessageId } from '../notifications/message.js';

export interface DeliveredMessage {
  messageId: string;
  kind: 'notification' | 'subscribe' | 'schema.watch';
  operationId?: string;
  body: string;
}

/**
 * The exact message an attempt carried, for the messages whose bytes Ferry keeps until retention:
 * notifications (their event), subscribe events and schema-watch messages (built once, stored). A
 * read's pages are not kept once delivered (they are the customer's records; replaying the operation
 * reads them again), so their attempts answer 404 saying so.
 */
export async function deliveredMessage(
  em: EntityManager,
  destination: Destination,
  attemptId: string,
  /** How long after its event a notification may still be retried (the retry schedule's total). */
  retryWindowMs: number,
): Promise<DeliveredMessage> {
  const attempt = await em.findOne(DeliveryAttemptEntity, {
    id: attemptId,
    projectId: destination.projectId,
    destinationId: destination.id,
  });
  if (!attempt) throw ProblemError.notFound(`Destination "${destination.name}" has no attempt ${attemptId}.`);
  const found = (kind: DeliveredMessage['kind'], body: string): DeliveredMessage => ({
    messageId: attempt.messageId,
    kind,
    ...(attempt.operationId && { operationId: attempt.operationId }),
    body,
  });
  if (attempt.kind === 'notification') {
    // The id is derived from the event's, one way: look among the events that could still be retried then.
    const events = await em.find(
      NotificationEventEntity,
      {
        projectId: destination.projectId,
        createTime: {
          $lte: attempt.createTime,
          $gte: new Date(attempt.createTime.getTime() - retryWindowMs),
        },
      },
      { orderBy: { createTime: 'desc' }, limit: 10_000 },
    );
    const event = events.find(
      (candidate) => notificationDeliveryMessageId(candidate.id, destination.id) === attempt.messageId,
    );
    if (event) return found('notification', notificationBody(event));
  } else if (attempt.operationId) {
    const subscribed = await em.find(SubscriptionEventEntity, { operationId: attempt.operationId });
    const event = subscribed.find(
      (row) => row.message && stableMessageId('subscribe', row.id) === attempt.messageId,
    );
    if (event?.message) return found('subscribe', event.message);
    const watched = await em.find(SchemaWatchMessageEntity, { operationId: attempt.operationId });
    const watch = watched.find((row) => stableMessageId('schema.watch', row.id) === attempt.messageId);
    if (watch) return found('schema.watch', watch.message);
  }
  throw ProblemError.notFound(
    attempt.kind === 'notification'
      ? `The event of message ${attempt.messageId} is no longer kept.`
      : `Ferry does not keep the records of a read's delivered pages; replay operation ${attempt.operationId ?? ''} to send them again.`,
  );
}
