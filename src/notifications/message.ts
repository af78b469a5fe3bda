import { buildNotification, stableMessageId, type NotificationType } from '../delivery/messages.js';
import type { NotificationEvent } from '../db/entities/event.js';

/** Every attempt of one event to one destination carries this id, so the receiver can deduplicate. */
export const notificationDeliveryMessageId = (eventId: string, destinationId: string) =>
  stableMessageId('notification', eventId, destinationId);

/** The webhook body (COMPAT.md: Notification payloads): `{notificationType, data}`. */
export function notificationBody(event: Pick<NotificationEvent, 'type' | 'data'>): string {
  return JSON.stringify(buildNotification(event.type as NotificationType, event.data));
}
