import { isCancellation, log, patched, upsertMemo, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ApplyConfigResult, InstallationConfigMessage } from '../src/temporal/contracts/installation.js';
import type { ReadObjectInput } from '../src/temporal/contracts/read.js';
import { errorMessage } from './error-message.js';
import type { InFlight } from './in-flight.js';
import {
  abandonTriggeredReads,
  changeSubscriptions,
  objectsNeedingBackfill,
  objectsNeedingBackfillLocally,
  recordSchedulePaused,
  recordSubscriptionFailure,
  removeSubscriptionsNow,
  renewSubscriptions,
  subscriptionRenewalAt,
  watchSchema,
} from './installation-activities.js';
import type { InstallationState } from './installation-state.js';
import type { StartedRead } from './read-schedule.js';
import { runReadModes } from './read-run.js';
import type { PendingSubscriptionChange } from './subscriptions.js';
import { workflowNow } from './workflow-now.js';

/** Workflows started before the memo showed the running config replay without it. */
const CONFIG_IN_MEMO = 'config-in-memo';
/** Workflows started before schemas were watched never ran the schema watch activity. */
const SCHEMA_WATCH = 'schema-watch';
/** Workflows started before first fires were planned from the run's start planned them from readiness. */
const FIRST_FIRE_FROM_START = 'first-fire-from-start';
/** Workflows started before subscriptions were renewed never looked at their expiries. */
const SUBSCRIPTION_RENEWAL = 'subscription-renewal';
/** Workflows started before the backfill check ran as a local activity scheduled a regular one. */
const BACKFILL_CHECK_LOCAL = 'backfill-check-local';

// What the installation workflow does beside its main loop: apply config versions, start what became
// due, and clean up when the installation is deleted.

/** Applies a config version, asking the database first which new objects still need their backfill. */
export async function applyConfig(
  state: InstallationState,
  config: InstallationConfigMessage,
): Promise<ApplyConfigResult> {
  const fresh = state.reads.newBackfillObjects(config.reads);
  // At first start the activity also proves the installation was committed.
  const needing =
    fresh.length || !state.ready
      ? await (patched(BACKFILL_CHECK_LOCAL) ? objectsNeedingBackfillLocally : objectsNeedingBackfill)({
          installationId: state.installationId,
          objectNames: fresh,
        })
      : [];
  // A first run's schedule starts when the installation was created, or when the run did if earlier,
  // not when it became ready: a workflow whose first task waited in a backlog (many installations
  // created at once), or whose start came late, runs the fire it should have had, late, instead of
  // skipping to the next cron time.
  const firstApply = !state.ready;
  const planFrom = firstApply && patched(FIRST_FIRE_FROM_START) ? firstPlanFrom(state) : workflowNow();
  const result = state.applyConfig(config, needing, planFrom);
  // The Temporal UI shows a workflow's memo: the config it runs now, not only the one it started with.
  if (patched(CONFIG_IN_MEMO)) upsertMemo({ configId: config.configId, revisionId: config.revisionId });
  return result;
}

function firstPlanFrom(state: InstallationState): Date {
  const runStart = workflowInfo().runStartTime;
  return state.scheduleFrom && state.scheduleFrom < runStart ? state.scheduleFrom : runStart;
}

/** Starts what became due: a pending subscription change, failing triggers that cannot run, reads. */
export function startDueWork(state: InstallationState, inFlight: InFlight): void {
  if (!inFlight.changingSubscriptions && state.subscriptions.hasPendingChange()) {
    inFlight.trackSubscriptionChange(changeSubscriptionsUntilInStep(state), () => state.wake());
  }
  const renewal = inFlight.changingSubscriptions ? undefined : state.subscriptions.renewalDue(workflowNow());
  if (renewal === 'renew' || (renewal === 'lookUp' && patched(SUBSCRIPTION_RENEWAL))) {
    inFlight.trackSubscriptionChange(renewSubscriptionsDue(state, renewal), () => state.wake());
  }
  const abandoned = state.reads.takeAbandonedTriggers();
  if (abandoned.length) {
    const reason = 'The object is not read by this installation (any more).';
    inFlight.track(abandonTriggeredReads({ operationIds: abandoned, reason }));
  }
  for (const read of state.reads.takeDueReads(workflowNow(), uuid4)) inFlight.track(runRead(state, read));
  if (state.schemaWatch.isDue(workflowNow()) && patched(SCHEMA_WATCH)) {
    state.schemaWatch.started();
    inFlight.track(runSchemaWatch(state));
  }
}

/** One schema watch run, an activity; the next is planned when it ends, whatever its outcome. */
async function runSchemaWatch(state: InstallationState): Promise<void> {
  try {
    await watchSchema({ installationId: state.installationId, runId: uuid4() });
  } catch (error) {
    if (isCancellation(error)) throw error;
    log.warn('schema watch failed', { error: errorMessage(error) });
  } finally {
    state.schemaWatch.finished(workflowNow());
    state.wake();
  }
}

/**
 * On deletion: reads were cancelled with the workflow; wait for them, fail the triggered reads still
 * queued (their operations exist), then remove the provider subscriptions.
 */
export async function cleanUp(state: InstallationState, inFlight: InFlight): Promise<void> {
  await inFlight.allSettled();
  state.reads.abandonQueuedTriggers();
  const operationIds = state.reads.takeAbandonedTriggers();
  if (operationIds.length) {
    await abandonTriggeredReads({ operationIds, reason: 'The installation was deleted.' }).catch(
      () => undefined,
    );
  }
  const removal = state.subscriptions.removalOfAll();
  if (!removal) return;
  const { installationId } = state;
  try {
    await removeSubscriptionsNow({ installationId, ...withoutFingerprint(removal) });
  } catch (error) {
    await recordSubscriptionFailure({ installationId, action: 'delete', error: errorMessage(error) });
  }
}

/**
 * One read (`runReadModes`: inline first when scheduled, else its own workflow). Its end may pause
 * the object (repeated authentication failures).
 */
async function runRead(state: InstallationState, read: StartedRead): Promise<void> {
  let outcome = { succeeded: false, authFailure: false };
  const input: ReadObjectInput = {
    operationId: read.operationId,
    installationId: state.installationId,
    projectId: state.projectId,
    objectName: read.objectName,
    readType: read.readType,
    ...(read.sinceTimestamp !== undefined && { sinceTimestamp: read.sinceTimestamp }),
    ...(read.untilTimestamp !== undefined && { untilTimestamp: read.untilTimestamp }),
    // Only the child's input changes (not the commands): replaying older histories is unaffected.
    ...(read.readType !== 'triggered' && { plannedAt: read.plannedAt }),
  };
  try {
    const result = await runReadModes(input, state.inlineReadPages);
    outcome = { succeeded: result.status === 'success', authFailure: Boolean(result.authFailure) };
  } catch (error) {
    log.warn('read failed', {
      objectName: read.objectName,
      operationId: read.operationId,
      error: String(error),
    });
  }
  if (state.reads.finishRead(read, workflowNow(), outcome)) {
    await recordSchedulePaused({
      installationId: state.installationId,
      objectName: read.objectName,
      note: state.reads.pauseNote(read.objectName) ?? '',
    });
  }
}

/** Changes the provider subscriptions, one change at a time, until they reflect the latest config. */
async function changeSubscriptionsUntilInStep(state: InstallationState): Promise<void> {
  const { installationId, subscriptions } = state;
  for (let change = subscriptions.pendingChange(uuid4); change; change = subscriptions.pendingChange(uuid4)) {
    subscriptions.started(change.action);
    try {
      const result = await changeSubscriptions({ installationId, ...withoutFingerprint(change) });
      subscriptions.finished(change, workflowNow(), { result });
    } catch (error) {
      if (isCancellation(error)) throw error;
      const message = errorMessage(error);
      subscriptions.finished(change, workflowNow(), { error: message });
      await recordSubscriptionFailure({ installationId, action: change.action, error: message });
    }
  }
}

/**
 * Renews the subscriptions that expire soon (or, for subscriptions made before renewals were
 * planned, learns when they expire). Shares the one slot of subscription changes, so a renewal never
 * races a change of the same subscription. Retries run out: `subscribe.update.error`, and another
 * try FERRY_SUBSCRIPTION_RENEWAL_RETRY_SECONDS later.
 */
async function renewSubscriptionsDue(state: InstallationState, due: 'renew' | 'lookUp'): Promise<void> {
  const { installationId, subscriptions } = state;
  try {
    const all = subscriptions.takeRenewAll();
    const result =
      due === 'renew'
        ? await renewSubscriptions({ installationId, ...(all && { all }) })
        : await subscriptionRenewalAt({ installationId });
    subscriptions.renewalFinished(workflowNow(), result);
  } catch (error) {
    if (isCancellation(error)) throw error;
    const message = errorMessage(error);
    subscriptions.renewalFinished(workflowNow(), { error: message });
    await recordSubscriptionFailure({ installationId, action: 'update', error: message });
  }
}

function withoutFingerprint({ fingerprint: _fingerprint, ...change }: PendingSubscriptionChange) {
  return change;
}
