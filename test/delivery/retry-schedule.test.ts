import {
  DEFAULT_RETRY_SCHEDULE_MS,
  MAX_RETRY_AFTER_MS,
  nextAttemptDelay,
  parseDuration,
  parseRetrySchedule,
  RetryScheduleError,
  shouldDisable,
} from '../../src/core/retry-schedule.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;

describe('retry schedule', () => {
  it("defaults to Svix's schedule: at once, 5s, 5m, 30m, 2h, 5h, 10h, 10h", () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([0, 5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 10 * h]);
  });

  it('parses FERRY_DELIVERY_RETRY_SCHEDULE with units or plain milliseconds', () => {
    expect(parseRetrySchedule('0,5s,5m,30m,2h,5h,10h,10h')).toEqual(DEFAULT_RETRY_SCHEDULE_MS);
    expect(parseRetrySchedule(' 0, 250 ,1500ms, 1.5s, 1d ')).toEqual([0, 250, 1500, 1500, 24 * h]);
    expect(parseRetrySchedule(undefined)).toBe(DEFAULT_RETRY_SCHEDULE_MS);
    expect(parseRetrySchedule('  ')).toBe(DEFAULT_RETRY_SCHEDULE_MS);
  });

  it('rejects what is not a duration, naming it', () => {
    expect(() => parseRetrySchedule('0,5s,soon')).toThrow(RetryScheduleError);
    expect(() => parseRetrySchedule('0,5s,soon')).toThrow('"soon" is not a duration');
    expect(() => parseRetrySchedule('0,,5s')).toThrow(RetryScheduleError);
    expect(() => parseDuration('-5s')).toThrow(RetryScheduleError);
  });

  it('gives the delay before the next attempt, and nothing once the schedule is used up', () => {
    expect(nextAttemptDelay(0)).toBe(0);
    expect(nextAttemptDelay(1)).toBe(5 * s);
    expect(nextAttemptDelay(2)).toBe(5 * m);
    expect(nextAttemptDelay(7)).toBe(10 * h);
    expect(nextAttemptDelay(8)).toBeUndefined();
    expect(nextAttemptDelay(2, undefined, [0, 1000, 2000])).toBe(2000);
    expect(nextAttemptDelay(3, undefined, [0, 1000, 2000])).toBeUndefined();
  });

  it("lets the receiver's Retry-After win when it asks for longer, up to a day", () => {
    expect(nextAttemptDelay(1, 60 * s)).toBe(60 * s);
    expect(nextAttemptDelay(2, 60 * s)).toBe(5 * m);
    expect(nextAttemptDelay(1, 30 * 24 * h)).toBe(MAX_RETRY_AFTER_MS);
    expect(nextAttemptDelay(8, 60 * s)).toBeUndefined();
  });
});

describe('shouldDisable', () => {
  const now = new Date('2026-03-10T00:00:00Z');
  const daysAgo = (days: number) => new Date(now.getTime() - days * 24 * h);

  it('disables a destination that answered 410 Gone at once', () => {
    expect(shouldDisable({ now, gone: true })).toBe(true);
  });

  it('disables after five days of failures without a success', () => {
    expect(shouldDisable({ firstFailureAt: daysAgo(4.9), now, gone: false })).toBe(false);
    expect(shouldDisable({ firstFailureAt: daysAgo(5), now, gone: false })).toBe(true);
    expect(shouldDisable({ now, gone: false })).toBe(false);
  });

  it('takes a configured period', () => {
    expect(shouldDisable({ firstFailureAt: daysAgo(1), now, gone: false, disableAfterMs: 12 * h })).toBe(
      true,
    );
  });
});
