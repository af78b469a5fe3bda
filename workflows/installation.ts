import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  sleep,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/installation.js';
import type { readObjectWorkflow } from './read.js';
import {
  applyConfigUpdate,
  backfillSignal,
  describeQuery,
  pauseSignal,
  resumeSignal,
  triggerReadSignal,
  type ApplyConfigResult,
  type InstallationConfigMessage,
} from '../src/temporal/contracts/installation.js';
import { readWorkflowId } from '../src/temporal/contracts/workflow-ids.js';
import type { InstallationRunInput } from './installation-snapshot.js';
import { configMessageProblem } from './config-message-problem.js';
import { InstallationState } from './installation-state.js';
import type { StartedRead } from './read-schedule.js';
import type { PendingSubscriptionChange } from './subscriptions.js';

/** Safety net beside the server's continue-as-new suggestion (about 4K events). */
const DEFAULT_MAX_ITERATIONS = 500;

// Every activity's timeouts and retries, in one place.
const { objectsNeedingBackfill } = proxyActivities<typeof activities>({
  // The API starts this workflow just before committing the installation: at first start the row may
  // not be visible yet, so retry quickly, and end the run if it never appears (the commit failed).
  startToCloseTimeout: '20 seconds',
  scheduleToCloseTimeout: '2 minutes',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds' },
});
const { recordSchedulePaused, recordSubscriptionFailure, abandonTriggeredReads } = proxyActivities<
  typeof activities
>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '1 minute' },
});
const { changeSubscriptions } = proxyActivities<typeof activities>({
  // A provider subscription change typically takes 1 to 2 minutes and may take up to 10 (spec: States).
  startToCloseTimeout: '2 minutes',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
const { changeSubscriptions: removeSubscriptionsNow } = proxyActivities<typeof activities>({
  // On deletion the API waits about 30 s before terminating the workflow: try within that.
  startToCloseTimeout: '20 seconds',
  scheduleToCloseTimeout: '25 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds' },
});

/**
 * The one timer to the earliest due read. It is re-armed only when that time changes, so a read
 * finishing or a message arriving does not cancel and restart an identical timer (two history
 * events and a server timer task each time, for every installation).
 */
class WakeTimer {
  fired = false;
  #at?: number;
  #scope?: CancellationScope;

  arm(at: number | undefined, now: number): void {
    if (at === this.#at && !this.fired) return;
    this.#scope?.cancel();
    this.#scope = undefined;
    this.#at = at;
    this.fired = false;
    if (at === undefined) return;
    const scope = new CancellationScope();
    this.#scope = scope;
    scope
      .run(() => sleep(Math.max(at - now, 1)))
      .then(
        () => {
          if (this.#scope === scope) this.fired = true;
        },
        () => undefined, // cancelled: re-armed, or the workflow is ending
      );
  }
}

/** The sandbox's Date is workflow time: deterministic, and the same on replay. */
function workflowNow(): Date {
  return new Date();
}

/**
 * One installation: apply its config, wait for the earliest due read or a message, run due reads as
 * child workflows, repeat; continue as new when history grows. Ends (cancelling its reads and
 * removing its provider subscriptions) when cancelled, which is how the API deletes an installation.
 */
export async function installationWorkflow(input: InstallationRunInput): Promise<void> {
  const state = new InstallationState(input);
  /** Reads and other background work that must finish before continue-as-new. */
  const inFlight = new Set<Promise<void>>();
  let subscriptionChanges: Promise<void> | undefined;
  let configQueue: Promise<unknown> = Promise.resolve();

  /** Config versions apply one at a time, in arrival order, even though applying may await an activity. */
  function serially<T>(work: () => Promise<T>): Promise<T> {
    const result = configQueue.then(work);
    configQueue = result.catch(() => undefined);
    return result;
  }

  async function applyConfig(config: InstallationConfigMessage): Promise<ApplyConfigResult> {
    const fresh = state.reads.newBackfillObjects(config.reads);
    // At first start the activity also proves the installation was committed.
    const needing =
      fresh.length || !state.ready
        ? await objectsNeedingBackfill({ installationId: input.installationId, objectNames: fresh })
        : [];
    return state.applyConfig(config, needing, workflowNow());
  }

  const whenReady = () => condition(() => state.ready);
  setHandler(describeQuery, () => state.describe());
  setHandler(applyConfigUpdate, (config) => serially(() => applyConfig(config)), {
    validator: (config) => {
      const problem = configMessageProblem(config);
      if (problem) throw new Error(problem);
    },
  });
  setHandler(triggerReadSignal, async (request) => {
    await whenReady();
    const outcome = state.reads.trigger(request, workflowNow());
    if (outcome !== 'queued') log.warn(`trigger ignored: ${outcome}`, { ...request });
  });
  setHandler(backfillSignal, async ({ objectName }) => {
    await whenReady();
    if (!state.reads.requestBackfill(objectName, workflowNow()))
      log.warn('backfill of an unknown object ignored', { objectName });
  });
  setHandler(pauseSignal, async (request) => {
    await whenReady();
    state.reads.pause(request);
  });
  setHandler(resumeSignal, async ({ objects }) => {
    await whenReady();
    state.reads.resume(objects, workflowNow());
  });

  async function runRead(read: StartedRead): Promise<void> {
    let outcome = { succeeded: false, authFailure: false };
    try {
      const result = await executeChild<typeof readObjectWorkflow>('readObjectWorkflow', {
        workflowId: readWorkflowId(read.operationId),
        args: [
          {
            operationId: read.operationId,
            installationId: input.installationId,
            projectId: input.projectId,
            objectName: read.objectName,
            readType: read.readType,
            ...(read.sinceTimestamp !== undefined && { sinceTimestamp: read.sinceTimestamp }),
            ...(read.untilTimestamp !== undefined && { untilTimestamp: read.untilTimestamp }),
          },
        ],
        // A read never outlives its installation's workflow; continue-as-new waits for reads first.
        parentClosePolicy: ParentClosePolicy.TERMINATE,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      });
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
        installationId: input.installationId,
        objectName: read.objectName,
        note: state.reads.pauseNote(read.objectName) ?? '',
      });
    }
  }

  function track(work: Promise<void>): void {
    const running = work.finally(() => inFlight.delete(running));
    inFlight.add(running);
  }

  /** Starts what became due: reads, a pending subscription change, failing triggers that cannot run. */
  function startDueWork(): void {
    if (!subscriptionChanges && state.subscriptions.hasPendingChange()) {
      subscriptionChanges = changeSubscriptionsUntilInStep().finally(() => {
        subscriptionChanges = undefined;
        state.wake();
      });
    }
    const abandoned = state.reads.takeAbandonedTriggers();
    if (abandoned.length) {
      const reason = 'The object is not read by this installation (any more).';
      track(abandonTriggeredReads({ operationIds: abandoned, reason }));
    }
    for (const read of state.reads.takeDueReads(workflowNow(), uuid4)) track(runRead(read));
  }

  async function changeSubscriptionsUntilInStep(): Promise<void> {
    for (
      let change = state.subscriptions.pendingChange(uuid4);
      change;
      change = state.subscriptions.pendingChange(uuid4)
    ) {
      state.subscriptions.started(change.action);
      try {
        const result = await changeSubscriptions({
          installationId: input.installationId,
          ...withoutFingerprint(change),
        });
        state.subscriptions.finished(change, workflowNow(), { result });
      } catch (error) {
        if (isCancellation(error)) throw error;
        const message = errorMessage(error);
        state.subscriptions.finished(change, workflowNow(), { error: message });
        await recordSubscriptionFailure({
          installationId: input.installationId,
          action: change.action,
          error: message,
        });
      }
    }
  }

  try {
    if (!state.ready) {
      try {
        await serially(() => applyConfig(input.config));
      } catch (error) {
        if (isCancellation(error)) throw error;
        log.warn('installation not found in the database; ending', { error: errorMessage(error) });
        return;
      }
    }
    const maxIterations = input.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    const wakeTimer = new WakeTimer();
    for (let iteration = 1; ; iteration++) {
      state.takeWoken();
      startDueWork();
      if (iteration >= maxIterations || workflowInfo().continueAsNewSuggested) break;
      const now = workflowNow();
      wakeTimer.arm(state.reads.nextWakeAt(now)?.getTime(), now.getTime());
      await condition(() => state.woken || wakeTimer.fired);
    }
    // Nothing may be lost: running reads and subscription changes finish, and handlers complete, first.
    await condition(() => inFlight.size === 0 && !subscriptionChanges && allHandlersFinished());
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(() =>
      cleanUp(state, inFlight, subscriptionChanges, input.installationId),
    );
    throw error;
  }
  await continueAsNew<typeof installationWorkflow>({
    ...input,
    config: state.config,
    carried: state.snapshot(),
  });
}

/**
 * On deletion: reads were cancelled with the workflow; wait for them, fail the triggered reads still
 * queued (their operations exist), then remove the provider subscriptions.
 */
async function cleanUp(
  state: InstallationState,
  inFlight: Set<Promise<void>>,
  subscriptionChanges: Promise<void> | undefined,
  installationId: string,
): Promise<void> {
  await Promise.allSettled([...inFlight, ...(subscriptionChanges ? [subscriptionChanges] : [])]);
  state.reads.abandonQueuedTriggers();
  const operationIds = state.reads.takeAbandonedTriggers();
  if (operationIds.length) {
    await abandonTriggeredReads({ operationIds, reason: 'The installation was deleted.' }).catch(
      () => undefined,
    );
  }
  const removal = state.subscriptions.removalOfAll();
  if (!removal) return;
  try {
    await removeSubscriptionsNow({ installationId, ...withoutFingerprint(removal) });
  } catch (error) {
    await recordSubscriptionFailure({ installationId, action: 'delete', error: errorMessage(error) });
  }
}

function withoutFingerprint({ fingerprint: _fingerprint, ...change }: PendingSubscriptionChange) {
  return change;
}

function errorMessage(error: unknown): string {
  const cause = (error as { cause?: { message?: string } }).cause;
  return cause?.message ?? (error as Error).message ?? String(error);
}
