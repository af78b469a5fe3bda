import type { SubscribeConfig } from '../src/schemas/installations.js';
import type { ReadType } from '../src/schemas/reads.js';
import { ScheduleBook, spreadFraction, type ScheduleSpread } from './schedule.js';
import { nextFireTime } from '../src/core/cron.js';
import type {
  ApplyConfigResult,
  InstallationConfigMessage,
  InstallationDescription,
  PauseRequest,
  RunningRead,
  SubscriptionAction,
  SubscriptionChange,
  SubscriptionChangeResult,
  TriggerReadRequest,
} from '../src/temporal/contracts/installation.js';
import type {
  InstallationRunInput,
  InstallationStateSnapshot,
  SubscriptionState,
} from './installation-snapshot.js';

/** Consecutive authentication failures after which an object's schedule pauses itself. */
export const AUTH_FAILURES_BEFORE_PAUSE = 3;
const RECENT_FIRES_KEPT = 30;
const SEEN_OPERATION_IDS_KEPT = 200;

export interface StartedRead extends RunningRead {
  sinceTimestamp?: string;
  untilTimestamp?: string;
}

export interface PendingSubscriptionChange extends Omit<SubscriptionChange, 'installationId'> {
  /** Fingerprint of the wanted subscribe config as a whole. */
  fingerprint: string;
}

/** JSON with sorted keys: two configs are the same change exactly when their fingerprints match. */
export function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/**
 * Returns why a config message cannot be applied, or undefined. The Update's validator runs this, so
 * malformed input is refused before it enters history; the API has already checked everything else.
 */
export function configMessageProblem(config: InstallationConfigMessage): string | undefined {
  if (!config || typeof config !== 'object') return 'the config must be an object';
  if (typeof config.configId !== 'string' || !config.configId) return 'configId is required';
  if (typeof config.revisionId !== 'string' || !config.revisionId) return 'revisionId is required';
  if (!config.content || typeof config.content !== 'object') return 'content is required';
  if (!Array.isArray(config.reads)) return 'reads must be an array';
  const names = new Set<string>();
  for (const read of config.reads) {
    if (!read || typeof read.objectName !== 'string' || !read.objectName)
      return 'every read needs an objectName';
    if (names.has(read.objectName)) return `read "${read.objectName}" appears twice`;
    names.add(read.objectName);
    if (typeof read.schedule !== 'string') return `read "${read.objectName}" needs a schedule`;
    try {
      nextFireTime(read.schedule, new Date(0));
    } catch (error) {
      return `read "${read.objectName}": ${(error as Error).message}`;
    }
  }
  return undefined;
}

/**
 * One installation's state inside its workflow: the current config, the read schedules (ScheduleBook
 * does the arithmetic), which reads run, pauses, auth-failure counts and the provider subscription.
 * Deterministic: every method takes workflow time from the caller.
 */
export class InstallationState {
  readonly installationId: string;
  readonly projectId: string;
  config: InstallationConfigMessage;
  /** The first config has been applied; messages that arrive earlier wait for it. */
  ready = false;
  readonly #book: ScheduleBook;
  readonly #spread: ScheduleSpread;
  readonly #running = new Map<string, RunningRead>();
  readonly #pauseNotes: Map<string, string>;
  readonly #authFailures: Map<string, number>;
  readonly #recentFires: RunningRead[];
  readonly #seenOperationIds: string[];
  readonly #abandoned: string[];
  #subscription: SubscriptionState;
  #subscriptionChanging?: SubscriptionAction;
  readonly generation: number;
  /** Something changed that the main loop should look at. */
  #woken = false;

  constructor(input: InstallationRunInput) {
    const carried = input.carried;
    this.installationId = input.installationId;
    this.projectId = input.projectId;
    this.config = input.config;
    this.#spread = {
      maxMs: (input.scheduleSpreadSeconds ?? 0) * 1000,
      fraction: spreadFraction(input.installationId),
    };
    this.#book = carried
      ? ScheduleBook.fromJSON(carried.schedules, this.#spread)
      : new ScheduleBook(undefined, this.#spread);
    this.#pauseNotes = new Map(Object.entries(carried?.pauseNotes ?? {}));
    this.#authFailures = new Map(Object.entries(carried?.authFailures ?? {}));
    this.#recentFires = [...(carried?.recentFires ?? [])];
    this.#seenOperationIds = [...(carried?.seenOperationIds ?? [])];
    this.#abandoned = [...(carried?.abandonedOperationIds ?? [])];
    this.#subscription = carried?.subscription ?? { objects: {} };
    this.generation = carried ? carried.generation + 1 : 0;
    this.ready = Boolean(carried);
  }

  wake(): void {
    this.#woken = true;
  }

  /** Whether anything happened since the last call; the main loop waits on this. */
  takeWoken(): boolean {
    const woken = this.#woken;
    this.#woken = false;
    return woken;
  }

  get woken(): boolean {
    return this.#woken;
  }

  /** Objects of `config` that are new here and configured with a backfill: the workflow asks the database about them. */
  newBackfillObjects(config: InstallationConfigMessage): string[] {
    return config.reads
      .filter((read) => read.backfill && !this.#book.get(read.objectName))
      .map((read) => read.objectName);
  }

  /** Applies a config version; `needsBackfill` names the new objects whose backfill is not done yet. */
  applyConfig(
    config: InstallationConfigMessage,
    needsBackfill: readonly string[],
    now: Date,
  ): ApplyConfigResult {
    const pending = new Set(needsBackfill);
    const kept = new Set(config.reads.map((read) => read.objectName));
    for (const object of this.#book.objects()) {
      if (kept.has(object.objectName)) continue;
      for (const run of object.triggered) if (run.operationId) this.#abandoned.push(run.operationId);
    }
    const result = this.#book.configure(
      config.reads.map((read) => ({
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
    this.config = config;
    this.ready = true;
    this.wake();
    const action = this.#subscriptionAction();
    return { configId: config.configId, ...result, ...(action && { subscriptionChange: action }) };
  }

  /** Pauses known objects (all when none are named); unknown names are ignored, since a signal must not fail. */
  pause(request: PauseRequest): string[] {
    const names = this.#known(request.objects);
    if (names === null) return [];
    const changed = this.#book.pause(names);
    for (const name of names ?? this.#book.objects().map((object) => object.objectName)) {
      if (request.note) this.#pauseNotes.set(name, request.note);
    }
    this.wake();
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
    this.wake();
    return changed;
  }

  /** Queues a triggered read; a re-delivered trigger (same operation id) and unknown objects are ignored. */
  trigger(request: TriggerReadRequest, now: Date): 'queued' | 'duplicate' | 'unknown' {
    if (request.operationId && this.#seenOperationIds.includes(request.operationId)) return 'duplicate';
    if (request.operationId) this.#remember(request.operationId);
    if (!this.#book.get(request.objectName)) {
      // The caller already created the operation; it must not stay in progress for ever.
      if (request.operationId) this.#abandoned.push(request.operationId);
      this.wake();
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
    this.wake();
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

  requestBackfill(objectName: string, now: Date): boolean {
    if (!this.#book.get(objectName)) return false;
    this.#book.requestBackfill(objectName, now);
    this.wake();
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
    this.wake();
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

  /** When the earliest read becomes due; undefined when nothing is planned (all paused or running). */
  nextWakeAt(now: Date): Date | undefined {
    return this.#book.nextWakeAt(now);
  }

  #wantedSubscriptions(): Record<string, SubscribeConfig> {
    return this.config.content.subscribe?.objects ?? {};
  }

  /** create (none yet), delete (none wanted any more), update (anything else), or undefined when in step. */
  #subscriptionAction(): SubscriptionAction | undefined {
    const wanted = this.#wantedSubscriptions();
    const print = fingerprint(wanted);
    const current = this.#subscription;
    if (print === current.failedFingerprint) return undefined;
    const currentNames = Object.keys(current.objects);
    const inStep =
      currentNames.length === Object.keys(wanted).length &&
      currentNames.every(
        (name) => wanted[name] && fingerprint(wanted[name]) === current.objects[name].fingerprint,
      );
    if (inStep) return undefined;
    if (!currentNames.length) return 'create';
    return Object.keys(wanted).length ? 'update' : 'delete';
  }

  hasPendingSubscriptionChange(): boolean {
    return this.#subscriptionAction() !== undefined;
  }

  /** The provider subscription change the current config asks for; new subscriptions get ids from `newId`. */
  pendingSubscriptionChange(newId: () => string): PendingSubscriptionChange | undefined {
    const action = this.#subscriptionAction();
    if (!action) return undefined;
    const wanted = this.#wantedSubscriptions();
    const current = this.#subscription.objects;
    const upserts = Object.entries(wanted)
      .filter(([name, object]) => current[name]?.fingerprint !== fingerprint(object))
      .map(([name, object]) => ({
        objectName: name,
        subscriptionId: current[name]?.subscriptionId ?? newId(),
        config: object,
      }));
    const removals = Object.entries(current)
      .filter(([name]) => !Object.hasOwn(wanted, name))
      .map(([name, { subscriptionId }]) => ({ objectName: name, subscriptionId }));
    return { action, upserts, removals, fingerprint: fingerprint(wanted) };
  }

  /** Every subscription, for removal when the installation is deleted. */
  removalOfAllSubscriptions(): PendingSubscriptionChange | undefined {
    const removals = Object.entries(this.#subscription.objects).map(([name, { subscriptionId }]) => ({
      objectName: name,
      subscriptionId,
    }));
    return removals.length
      ? { action: 'delete', upserts: [], removals, fingerprint: fingerprint({}) }
      : undefined;
  }

  subscriptionStarted(action: SubscriptionAction): void {
    this.#subscriptionChanging = action;
  }

  subscriptionFinished(
    change: PendingSubscriptionChange,
    now: Date,
    outcome: { result: SubscriptionChangeResult } | { error: string },
  ): void {
    this.#subscriptionChanging = undefined;
    const failed = 'error' in outcome;
    const lastChange = {
      action: change.action,
      succeeded: !failed,
      at: now.toISOString(),
      ...(failed && { error: outcome.error }),
    };
    if (failed) {
      this.#subscription = { ...this.#subscription, failedFingerprint: change.fingerprint, lastChange };
    } else {
      const objects = { ...this.#subscription.objects };
      for (const removal of change.removals) delete objects[removal.objectName];
      for (const upsert of change.upserts) {
        objects[upsert.objectName] = {
          subscriptionId: outcome.result.subscriptionIds[upsert.objectName] ?? upsert.subscriptionId,
          fingerprint: fingerprint(upsert.config),
        };
      }
      this.#subscription = { objects, lastChange };
    }
    this.wake();
  }

  describe(): InstallationDescription {
    const objects = this.#book.objects().map((object) => {
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
    const subscription = this.#subscription;
    return {
      ready: this.ready,
      installationId: this.installationId,
      projectId: this.projectId,
      configId: this.config.configId,
      revisionId: this.config.revisionId,
      objects,
      running: this.runningReads(),
      paused: objects.filter((object) => object.paused).map((object) => object.objectName),
      subscription: {
        objects: Object.fromEntries(
          Object.entries(subscription.objects).map(([name, { subscriptionId }]) => [name, subscriptionId]),
        ),
        ...(this.#subscriptionChanging && { changing: this.#subscriptionChanging }),
        ...(subscription.lastChange && { lastChange: subscription.lastChange }),
      },
      recentFires: [...this.#recentFires],
      generation: this.generation,
      spread: { maxSeconds: this.#spread.maxMs / 1000, fraction: this.#spread.fraction },
    };
  }

  snapshot(): InstallationStateSnapshot {
    return {
      schedules: this.#book.toJSON(),
      pauseNotes: Object.fromEntries(this.#pauseNotes),
      authFailures: Object.fromEntries(this.#authFailures),
      subscription: this.#subscription,
      recentFires: [...this.#recentFires],
      seenOperationIds: [...this.#seenOperationIds],
      abandonedOperationIds: [...this.#abandoned],
      generation: this.generation,
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
