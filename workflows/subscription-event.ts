import { log, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/subscriptions.js';
import type {
  SubscriptionEventInput,
  SubscriptionEventResult,
} from '../src/temporal/contracts/subscription.js';
import { deliverUntilSettled } from './message-retries.js';

const { prepareSubscriptionMessage } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '20 seconds',
  // The webhook's row appears within milliseconds of the start; one that never commits ends the run.
  scheduleToCloseTimeout: '5 minutes',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

// HTTP failures come back as results; these retries only cover the activity itself failing.
const { deliverSubscriptionAttempt, finishSubscriptionDelivery } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 20 },
});

/**
 * Delivers one change event a provider sent (workflow id `subscription-event/<id>`): build its
 * message and subscribe operation, then attempt on the delivery retry schedule with durable timers,
 * as reads and notifications do; end the operation with the outcome.
 */
export async function deliverSubscriptionEventWorkflow(
  input: SubscriptionEventInput,
): Promise<SubscriptionEventResult> {
  const { subscriptionEventId } = input;
  const prepared = await prepareSubscriptionMessage({ subscriptionEventId });
  if (!prepared.operationId) {
    log.info('change event not delivered', { subscriptionEventId, reason: prepared.skippedReason });
    return {
      outcome: 'skipped',
      attempts: 0,
      ...(prepared.skippedReason && { error: prepared.skippedReason }),
    };
  }
  const settled = await deliverUntilSettled((attempt) =>
    deliverSubscriptionAttempt({ subscriptionEventId, attempt }),
  );
  await finishSubscriptionDelivery({
    subscriptionEventId,
    delivered: settled.outcome === 'delivered',
    attempts: settled.attempts,
    ...(settled.error && { error: settled.error }),
  });
  return { ...settled, operationId: prepared.operationId };
}
