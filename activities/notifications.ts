import { em } from '../src/db/orm.js';
import { NotificationEventEntity } from '../src/db/entities/event.js';
import { config } from '../src/config.js';
import { attemptDelivery } from '../src/domain/destination-delivery.js';
import type { SingleMessageOutcome } from '../src/delivery/single-message.js';
import { notificationBody, notificationDeliveryMessageId } from '../src/notifications/message.js';

export interface NotificationAttemptInput {
  eventId: string;
  destinationId: string;
  projectId: string;
  /** 1 for the first attempt. */
  attempt: number;
}

export type NotificationAttemptOutcome = SingleMessageOutcome;

/**
 * One attempt to deliver one notification event to one destination. A failed HTTP delivery is a
 * result, not an error: the workflow owns the long retries, so they survive restarts as timers.
 */
export async function deliverNotificationAttempt(
  input: NotificationAttemptInput,
): Promise<NotificationAttemptOutcome> {
  const event = await (
    await em()
  ).findOne(NotificationEventEntity, { id: input.eventId, projectId: input.projectId });
  if (!event)
    return { delivered: false, retryable: false, disabled: false, error: 'the event no longer exists' };
  return attemptDelivery(
    {
      projectId: input.projectId,
      destinationId: input.destinationId,
      messageId: notificationDeliveryMessageId(input.eventId, input.destinationId),
      body: notificationBody(event),
      kind: 'notification',
      createdAt: event.createTime,
    },
    config(),
    { attempt: input.attempt },
  );
}
