/**
 * When a failed delivery is tried again, and when a destination that keeps failing is disabled.
 * Pure arithmetic with no Node APIs, so a workflow may import it for its durable sleeps.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Delay before each attempt, the first included (Svix's schedule): attempt 1 at once, then after
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, about 27.6 hours in all.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
]);

/** A destination failing without a single success for this long is disabled. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * DAY;

/** A receiver's Retry-After is honoured up to this long, so no receiver can park a message for weeks. */
export const MAX_RETRY_AFTER_MS = DAY;

const UNIT_MS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY };

export class RetryScheduleError extends Error {
  override readonly name = 'RetryScheduleError';
}

/** `"5m"` → 300000; `"1500"` and `"1500ms"` → 1500. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/i.exec(text.trim());
  if (!match)
    throw new RetryScheduleError(`"${text}" is not a duration such as 0, 5s, 5m, 2h, 1d or 1500 (ms)`);
  return Math.round(Number(match[1]) * UNIT_MS[(match[2] ?? 'ms').toLowerCase()]);
}

/**
 * Parses `FERRY_DELIVERY_RETRY_SCHEDULE`: comma-separated delays before each attempt, the first one
 * included, e.g. `"0,5s,5m,30m,2h,5h,10h,10h"`. Empty or absent gives the default.
 */
export function parseRetrySchedule(text: string | undefined): readonly number[] {
  if (text === undefined || !text.trim()) return DEFAULT_RETRY_SCHEDULE_MS;
  const delays = text.split(',').map((part) => parseDuration(part));
  return Object.freeze(delays);
}

/**
 * How long to wait before the next attempt after `attemptsMade` attempts failed, or undefined when the
 * schedule is exhausted. A receiver's Retry-After wins when it asks for longer (capped at a day).
 */
export function nextAttemptDelay(
  attemptsMade: number,
  retryAfterMs?: number,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_MS,
): number | undefined {
  if (attemptsMade >= schedule.length) return undefined;
  const planned = schedule[Math.max(attemptsMade, 0)];
  const asked = retryAfterMs === undefined ? 0 : Math.min(Math.max(retryAfterMs, 0), MAX_RETRY_AFTER_MS);
  return Math.max(planned, asked);
}

export interface DisableCheck {
  /** When the destination's current run of failures began; undefined while it is healthy. */
  firstFailureAt?: Date;
  now: Date;
  disableAfterMs?: number;
  /** The receiver answered 410 Gone: it asked to receive nothing more. */
  gone: boolean;
}

/** Whether a destination should be disabled: it answered 410, or has failed without success for too long. */
export function shouldDisable({
  firstFailureAt,
  now,
  disableAfterMs = DEFAULT_DISABLE_AFTER_MS,
  gone,
}: DisableCheck): boolean {
  if (gone) return true;
  if (!firstFailureAt) return false;
  return now.getTime() - firstFailureAt.getTime() >= disableAfterMs;
}
