import type {
  InstallationWorkflowInput,
  RunningRead,
  SubscriptionDescription,
} from '../src/temporal/contracts/installation.js';
import type { SchemaWatchState } from './schema-watch-schedule.js';
import type { ScheduleBookState } from './schedule.js';

/** What the provider subscriptions currently reflect; carried across continue-as-new. */
export interface SubscriptionState {
  /** One provider subscription per subscribed object: Ferry's id and the config it was made from. */
  objects: Record<string, { subscriptionId: string; fingerprint: string }>;
  /** A change that failed for good is not retried until the wanted objects change again. */
  failedFingerprint?: string;
  lastChange?: SubscriptionDescription['lastChange'];
  /** When the subscriptions that expire are next renewed, ISO 8601 (absent: none expire, or not known yet). */
  renewAt?: string;
  /** The expiries kept in PostgreSQL were looked at once (subscriptions made before renewals were planned). */
  renewalKnown?: boolean;
}

/** Everything a run hands to the next one on continue-as-new. Plain JSON. */
export interface InstallationStateSnapshot {
  schedules: ScheduleBookState;
  pauseNotes: Record<string, string>;
  authFailures: Record<string, number>;
  subscription: SubscriptionState;
  recentFires: RunningRead[];
  /** Trigger operation ids already taken, so a re-delivered trigger never runs twice. */
  seenOperationIds: string[];
  /** Triggered reads given up but not yet marked failed. */
  abandonedOperationIds?: string[];
  generation: number;
  /** The schema watch's schedule and next run, when the manifest watches schemas. */
  schemaWatch?: SchemaWatchState;
}

/** What a run of the installation workflow starts from: the API's input, plus the state of the run before it. */
export interface InstallationRunInput extends InstallationWorkflowInput {
  /** The previous run's state, when continued as new. */
  carried?: InstallationStateSnapshot;
}
