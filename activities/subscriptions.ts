import { config } from '../src/config.js';
import { ApplicationFailure } from '@temporalio/activity';
import {
  SubscriptionEventNotFoundError,
  attemptSubscriptionDelivery,
  finishSubscriptionEvent,
  prepareSubscriptionEvent,
  type PreparedSubscriptionEvent,
  type SubscriptionAttemptOutcome,
} from '../src/domain/subscriptions/delivery.js';

/** A change event's delivery, thin over src/domain/subscriptions/delivery. */

/** Builds the message and its subscribe operation, once. */
export async function prepareSubscriptionMessage(input: {
  subscriptionEventId: string;
}): Promise<PreparedSubscriptionEvent> {
  try {
    return await prepareSubscriptionEvent(input.subscriptionEventId);
  } catch (error) {
    // The webhook's transaction may not have committed yet: retried, and the run ends if it never does.
    if (error instanceof SubscriptionEventNotFoundError)
      throw ApplicationFailure.retryable(error.message, 'SubscriptionEventNotFound');
    throw error;
  }
}

/** One attempt; a failed HTTP delivery is a result, the workflow owns the long retries. */
export async function deliverSubscriptionAttempt(input: {
  subscriptionEventId: string;
  attempt: number;
}): Promise<SubscriptionAttemptOutcome> {
  return attemptSubscriptionDelivery(input.subscriptionEventId, input.attempt, config());
}

export async function finishSubscriptionDelivery(input: {
  subscriptionEventId: string;
  delivered: boolean;
  attempts: number;
  error?: string;
}): Promise<void> {
  await finishSubscriptionEvent(input.subscriptionEventId, input);
}
