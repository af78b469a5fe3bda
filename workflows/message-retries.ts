import { sleep } from '@temporalio/workflow';
import type { SingleMessageOutcome } from '../src/delivery/single-message.js';

/** How one message's delivery ended (src/temporal/contracts: notification, subscription). */
export interface SettledMessage {
  outcome: 'delivered' | 'failed' | 'destination-disabled' | 'retries-exhausted';
  attempts: number;
  error?: string;
}

/**
 * Attempts one message until it settles, waiting between attempts as each attempt says
 * (`nextAttemptInMs`, from the delivery retry schedule) with durable timers, so even a ten-hour wait
 * survives restarts. Every workflow that delivers a single message retries through here.
 */
export async function deliverUntilSettled(
  attemptOnce: (attempt: number) => Promise<SingleMessageOutcome>,
  onRetry?: (attempt: number, delayMs: number) => void,
): Promise<SettledMessage> {
  for (let attempt = 1; ; attempt++) {
    const result = await attemptOnce(attempt);
    const error = result.error && { error: result.error };
    if (result.delivered) return { outcome: 'delivered', attempts: attempt };
    if (result.disabled) return { outcome: 'destination-disabled', attempts: attempt, ...error };
    if (!result.retryable) return { outcome: 'failed', attempts: attempt, ...error };
    if (result.nextAttemptInMs === undefined) {
      return { outcome: 'retries-exhausted', attempts: attempt, ...error };
    }
    onRetry?.(attempt, result.nextAttemptInMs);
    await sleep(result.nextAttemptInMs);
  }
}
