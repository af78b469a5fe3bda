import { nextAttemptDelay } from '../core/retry-schedule.js';
import type { DeliveryResult } from './deliver.js';

/**
 * One attempt of one message to one destination, for every single message Ferry sends (notification
 * events, change events, schema-watch messages, stored pages sent on request): the durability
 * promises in one order, whichever caller. The ledger row is written before the message leaves, so
 * an attempt whose process dies mid-send stays behind as pending; a failure is recorded with the
 * destination's health (disabled on 410 or after failing for too long); the next attempt's delay
 * comes from the retry schedule handed in. Callers wait that delay durably (Temporal timers).
 */

export interface SingleMessageResult {
  delivered: boolean;
  /** Another attempt later may succeed (timeout, network, 408, 429, 5xx). */
  retryable: boolean;
  /** The receiver's Retry-After, in milliseconds. */
  retryAfterMs?: number;
  /** The destination is disabled (before this attempt, or because of it): nothing more will be sent. */
  disabled: boolean;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why the attempt failed; never holds secrets, header values or query strings. */
  error?: string;
}

export interface SingleMessageOutcome extends SingleMessageResult {
  /** When to try again (the retry schedule, or the receiver's longer Retry-After); absent when none is due. */
  nextAttemptInMs?: number;
}

/** The destination's records, as the domain keeps them (domain/destination-delivery.ts). */
export interface DestinationLedger<Open> {
  /** The destination ready to send to, or why nothing may be sent (gone, disabled). */
  open(time: Date): Promise<{ open: Open } | { refused: SingleMessageResult }>;
  /** Records the attempt `pending` before it is sent; answers its ledger row. */
  begin(time: Date): Promise<string>;
  send(open: Open): Promise<DeliveryResult>;
  /** Completes the attempt as delivered; a destination that was failing is healthy again. */
  delivered(open: Open, result: DeliveryResult, time: Date, ledgerId: string): Promise<void>;
  /** Completes the attempt as failed, with its event, disabling the destination when it is time. */
  failed(result: DeliveryResult, time: Date, ledgerId: string): Promise<SingleMessageResult>;
}

export interface SingleMessageAttempt {
  /** 1 for the first attempt; absent when the caller does not retry (no next attempt is planned). */
  attempt?: number;
  retryScheduleMs: readonly number[];
  time: Date;
}

export async function deliverSingleMessage<Open>(
  ledger: DestinationLedger<Open>,
  { attempt, retryScheduleMs, time }: SingleMessageAttempt,
): Promise<SingleMessageOutcome> {
  const opened = await ledger.open(time);
  if ('refused' in opened) return opened.refused;
  const ledgerId = await ledger.begin(time);
  const result = await ledger.send(opened.open);
  if (result.ok) {
    await ledger.delivered(opened.open, result, time, ledgerId);
    return { delivered: true, retryable: false, disabled: false, status: result.status };
  }
  const failed = await ledger.failed(result, time, ledgerId);
  if (attempt === undefined || !failed.retryable) return failed;
  const nextAttemptInMs = nextAttemptDelay(attempt, failed.retryAfterMs, retryScheduleMs);
  return { ...failed, ...(nextAttemptInMs !== undefined && { nextAttemptInMs }) };
}
