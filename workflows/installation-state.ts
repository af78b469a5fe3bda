import type {
  ApplyConfigResult,
  IgnoredMessage,
  InstallationConfigMessage,
  InstallationDescription,
} from '../src/temporal/contracts/installation.js';

const IGNORED_KEPT = 20;
/** FERRY_READ_INLINE_PAGES's default, for workflows started before the API passed it. */
const DEFAULT_INLINE_READ_PAGES = 5;
import type { InstallationRunInput, InstallationStateSnapshot } from './installation-snapshot.js';
import { ReadSchedule } from './read-schedule.js';
import { spreadFraction, type ScheduleSpread } from './schedule.js';
import { SchemaWatchSchedule } from './schema-watch-schedule.js';
import { Subscriptions } from './subscriptions.js';

/**
 * One installation's state inside its workflow: the current config, its reads and its provider
 * subscriptions, and whether anything changed that the main loop should look at.
 */
export class InstallationState {
  readonly installationId: string;
  readonly projectId: string;
  readonly generation: number;
  /** Scheduled reads run inline for up to this many pages before a child takes over; 0: always a child. */
  readonly inlineReadPages: number;
  /** When the installation's schedule began (its creation), when the workflow was started with it. */
  readonly scheduleFrom: Date | undefined;
  config: InstallationConfigMessage;
  /** The first config has been applied; messages that arrive earlier wait for it. */
  ready: boolean;
  readonly reads: ReadSchedule;
  readonly subscriptions: Subscriptions;
  readonly schemaWatch: SchemaWatchSchedule;
  readonly #spread: ScheduleSpread;
  #woken = false;
  /** Operator messages that could not act, newest last; not carried across continue-as-new. */
  readonly #ignored: IgnoredMessage[] = [];

  constructor(input: InstallationRunInput) {
    const carried = input.carried;
    this.installationId = input.installationId;
    this.projectId = input.projectId;
    this.generation = carried ? carried.generation + 1 : 0;
    this.inlineReadPages = input.inlineReadPages ?? DEFAULT_INLINE_READ_PAGES;
    this.scheduleFrom = input.scheduleFrom ? new Date(input.scheduleFrom) : undefined;
    this.config = input.config;
    this.ready = Boolean(carried);
    this.#spread = {
      maxMs: (input.scheduleSpreadSeconds ?? 0) * 1000,
      fraction: spreadFraction(input.installationId),
    };
    const wake = () => this.wake();
    this.reads = new ReadSchedule(carried, this.#spread, wake);
    this.subscriptions = new Subscriptions(carried?.subscription, wantedSubscriptions(input.config), wake);
    this.schemaWatch = new SchemaWatchSchedule(carried?.schemaWatch, this.#spread);
  }

  /** The earliest time the main loop must wake: a read's fire, the schema watch's run, or a renewal. */
  nextWakeAt(now: Date): Date | undefined {
    const times = [
      this.reads.nextWakeAt(now),
      this.schemaWatch.nextWakeAt(),
      this.subscriptions.renewalAt(),
    ].filter((time): time is Date => time !== undefined);
    return times.length ? new Date(Math.min(...times.map((time) => time.getTime()))) : undefined;
  }

  noteIgnored(message: IgnoredMessage): void {
    this.#ignored.push(message);
    if (this.#ignored.length > IGNORED_KEPT) this.#ignored.shift();
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

  /** Applies a config version; `needsBackfill` names the new objects whose backfill is not done yet. */
  applyConfig(
    config: InstallationConfigMessage,
    needsBackfill: readonly string[],
    now: Date,
  ): ApplyConfigResult {
    const result = this.reads.configure(config.reads, needsBackfill, now);
    this.schemaWatch.configure(config.watchSchema, now);
    this.config = config;
    this.ready = true;
    const action = this.subscriptions.want(wantedSubscriptions(config));
    return { configId: config.configId, ...result, ...(action && { subscriptionChange: action }) };
  }

  describe(): InstallationDescription {
    const objects = this.reads.describe();
    return {
      ready: this.ready,
      installationId: this.installationId,
      projectId: this.projectId,
      configId: this.config.configId,
      revisionId: this.config.revisionId,
      objects,
      running: this.reads.runningReads(),
      paused: objects.filter((object) => object.paused).map((object) => object.objectName),
      subscription: this.subscriptions.describe(),
      recentFires: this.reads.recentFires(),
      generation: this.generation,
      spread: { maxSeconds: this.#spread.maxMs / 1000, fraction: this.#spread.fraction },
      ignoredMessages: [...this.#ignored],
    };
  }

  snapshot(): InstallationStateSnapshot {
    const reads = this.reads.toJSON();
    const schemaWatch = this.schemaWatch.toJSON();
    // Spelled out so the keys keep the order earlier runs wrote them in.
    return {
      schedules: reads.schedules,
      pauseNotes: reads.pauseNotes,
      authFailures: reads.authFailures,
      subscription: this.subscriptions.toJSON(),
      recentFires: reads.recentFires,
      seenOperationIds: reads.seenOperationIds,
      abandonedOperationIds: reads.abandonedOperationIds,
      generation: this.generation,
      ...(schemaWatch && { schemaWatch }),
    };
  }
}

function wantedSubscriptions(config: InstallationConfigMessage) {
  return config.content.subscribe?.objects ?? {};
}
