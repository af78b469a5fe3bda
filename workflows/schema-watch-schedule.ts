import { nextSpreadFireTime, type ScheduleSpread } from './schedule.js';

/** The schema watch's place in the installation workflow; carried across continue-as-new. */
export interface SchemaWatchState {
  schedule: string;
  /** The next planned run (ms since the epoch). */
  nextAt?: number;
}

/**
 * When the installation compares its read objects' fields with the last snapshot: on the manifest's
 * watchSchema cron, spread like reads, never two runs at once. Pure, so the workflow stays deterministic.
 */
export class SchemaWatchSchedule {
  #state: SchemaWatchState | undefined;
  #running = false;

  constructor(
    carried: SchemaWatchState | undefined,
    private readonly spread: ScheduleSpread,
  ) {
    this.#state = carried && { ...carried };
  }

  /** Follows a config version: no watch, the same schedule (keeps its next run), or a new one. */
  configure(watch: { schedule: string } | undefined, now: Date): void {
    if (!watch) {
      this.#state = undefined;
      return;
    }
    if (this.#state?.schedule === watch.schedule && this.#state.nextAt !== undefined) return;
    this.#state = { schedule: watch.schedule, nextAt: this.#next(watch.schedule, now) };
  }

  /** When the main loop should wake for the next run; undefined when none is planned or one is running. */
  nextWakeAt(): Date | undefined {
    return this.#running || this.#state?.nextAt === undefined ? undefined : new Date(this.#state.nextAt);
  }

  isDue(now: Date): boolean {
    const next = this.nextWakeAt();
    return next !== undefined && next.getTime() <= now.getTime();
  }

  started(): void {
    this.#running = true;
  }

  /** A run ended: plan the next one after now. */
  finished(now: Date): void {
    this.#running = false;
    if (this.#state) this.#state.nextAt = this.#next(this.#state.schedule, now);
  }

  toJSON(): SchemaWatchState | undefined {
    return this.#state && { ...this.#state };
  }

  #next(schedule: string, after: Date): number | undefined {
    return nextSpreadFireTime(schedule, after, this.spread)?.getTime();
  }
}
