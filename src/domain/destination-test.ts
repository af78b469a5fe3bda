import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DestinationTestView } from '../schemas/destinations.js';
import { openForSending, sendMessage, type DeliverySettings } from './destination-delivery.js';
import { findDestination } from './destinations.js';

/** The notification type of a test message; a receiver can recognise it and do nothing. */
export const DESTINATION_TEST_TYPE = 'destination.test';

/**
 * Sends one test message to a destination now and answers what its far side said: the builder's
 * check that a URL, a queue, a bucket or a table is reachable and accepts Ferry's messages, before
 * records depend on it. It is a notification-shaped message (`{notificationType:
 * "destination.test", data}`), signed and addressed like every other, with a fresh id. It changes
 * nothing: no attempt in the ledger, no retry, no failure counted toward disabling, and a disabled
 * destination can be tested before it is enabled again.
 */
export async function sendTestMessage(
  em: EntityManager,
  projectId: string,
  destinationNameOrId: string,
  settings: DeliverySettings,
): Promise<DestinationTestView> {
  const destination = await findDestination(em, projectId, destinationNameOrId);
  const now = new Date();
  const messageId = `msg_test_${randomUUID().replaceAll('-', '')}`;
  const body = JSON.stringify({
    notificationType: DESTINATION_TEST_TYPE,
    data: {
      projectId,
      destinationId: destination.id,
      destinationName: destination.name,
      sentAt: now.toISOString(),
      message: `A test message from Ferry to destination "${destination.name}".`,
    },
  });
  const result = await sendMessage(
    openForSending(destination, now),
    { messageId, body, createdAt: now },
    settings,
  );
  return {
    messageId,
    delivered: result.ok,
    durationMs: Math.max(0, Math.round(result.durationMs)),
    ...(result.status !== undefined && { status: result.status }),
    ...(result.responseBody && { answer: result.responseBody }),
    ...(!result.ok && { error: result.error ?? 'delivery failed', retryable: result.retryable }),
  };
}
