import { Cron } from 'croner';

/**
 * Five-field cron expressions (UTC by default): parsing, the next fires, and whether a schedule is
 * allowed. Pure and deterministic (time is always passed in), so workflows import it too.
 */

export const DEFAULT_TIMEZONE = 'UTC';

/** Thrown for a cron expression or time zone that cannot be scheduled. */
export class CronError extends Error {
  override readonly name = 'CronError';
}

const CRON_CACHE_LIMIT = 500;
const cronCache = new Map<string, Cron>();

/** A parsed five-field cron expression (minute precision; nicknames such as `@hourly` allowed). */
export function compileCron(cron: string, timezone: string): Cron {
  const key = `${timezone}\u0000${cron}`;
  let compiled = cronCache.get(key);
  if (!compiled) {
    try {
      compiled = new Cron(cron.trim(), { timezone, mode: '5-part' });
      compiled.nextRun(new Date(0));
    } catch (error) {
      throw new CronError(cronErrorMessage(cron, timezone, error));
    }
    if (cronCache.size >= CRON_CACHE_LIMIT) cronCache.clear();
    cronCache.set(key, compiled);
  }
  return compiled;
}

function cronErrorMessage(cron: string, timezone: string, error: unknown): string {
  const detail = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
  if (/timezone/i.test(detail)) return `"${timezone}" is not a known time zone`;
  return `"${cron}" is not a valid cron expression: ${detail}`;
}

/** The first fire strictly after `after`. Throws CronError for an invalid expression or one that never fires. */
export function nextFireTime(cron: string, after: Date, timezone = DEFAULT_TIMEZONE): Date {
  const next = compileCron(cron, timezone).nextRun(after);
  if (!next) throw new CronError(`"${cron}" never fires`);
  return next;
}

/** The next `count` fires strictly after `after` (fewer if the expression stops firing). */
export function upcomingFireTimes(
  cron: string,
  after: Date,
  count: number,
  timezone = DEFAULT_TIMEZONE,
): Date[] {
  return compileCron(cron, timezone).nextRuns(count, after);
}

export interface CronValidationOptions {
  /** The shortest gap allowed between two fires (FERRY_MIN_SCHEDULE_INTERVAL_SECONDS). */
  minIntervalSeconds: number;
  timezone?: string;
  /**
   * Where the fires are sampled from. A fixed default keeps validation independent of the day it runs;
   * pass workflow time to check the fires that will actually happen.
   */
  from?: Date;
}

export type CronValidation = { ok: true } | { ok: false; reason: string };

const VALIDATION_FROM = new Date(Date.UTC(2026, 0, 1));
const MIN_SAMPLES = 50;
const MAX_SAMPLES = 3000;
const SAMPLE_SPAN_MS = 2 * 24 * 60 * 60 * 1000;

/**
 * Accepts a cron expression that parses, fires at all, and never fires twice within
 * `minIntervalSeconds`. The gap check walks the coming fires until they cover two days (and at least
 * MIN_SAMPLES fires), which shows every gap a five-field expression can produce: within an hour,
 * across hours and across days.
 */
export function validateCron(cron: string, options: CronValidationOptions): CronValidation {
  const timezone = options.timezone ?? DEFAULT_TIMEZONE;
  let compiled: Cron;
  try {
    compiled = compileCron(cron, timezone);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const from = options.from ?? VALIDATION_FROM;
  let previous = compiled.nextRun(from);
  if (!previous) return { ok: false, reason: `"${cron}" never fires` };
  // Fires are whole minutes apart: a minimum of a minute or less holds for every expression, and
  // walking two days of `* * * * *` (2,880 fires) would cost some 30 ms for nothing.
  if (options.minIntervalSeconds <= 60) return { ok: true };
  const minGapMs = options.minIntervalSeconds * 1000;
  // Walking fires costs about 40 µs each: two days of `*/5` is 20 ms, a request's 50 schedules a second.
  if (timezone === DEFAULT_TIMEZONE && firesKeepApart(compiled, previous, minGapMs)) return { ok: true };
  const first = previous.getTime();
  for (let sample = 1; sample < MAX_SAMPLES; sample++) {
    const next = compiled.nextRun(previous);
    if (!next) break;
    const gapMs = next.getTime() - previous.getTime();
    if (gapMs < minGapMs) {
      return {
        ok: false,
        reason: `"${cron}" fires ${gapMs / 1000} s apart (at ${previous.toISOString()} and ${next.toISOString()}); the minimum interval is ${options.minIntervalSeconds} s`,
      };
    }
    if (sample >= MIN_SAMPLES && next.getTime() - first >= SAMPLE_SPAN_MS) break;
    previous = next;
  }
  return { ok: true };
}

/**
 * Whether a UTC schedule's fires are never closer than `minGapMs`, decided from its minutes and hours
 * alone (84 matches against the day of its first fire). On every day it fires, a five-field
 * expression fires at each of its hours at each of its minutes, so the closest two fires are two of
 * its minutes, the last minute of one of its hours and the first of the next, or the last fire of a
 * day and the first of the day after (assumed to fire too). False when that is too close: the walk
 * then decides, and says where.
 */
function firesKeepApart(compiled: Cron, first: Date, minGapMs: number): boolean {
  const at = (hour: number, minute: number) =>
    new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate(), hour, minute));
  const minutes = [...Array(60).keys()].filter((minute) => compiled.match(at(first.getUTCHours(), minute)));
  const hours = [...Array(24).keys()].filter((hour) => compiled.match(at(hour, first.getUTCMinutes())));
  const closest = (values: number[]) =>
    Math.min(...values.slice(1).map((value, index) => value - values[index]));
  const [firstMinute, lastMinute] = [minutes[0], minutes[minutes.length - 1]];
  const [firstHour, lastHour] = [hours[0], hours[hours.length - 1]];
  const gapMinutes = Math.min(
    closest(minutes),
    closest(hours) * 60 - (lastMinute - firstMinute),
    24 * 60 - (lastHour * 60 + lastMinute) + (firstHour * 60 + firstMinute),
  );
  return gapMinutes * 60_000 >= minGapMs;
}

/** A cron expression with its fields one space apart: spelled differently, the same schedule. */
export function normalizedSchedule(schedule: string): string {
  return schedule.trim().split(/\s+/).join(' ');
}

const checked = new Map<string, CronValidation>();
const CHECKED_LIMIT = 1000;

/**
 * `validateCron` for a schedule checked again and again (every installation of an integration
 * repeats the same few expressions): the verdicts are remembered.
 */
export function checkSchedule(schedule: string, minIntervalSeconds: number): CronValidation {
  // Spaced differently, the same expression: one verdict (else each spelling costs a whole check).
  const key = `${minIntervalSeconds}\u0000${normalizedSchedule(schedule)}`;
  let verdict = checked.get(key);
  if (!verdict) {
    verdict = validateCron(schedule, { minIntervalSeconds });
    if (checked.size >= CHECKED_LIMIT) checked.clear();
    checked.set(key, verdict);
  }
  return verdict;
}
