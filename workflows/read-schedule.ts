import type { ReadType } from '../src/schemas/reads.js';
import type {
  ObjectDescription,
  PauseRequest,
  ReadObjectPlan,
  RunningRead,
  TriggerReadRequest,
} from '../src/temporal/contracts/installation.js';
import type { InstallationStateSnapshot } from './installation-snapshot.js';
import { ScheduleBook, type ConfigureResult, type ScheduleSpread } from './schedule.js';

/** Consecutive authentication failures after which an object's schedule pauses itself. */
export const AUTH_FAILURES_BEFORE_PAUSE = 3;
const RECENT_FIRES_KEPT = 30;
const SEEN_OPERATION_IDS_KEPT = 200;

export interface StartedRead extends RunningRead {
  sinceTimestamp?: string;
  untilTimestamp?: string;
}

/** The reads' part of what a run hands to the next one on continue-as-new. */
export type ReadScheduleSnapshot = Pick<
  InstallationStateSnapshot,
  'schedules' | 'pauseNotes' | 'authFailures' | 'recentFires' | 'seenOperationIds' | 'abandonedOperationIds'
>;

/**
 * An installation's reads: the schedules (ScheduleBook does the arithmetic), which reads run,
 * pauses and their notes, auth-failure counts, the latest fires, the trigger operation ids already
 * taken and the triggered reads given up. Deterministic: workflow time and new operation ids come
 * from the caller. `onChange` tells the workflow's main loop to look again.
 */
export class ReadSchedule {
  readonly #book: ScheduleBook;
  readonly #running = new Map<string, RunningRead>();
  readonly #pauseNotes: Map<string, string>;
  readonly #authFailures: Map<string, number>;
  readonly #recentFires: RunningRead[];
  readonly #seenOperationIds: string[];
  readonly #abandoned: string[];
  readonly #onChange: () => void;

  constructor(carried: ReadScheduleSnapshot | undefined, spread: ScheduleSpread, onChange: () => void) {
    this.#book = carried
      ? ScheduleBook.fromJSON(carried.schedules, spread)
      : new ScheduleBook(undefined, spread);
    this.#pauseNotes = new Map(Object.entries(carried?.pauseNotes ?? {}));
    this.#authFailures = new Map(Object.entries(carried?.authFailures ?? {}));
    this.#recentFires = [...(carried?.recentFires ?? [])];
    this.#seenOperationIds = [...(carried?.seenOperationIds ?? [])];
    this.#abandoned = [...(carried?.abandonedOperationIds ?? [])];
    this.#onChange = onChange;
  }

  /** Objects of `reads` that are new here and configured with a backfill: the workflow asks the database about them. */
  newBackfillObjects(reads: readonly ReadObjectPlan[]): string[] {
    return reads
      .filter((read) => read.backfill && !this.#book.get(read.objectName))
      .map((read) => read.objectName);
  }

  /**
   * Applies a config version's reads; `needsBackfill` names the new objects whose backfill is not
   * done yet. Triggered reads of dropped objects are given up.
   */
  configure(reads: readonly ReadObjectPlan[], needsBackfill: readonly string[], now: Date): ConfigureResult {
    const pending = new Set(needsBackfill);
    const kept = new Set(reads.map((read) => read.objectName));
    for (const object of this.#book.objects()) {
      if (kept.has(object.objectName)) continue;
      for (const run of object.triggered) if (run.operationId) this.#abandoned.push(run.operationId);
    }
    const result = this.#book.configure(
      reads.map((read) => ({
        objectName: read.objectName,
        cron: read.schedule,
        backfill: read.backfill && pending.has(read.objectName),
      })),
      now,
    );
    for (const name of result.removed) {
      this.#pauseNotes.delete(name);
      this.#authFailures.delete(name);
    }
    this.#onChange();
    return result;
  }

  /** Pauses known objects (all when none are named); unknown names are ignored, since a signal must not fail. */
  pause(request: PauseRequest): string[] {
    const names = this.#known(request.objects);
    if (names === null) return [];
    const changed = this.#book.pause(names);
    for (const name of names ?? this.#book.objects().map((object) => object.objectName)) {
      if (request.note) this.#pauseNotes.set(name, request.note);
    }
    this.#onChange();
    return changed;
  }

  resume(objects: string[] | undefined, now: Date): string[] {
    const names = this.#known(objects);
    if (names === null) return [];
    const changed = this.#book.resume(names, now);
    for (const name of changed) {
      this.#pauseNotes.delete(name);
      this.#authFailures.delete(name);
    }
    this.#onChange();
    return changed;
  }

  /** Queues a triggered read; a re-delivered trigger (same operation id) and unknown objects are ignored. */
  trigger(request: TriggerReadRequest, now: Date): 'queued' | 'duplicate' | 'unknown' {
    if (request.operationId && this.#seenOperationIds.includes(request.operationId)) return 'duplicate';
    if (request.operationId) this.#remember(request.operationId);
    if (!this.#book.get(request.objectName)) {
      // The caller already created the operation; it must not stay in progress for ever.
      if (request.operationId) this.#abandoned.push(request.operationId);
      this.#onChange();
      return 'unknown';
    }
    this.#book.trigger(
      request.objectName,
      {
        ...(request.operationId !== undefined && { operationId: request.operationId }),
        ...(request.sinceTimestamp !== undefined && { sinceTimestamp: request.sinceTimestamp }),
        ...(request.untilTimestamp !== undefined && { untilTimestamp: request.untilTimestamp }),
      },
      now,
    );
    this.#onChange();
    return 'queued';
  }

  /** Operation ids of triggered reads that will never run (object gone, installation deleted), once each. */
  takeAbandonedTriggers(): string[] {
    return this.#abandoned.splice(0);
  }

  /** Gives up every queued triggered read (the installation is being deleted). */
  abandonQueuedTriggers(): void {
    for (const object of this.#book.objects()) {
      for (const run of object.triggered) if (run.operationId) this.#abandoned.push(run.operationId);
    }
  }

  /**
   * Queues a read someone asked for besides a trigger (an operator's backfill with a window, a retry),
   * with its operation already recorded; it runs in turn with triggered reads.
   */
  queueRun(
    run: {
      objectName: string;
      readType: ReadType;
      operationId: string;
      sinceTimestamp?: string;
      untilTimestamp?: string;
      retryOf?: string;
    },
    now: Date,
  ): void {
    const { objectName, ...queued } = run;
    this.#remember(run.operationId);
    this.#book.trigger(objectName, queued, now);
    this.#onChange();
  }

  /** Whether the object is read by this installation, and whether it is paused. */
  status(objectName: string): 'unknown' | 'paused' | 'active' {
    const object = this.#book.get(objectName);
    return !object ? 'unknown' : object.paused ? 'paused' : 'active';
  }

  requestBackfill(objectName: string, now: Date): boolean {
    if (!this.#book.get(objectName)) return false;
    this.#book.requestBackfill(objectName, now);
    this.#onChange();
    return true;
  }

  /** Marks the reads due at `now` as running and returns them, each with its operation id. */
  takeDueReads(now: Date, newOperationId: () => string): StartedRead[] {
    return this.#book.takeDueRuns(now).map((run) => {
      const read: StartedRead = {
        objectName: run.objectName,
        operationId: run.operationId ?? newOperationId(),
        readType: run.kind,
        plannedAt: run.dueAt,
        startedAt: now.toISOString(),
        ...(run.sinceTimestamp !== undefined && { sinceTimestamp: run.sinceTimestamp }),
        ...(run.untilTimestamp !== undefined && { untilTimestamp: run.untilTimestamp }),
      };
      const { sinceTimestamp: _since, untilTimestamp: _until, ...running } = read;
      this.#running.set(read.objectName, running);
      this.#recentFires.push(running);
      if (this.#recentFires.length > RECENT_FIRES_KEPT) this.#recentFires.shift();
      this.#remember(read.operationId);
      return read;
    });
  }

  /**
   * Records the end of a read. Returns true when this failure was the third authentication failure
   * in a row, which pauses the object until someone resumes it.
   */
  finishRead(read: RunningRead, now: Date, outcome: { succeeded: boolean; authFailure: boolean }): boolean {
    if (this.#running.get(read.objectName)?.operationId !== read.operationId) return false;
    this.#running.delete(read.objectName);
    this.#book.finish(read.objectName, now, { succeeded: outcome.succeeded });
    this.#onChange();
    if (!this.#book.get(read.objectName)) return false;
    const failures = outcome.authFailure ? (this.#authFailures.get(read.objectName) ?? 0) + 1 : 0;
    if (failures === 0) this.#authFailures.delete(read.objectName);
    else this.#authFailures.set(read.objectName, failures);
    if (failures < AUTH_FAILURES_BEFORE_PAUSE) return false;
    this.#book.pause([read.objectName]);
    this.#pauseNotes.set(
      read.objectName,
      `paused after ${failures} consecutive authentication failures; fix the connection and resume`,
    );
    return true;
  }

  pauseNote(objectName: string): string | undefined {
    return this.#pauseNotes.get(objectName);
  }

  runningReads(): RunningRead[] {
    return [...this.#running.values()];
  }

  /** The latest read starts, newest last. */
  recentFires(): RunningRead[] {
    return [...this.#recentFires];
  }

  /** When the earliest read becomes due; undefined when nothing is planned (all paused or running). */
  nextWakeAt(now: Date): Date | undefined {
    return this.#book.nextWakeAt(now);
  }

  describe(): ObjectDescription[] {
    return this.#book.objects().map((object) => {
      const running = this.#running.get(object.objectName);
      return {
        objectName: object.objectName,
        schedule: object.cron,
        paused: object.paused,
        ...(this.#pauseNotes.has(object.objectName) && {
          pauseNote: this.#pauseNotes.get(object.objectName),
        }),
        ...(object.nextFireAt && { nextFireAt: object.nextFireAt }),
        needsBackfill: object.needsBackfill,
        queuedTriggers: object.triggered.length,
        queued: object.triggered.map((run) => ({ ...run, readType: run.readType ?? 'triggered' })),
        ...(running && { running }),
        ...(object.lastRun && {
          lastRun: {
            readType: object.lastRun.kind as ReadType,
            startedAt: object.lastRun.startedAt,
            finishedAt: object.lastRun.finishedAt,
            succeeded: object.lastRun.succeeded,
          },
        }),
        consecutiveAuthFailures: this.#authFailures.get(object.objectName) ?? 0,
      };
    });
  }

  toJSON(): Required<ReadScheduleSnapshot> {
    return {
      schedules: this.#book.toJSON(),
      pauseNotes: Object.fromEntries(this.#pauseNotes),
      authFailures: Object.fromEntries(this.#authFailures),
      recentFires: [...this.#recentFires],
      seenOperationIds: [...this.#seenOperationIds],
      abandonedOperationIds: [...this.#abandoned],
    };
  }

  /** undefined means all objects; null means none of the named ones exist. */
  #known(names: string[] | undefined): string[] | undefined | null {
    if (!names?.length) return undefined;
    const known = names.filter((name) => this.#book.get(name));
    return known.length ? known : null;
  }

  #remember(operationId: string): void {
    this.#seenOperationIds.push(operationId);
    if (this.#seenOperationIds.length > SEEN_OPERATION_IDS_KEPT) this.#seenOperationIds.shift();
  }
}
