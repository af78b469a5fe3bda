import { log, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/notifications.js';
import type {
  NotificationDeliveryInput,
  NotificationDeliveryResult,
} from '../src/temporal/contracts/notification.js';
import { deliverUntilSettled } from './message-retries.js';

// HTTP failures come back as results; these retries only cover the activity itself failing (database down, worker lost).
const { deliverNotificationAttempt } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 20 },
});

/**
 * Delivers one notification event to one destination (workflow id `notification/<eventId>/<destinationId>`):
 * attempt, and on a retryable failure wait out the retry schedule with a durable timer, so even a
 * ten-hour wait survives restarts. Stops once delivered, on a failure no retry can fix, or when the
 * destination is disabled.
 */
export async function deliverNotificationWorkflow(
  input: NotificationDeliveryInput,
): Promise<NotificationDeliveryResult> {
  return deliverUntilSettled(
    (attempt) => deliverNotificationAttempt({ ...input, attempt }),
    (attempt, delayMs) => log.info('notification delivery failed; retrying', { attempt, delayMs }),
  );
}
