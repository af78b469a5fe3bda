import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { InstallationConfigContent, SubscribeConfig } from '../../schemas/installations.js';
import type { ReadType } from '../../schemas/reads.js';

/**
 * The installation workflow's message API. The API, the read host's trigger endpoint and the CLI import
 * these definitions; an operator sends the same messages from the Temporal UI or `temporal workflow
 * signal`, with the same effect. Only types and `define*` calls live here, so this file is safe to import
 * both inside the workflow sandbox and in ordinary Node code.
 */

export const INSTALLATION_WORKFLOW_TYPE = 'installationWorkflow';

/** One object to read on a schedule, as resolved from the config and the integration's manifest. */
export interface ReadObjectPlan {
  objectName: string;
  /** Five-field cron expression (UTC). */
  schedule: string;
  /** The object is configured with a backfill period (days > 0 or full history). */
  backfill: boolean;
}

/** One config version, as the workflow applies it. */
export interface InstallationConfigMessage {
  configId: string;
  revisionId: string;
  content: InstallationConfigContent;
  /** Selected, not disabled objects plus the manifest's `enabled: always` ones. */
  reads: ReadObjectPlan[];
  /** The manifest's watchSchema: when to compare the read objects' fields with the last snapshot. */
  watchSchema?: { schedule: string };
}

export type SubscriptionAction = 'create' | 'update' | 'delete';

export interface ApplyConfigResult {
  configId: string;
  added: string[];
  changed: string[];
  removed: string[];
  /** The provider subscription change this config started, which completes in the background. */
  subscriptionChange?: SubscriptionAction;
}

export interface TriggerReadRequest {
  /** The operation the caller already created (status `in_progress`); generated when absent. */
  operationId?: string;
  objectName: string;
  sinceTimestamp?: string;
  untilTimestamp?: string;
}

/**
 * A backfill of one object. A window (`days`, `fullHistory`, or `sinceTimestamp`/`untilTimestamp`)
 * replaces the manifest's `backfill.defaultPeriod` for this run; without one the manifest's is used,
 * and an object whose manifest has none (or `days: 0`) is refused with the reason.
 */
export interface BackfillRequest {
  objectName: string;
  days?: number;
  fullHistory?: boolean;
  sinceTimestamp?: string;
  untilTimestamp?: string;
}

/** A failed operation to run again, as a new operation linked to it (`retryOf`). */
export interface RetryRequest {
  operationId: string;
}

/** A read an operator asked for, and the operation that records it. */
export interface RequestedRun {
  operationId: string;
  objectName: string;
  readType: ReadType;
}

export interface RetryResult {
  /** The new operation. */
  operationId: string;
  retryOf: string;
  actionType: 'read' | 'write';
}

export interface PauseRequest {
  /** All objects when absent or empty. */
  objects?: string[];
  note?: string;
}

export interface ResumeRequest {
  objects?: string[];
}

/** Signals: fire-and-forget, so an operator can send them from the UI and the API answers at once. */
export const triggerReadSignal = defineSignal<[TriggerReadRequest]>('triggerRead');
export const backfillSignal = defineSignal<[BackfillRequest]>('backfill');
export const pauseSignal = defineSignal<[PauseRequest]>('pause');
export const resumeSignal = defineSignal<[ResumeRequest]>('resume');
/**
 * The provider says a subscription needs renewing now (Graph's `reauthorizationRequired` and
 * `subscriptionRemoved` lifecycle notifications): every one that expires is renewed, or made again.
 */
export const renewSubscriptionsSignal = defineSignal<[{ notice: string }]>('renewSubscriptions');

/**
 * An Update, not a Signal, because the API waits for the workflow to accept the new config (its
 * validator refuses malformed input before it enters history) and answers with what changed.
 */
export const applyConfigUpdate = defineUpdate<ApplyConfigResult, [InstallationConfigMessage]>('applyConfig');

/**
 * Operator messages as Updates: the sender learns of a mistake (an unknown or removed object, a
 * paused one, a malformed window, an operation that cannot be retried) from the Temporal UI or CLI,
 * and gets the new operation's id on success. The Signals above do the same fire-and-forget.
 */
export const requestReadUpdate = defineUpdate<RequestedRun, [Omit<TriggerReadRequest, 'operationId'>]>(
  'requestRead',
);
export const requestBackfillUpdate = defineUpdate<RequestedRun, [BackfillRequest]>('requestBackfill');
export const retryOperationUpdate = defineUpdate<RetryResult, [RetryRequest]>('retryOperation');
export const pauseReadsUpdate = defineUpdate<{ paused: string[] }, [PauseRequest]>('pauseReads');
export const resumeReadsUpdate = defineUpdate<{ resumed: string[] }, [ResumeRequest]>('resumeReads');

export interface RunningRead {
  objectName: string;
  operationId: string;
  readType: ReadType;
  /** When the read became due: the cron fire, or when a trigger was received (ISO 8601). */
  plannedAt: string;
  /** Workflow time when the child was started (ISO 8601). */
  startedAt: string;
}

export interface QueuedRead {
  readType: ReadType;
  operationId?: string;
  requestedAt: string;
  sinceTimestamp?: string;
  untilTimestamp?: string;
  retryOf?: string;
}

export interface ObjectDescription {
  objectName: string;
  schedule: string;
  paused: boolean;
  pauseNote?: string;
  /** The next scheduled fire (ISO 8601); absent while paused. */
  nextFireAt?: string;
  needsBackfill: boolean;
  queuedTriggers: number;
  /** Reads waiting their turn (triggered, requested backfills, retries), oldest first. */
  queued: QueuedRead[];
  running?: RunningRead;
  lastRun?: { readType: ReadType; startedAt: string; finishedAt: string; succeeded: boolean };
  consecutiveAuthFailures: number;
}

export interface SubscriptionDescription {
  /** Subscribed object to Ferry's subscription id (the webhook URL's last segment). */
  objects: Record<string, string>;
  changing?: SubscriptionAction;
  lastChange?: { action: SubscriptionAction; succeeded: boolean; at: string; error?: string };
  /** When the subscriptions that expire are next renewed (Microsoft Graph, Jira's dynamic webhooks). */
  renewAt?: string;
}

export interface InstallationDescription {
  /** False until the first config is applied (the workflow checks the database for backfills first). */
  ready: boolean;
  installationId: string;
  projectId: string;
  configId: string;
  revisionId: string;
  objects: ObjectDescription[];
  running: RunningRead[];
  paused: string[];
  subscription: SubscriptionDescription;
  /** The latest read starts, newest last: planned versus actual start shows schedule lateness. */
  recentFires: RunningRead[];
  /** How many times this installation's workflow has continued as new. */
  generation: number;
  /** Each fire comes `fraction` of the spread window after its cron time (the window is at most `maxSeconds`). */
  spread: { maxSeconds: number; fraction: number };
  /** Operator messages the workflow could not act on, newest last, with the reason. */
  ignoredMessages: IgnoredMessage[];
}

export interface IgnoredMessage {
  message: 'triggerRead' | 'backfill' | 'pause' | 'resume';
  at: string;
  reason: string;
  objectName?: string;
}

/** A Query: read-only and answered from memory, so the UI and the bench can ask often. */
export const describeQuery = defineQuery<InstallationDescription>('describe');

export interface SubscriptionUpsert {
  objectName: string;
  subscriptionId: string;
  config: SubscribeConfig;
}

/** One subscription change, as the `changeSubscriptions` activity carries it out. */
export interface SubscriptionChange {
  installationId: string;
  action: SubscriptionAction;
  upserts: SubscriptionUpsert[];
  removals: { objectName: string; subscriptionId: string }[];
}

export interface SubscriptionChangeResult {
  /** The subscription id of every upserted object (an existing row's id wins over a proposed one). */
  subscriptionIds: Record<string, string>;
  /** When the earliest of the installation's subscriptions that expire is to be renewed, ISO 8601. */
  renewAt?: string;
  /** Set by activities that plan renewals, so the workflow need not look at the expiries itself. */
  renewalPlanned?: boolean;
}

export interface InstallationWorkflowInput {
  installationId: string;
  projectId: string;
  config: InstallationConfigMessage;
  /** Safety net beside `continueAsNewSuggested`: continue as new after this many loop turns. */
  maxIterations?: number;
  /**
   * The window after each cron time over which installations' fires are spread
   * (FERRY_SCHEDULE_SPREAD_SECONDS; see ScheduleSpread). Absent in workflows started before it existed: no spread.
   */
  scheduleSpreadSeconds?: number;
  /**
   * Scheduled reads run inline (one activity of this workflow) for up to this many pages, then hand
   * over to a child read workflow (FERRY_READ_INLINE_PAGES); 0: every read is a child. Absent in
   * workflows started before inline reads: the default applies.
   */
  inlineReadPages?: number;
  /**
   * When the installation's schedule began: its creation (ISO 8601). A first run plans its fires
   * from this or from its own start, whichever is earlier, so a run that started late (its start
   * retried by the repair loop, or held up in Temporal) runs the fire it missed, late, instead of
   * skipping a cycle. Absent in workflows started before it existed: the run's start.
   */
  scheduleFrom?: string;
}

/** What a renewal (or a look at the expiries) tells the workflow. */
export interface SubscriptionRenewalResult {
  renewed: number;
  /** The next renewal, ISO 8601; absent when nothing expires. */
  renewAt?: string;
  /** After a renewal that failed for good, how long until the next try (FERRY_SUBSCRIPTION_RENEWAL_RETRY_SECONDS). */
  retryInMs: number;
}
