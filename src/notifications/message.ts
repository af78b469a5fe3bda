import { buildNotification, stableMessageId, type NotificationType } from '../delivery/messages.js';
import type { NotificationEvent } from '../db/entities/event.js';
import type { WorkflowIdentity } from '../temporal/gateway.js';

/** Every attempt of one event to one destination carries this id, so the receiver can deduplicate. */
export const notificationDeliveryMessageId = (eventId: string, destinationId: string) =>
  stableMessageId('notification', eventId, destinationId);

/** The webhook body (COMPAT.md: Notification payloads): `{notificationType, data}`. */
export function notificationBody(event: Pick<NotificationEvent, 'type' | 'data'>): string {
  return JSON.stringify(buildNotification(event.type as NotificationType, event.data));
}

/** Whom an event concerns, from the fields installation and connection events carry, for the Temporal UI. */
export function eventIdentity(projectId: string, data: Record<string, unknown>): WorkflowIdentity {
  const identity: WorkflowIdentity = { projectId };
  for (const key of ['integrationId', 'installationId', 'provider', 'groupRef'] as const) {
    const value = data[key];
    if (typeof value === 'string' && value !== '') identity[key] = value;
  }
  return identity;
}
