import { DEFAULT_TIMEZONE, compileCron } from '../src/core/cron.js';
import type { ReadType } from '../src/schemas/reads.js';

/**
 * The installation workflow's scheduling arithmetic: when each object's read fires, which reads are
 * due, and what waits for what. Pure and deterministic: time is always passed in (workflow time),
 * nothing here reads a clock, and the whole state is plain JSON for continue-as-new.
 *
 * Rules:
 * - Two reads of one object never overlap: a run that becomes due while the object is running waits
 *   until that run finishes.
 * - Missed fires collapse into one: an object has at most one pending scheduled fire.
 * - After a scheduled read or a backfill finishes, the next fire is planned from the finish time, so
 *   a read that overran its interval is not followed by an immediate catch-up read.
 * - A new object with a backfill runs the backfill at once; a failed backfill is retried at the next
 *   fire, and a triggered read on an object still needing its backfill runs after the backfill.
 * - A paused object starts nothing (triggered reads wait in its queue); resuming plans the next fire
 *   from the resume time rather than replaying the fires missed while paused.
 * - With a spread, every fire of the installation comes a fixed offset after its cron time (see
 *   ScheduleSpread), so that a thousand installations on one schedule do not all fire in one second.
 */

/**
 * Spreads an installation's fires over a window after each cron time, the way Temporal Schedules'
 * jitter does, but fixed rather than random: the offset is `fraction` of the window, and `fraction`
 * comes from the installation's id, so each installation keeps its own second within the window
 * from one fire to the next and the load of many installations on one schedule is even. The window
 * is `maxMs`, but never more than the time to the following cron time: a fraction below 1 keeps each
 * fire before the next cron time, so fires stay in order. A whole gap is allowed (rather than half
 * of it) because the load is what the spread is for: 10,000 installations on `*\/15` fire half as
 * many reads a second over 15 minutes as over 7.5.
 */
export interface ScheduleSpread {
  maxMs: number;
  /** In [0, 1). */
  fraction: number;
}

export const NO_SPREAD: ScheduleSpread = { maxMs: 0, fraction: 0 };

/** A stable, evenly distributed fraction in [0, 1) for a key: the same in every run and on replay. */
export function spreadFraction(key: string): number {
  // 32-bit FNV-1a, then MurmurHash3's finalizer so that keys differing in one character spread apart.
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) {
    hash ^= key.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) / 2 ** 32;
}

/**
 * The first planned fire strictly after `after`: a cron time plus its spread offset. Undefined when
 * the expression never fires again.
 */
export function nextSpreadFireTime(
  cron: string,
  after: Date,
  spread: ScheduleSpread,
  timezone = DEFAULT_TIMEZONE,
): Date | undefined {
  const compiled = compileCron(cron, timezone);
  if (spread.maxMs <= 0) return compiled.nextRun(after) ?? undefined;
  // A cron time up to maxMs before `after` may still have its offset fire ahead.
  let tick = compiled.nextRun(new Date(after.getTime() - spread.maxMs));
  while (tick) {
    const following = compiled.nextRun(tick);
    const windowMs = following ? Math.min(spread.maxMs, following.getTime() - tick.getTime()) : spread.maxMs;
    const fire = tick.getTime() + Math.floor(spread.fraction * windowMs);
    if (fire > after.getTime()) return new Date(fire);
    tick = following;
  }
  return undefined;
}

/**
 * A read someone asked for, waiting its turn: a triggered read (the read host's trigger endpoint; its
 * operation id is already known to the client), an operator's backfill with a window, or a retry.
 */
export interface TriggeredRun {
  operationId?: string;
  /** ISO 8601. */
  requestedAt: string;
  sinceTimestamp?: string;
  untilTimestamp?: string;
  /** What kind of read it is; `triggered` when absent. */
  readType?: ReadType;
  /** The failed operation this run retries. */
  retryOf?: string;
}

export interface ActiveRun {
  kind: ReadType;
  /** ISO 8601. */
  startedAt: string;
  operationId?: string;
  /** It came from the queue of asked-for reads, not from the schedule or the object's own backfill. */
  queued?: boolean;
}

export interface FinishedRun extends ActiveRun {
  /** ISO 8601. */
  finishedAt: string;
  succeeded: boolean;
}

/** One object's schedule, as kept in the workflow and shown by its query. Plain JSON. */
export interface ObjectSchedule {
  objectName: string;
  cron: string;
  timezone: string;
  paused: boolean;
  running?: ActiveRun;
  /** The pending scheduled fire (ISO 8601); absent while paused or when the expression never fires again. */
  nextFireAt?: string;
  needsBackfill: boolean;
  /** Triggered reads waiting their turn, oldest first. */
  triggered: TriggeredRun[];
  lastRun?: FinishedRun;
}

export interface ScheduleBookState {
  version: 1;
  objects: ObjectSchedule[];
}

/** One object's wanted schedule, from the installation's config. */
export interface ObjectScheduleConfig {
  objectName: string;
  cron: string;
  timezone?: string;
  /** The object starts with a backfill when it is first scheduled. */
  backfill: boolean;
}

/** A read to start now. */
export interface DueRun {
  objectName: string;
  kind: ReadType;
  /** When it became due (ISO 8601): the fire time, or the time a triggered read was requested. */
  dueAt: string;
  operationId?: string;
  sinceTimestamp?: string;
  untilTimestamp?: string;
  /** Taken from the queue of asked-for reads. */
  queued?: boolean;
  retryOf?: string;
}

export interface ConfigureResult {
  added: string[];
  changed: string[];
  removed: string[];
}

/** The per-object schedules of one installation. */
export class ScheduleBook {
  readonly #objects = new Map<string, ObjectSchedule>();
  readonly #spread: ScheduleSpread;

  /** The spread is not part of the state: it comes with every run (changing it replans at the next fire). */
  constructor(state?: ScheduleBookState, spread: ScheduleSpread = NO_SPREAD) {
    this.#spread = spread;
    for (const object of state?.objects ?? []) this.#objects.set(object.objectName, structuredCopy(object));
  }

  static fromJSON(state: ScheduleBookState, spread: ScheduleSpread = NO_SPREAD): ScheduleBook {
    if (state.version !== 1) throw new Error(`unknown schedule state version ${String(state.version)}`);
    return new ScheduleBook(state, spread);
  }

  toJSON(): ScheduleBookState {
    return { version: 1, objects: this.objects() };
  }

  /** Copies of every object's schedule, in configuration order. */
  objects(): ObjectSchedule[] {
    return [...this.#objects.values()].map(structuredCopy);
  }

  get(objectName: string): ObjectSchedule | undefined {
    const object = this.#objects.get(objectName);
    return object && structuredCopy(object);
  }

  /**
   * Applies the installation's whole read config: adds new objects (a backfill first if configured),
   * replans objects whose cron or time zone changed, and drops objects no longer configured. A
   * dropped object's running read is the caller's to cancel or let finish; its finish is ignored.
   * Throws CronError, changing nothing, when any expression is invalid.
   */
  configure(configs: readonly ObjectScheduleConfig[], now: Date): ConfigureResult {
    for (const config of configs) compileCron(config.cron, config.timezone ?? DEFAULT_TIMEZONE);
    const result: ConfigureResult = { added: [], changed: [], removed: [] };
    const wanted = new Set(configs.map((config) => config.objectName));
    for (const name of [...this.#objects.keys()]) {
      if (!wanted.has(name)) {
        this.#objects.delete(name);
        result.removed.push(name);
      }
    }
    for (const config of configs) {
      const timezone = config.timezone ?? DEFAULT_TIMEZONE;
      const existing = this.#objects.get(config.objectName);
      if (!existing) {
        const object: ObjectSchedule = {
          objectName: config.objectName,
          cron: config.cron,
          timezone,
          paused: false,
          needsBackfill: config.backfill,
          triggered: [],
        };
        object.nextFireAt = config.backfill ? now.toISOString() : this.#planFrom(object, now);
        this.#objects.set(config.objectName, object);
        result.added.push(config.objectName);
      } else if (existing.cron !== config.cron || existing.timezone !== timezone) {
        existing.cron = config.cron;
        existing.timezone = timezone;
        // A fire already due stays due (it may be waiting for a running read); otherwise replan.
        if (!isDue(existing, now)) existing.nextFireAt = this.#planFrom(existing, now);
        result.changed.push(config.objectName);
      }
    }
    return result;
  }

  /** Pauses the named objects (all when none are named); a read in progress finishes. Returns those that changed. */
  pause(objectNames?: readonly string[]): string[] {
    const changed: string[] = [];
    for (const object of this.#select(objectNames)) {
      if (object.paused) continue;
      object.paused = true;
      delete object.nextFireAt;
      changed.push(object.objectName);
    }
    return changed;
  }

  /** Resumes the named objects (all when none are named), planning from `now`. Returns those that changed. */
  resume(objectNames: readonly string[] | undefined, now: Date): string[] {
    const changed: string[] = [];
    for (const object of this.#select(objectNames)) {
      if (!object.paused) continue;
      object.paused = false;
      object.nextFireAt = object.needsBackfill ? now.toISOString() : this.#planFrom(object, now);
      changed.push(object.objectName);
    }
    return changed;
  }

  /** Queues a triggered read. An object still needing its backfill gets the backfill first. */
  trigger(objectName: string, run: Omit<TriggeredRun, 'requestedAt'>, now: Date): void {
    const object = this.#require(objectName);
    object.triggered.push({ ...run, requestedAt: now.toISOString() });
    if (object.needsBackfill && !object.paused && !isDue(object, now)) object.nextFireAt = now.toISOString();
  }

  /**
   * Asks for a (new) backfill of an object: it runs as soon as the object is free and unpaused,
   * before queued triggered reads; the regular schedule resumes after it.
   */
  requestBackfill(objectName: string, now: Date): void {
    const object = this.#require(objectName);
    object.needsBackfill = true;
    if (!object.paused && !isDue(object, now)) object.nextFireAt = now.toISOString();
  }

  /** The reads that may start at `now`, without starting them: at most one per object, earliest first. */
  dueRuns(now: Date): DueRun[] {
    const runs: DueRun[] = [];
    for (const object of this.#objects.values()) {
      const run = nextRunOf(object, now);
      if (run) runs.push(run);
    }
    // ISO 8601 strings of one format sort as text; no locale may decide a workflow's order.
    return runs.sort((left, right) => (left.dueAt < right.dueAt ? -1 : left.dueAt > right.dueAt ? 1 : 0));
  }

  /** The reads due at `now`, marked as running. The caller starts each one and calls `finish` when it ends. */
  takeDueRuns(now: Date): DueRun[] {
    const runs = this.dueRuns(now);
    for (const run of runs) this.#start(run, now);
    return runs;
  }

  /**
   * Records the end of an object's read. A scheduled read or backfill replans the next fire from
   * `now`; after a triggered read a fire that came due meanwhile runs next. A successful backfill
   * clears `needsBackfill`. Finishing an object that is gone or not running does nothing.
   */
  finish(objectName: string, now: Date, outcome: { succeeded: boolean }): void {
    const object = this.#objects.get(objectName);
    if (!object?.running) return;
    const run = object.running;
    delete object.running;
    object.lastRun = { ...run, finishedAt: now.toISOString(), succeeded: outcome.succeeded };
    // An asked-for read leaves the schedule and the object's own backfill as they were.
    if (run.queued || run.kind === 'triggered') return;
    if (run.kind === 'backfill' && outcome.succeeded) object.needsBackfill = false;
    object.nextFireAt = this.#planFrom(object, now);
  }

  /** The earliest time something becomes due, for the workflow's single timer; undefined when nothing is planned. */
  nextWakeAt(now: Date): Date | undefined {
    let earliest: number | undefined;
    for (const object of this.#objects.values()) {
      if (object.paused || object.running) continue;
      const times = [object.nextFireAt, object.triggered[0] && now.toISOString()].filter(Boolean) as string[];
      for (const time of times) {
        const ms = Date.parse(time);
        if (earliest === undefined || ms < earliest) earliest = ms;
      }
    }
    return earliest === undefined ? undefined : new Date(earliest);
  }

  /** Milliseconds from `now` to `nextWakeAt` (0 when something is already due), or undefined. */
  msUntilNextWake(now: Date): number | undefined {
    const wake = this.nextWakeAt(now);
    return wake && Math.max(wake.getTime() - now.getTime(), 0);
  }

  /** Objects with a read in progress. */
  running(): string[] {
    return [...this.#objects.values()].filter((object) => object.running).map((object) => object.objectName);
  }

  #start(run: DueRun, now: Date): void {
    const object = this.#require(run.objectName);
    object.running = {
      kind: run.kind,
      startedAt: now.toISOString(),
      ...(run.operationId !== undefined && { operationId: run.operationId }),
      ...(run.queued && run.kind !== 'triggered' && { queued: true }),
    };
    if (run.queued) {
      object.triggered.shift();
    } else {
      // The fire is consumed; the tentative next one shows in queries and is replanned at finish.
      object.nextFireAt = this.#planFrom(object, now);
    }
  }

  /** The next planned fire after `after` for an unpaused object; undefined when paused or when it never fires again. */
  #planFrom(object: ObjectSchedule, after: Date): string | undefined {
    if (object.paused) return undefined;
    return nextSpreadFireTime(object.cron, after, this.#spread, object.timezone)?.toISOString();
  }

  #select(objectNames: readonly string[] | undefined): ObjectSchedule[] {
    if (!objectNames?.length) return [...this.#objects.values()];
    return objectNames.map((name) => this.#require(name));
  }

  #require(objectName: string): ObjectSchedule {
    const object = this.#objects.get(objectName);
    if (!object) throw new Error(`no read schedule for object "${objectName}"`);
    return object;
  }
}

function structuredCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function isDue(object: ObjectSchedule, now: Date): boolean {
  return object.nextFireAt !== undefined && Date.parse(object.nextFireAt) <= now.getTime();
}

/** Backfill before anything else when one is due, then triggered reads in order, then the scheduled fire. */
function nextRunOf(object: ObjectSchedule, now: Date): DueRun | undefined {
  if (object.paused || object.running) return undefined;
  const fireDue = isDue(object, now);
  const base = { objectName: object.objectName };
  if (object.needsBackfill && fireDue) return { ...base, kind: 'backfill', dueAt: object.nextFireAt! };
  const [triggered] = object.triggered;
  if (triggered) {
    return {
      ...base,
      kind: triggered.readType ?? 'triggered',
      dueAt: triggered.requestedAt,
      ...(triggered.operationId !== undefined && { operationId: triggered.operationId }),
      ...(triggered.sinceTimestamp !== undefined && { sinceTimestamp: triggered.sinceTimestamp }),
      ...(triggered.untilTimestamp !== undefined && { untilTimestamp: triggered.untilTimestamp }),
      queued: true,
      ...(triggered.retryOf !== undefined && { retryOf: triggered.retryOf }),
    };
  }
  if (fireDue) return { ...base, kind: 'scheduled', dueAt: object.nextFireAt! };
  return undefined;
}
