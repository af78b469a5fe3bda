import {
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  applyConfigUpdate,
  describeQuery,
  type InstallationConfigMessage,
} from '../src/temporal/contracts/installation.js';
import { configMessageProblem } from './config-message-problem.js';
import { errorMessage } from './error-message.js';
import { InFlight } from './in-flight.js';
import type { InstallationRunInput } from './installation-snapshot.js';
import { InstallationState } from './installation-state.js';
import { applyConfig, cleanUp, startDueWork } from './installation-work.js';
import { setOperatorHandlers } from './operator-messages.js';
import { SerialQueue } from './serial-queue.js';
import { WakeTimer } from './wake-timer.js';
import { workflowNow } from './workflow-now.js';

/** Safety net beside the server's continue-as-new suggestion (about 4K events). */
const DEFAULT_MAX_ITERATIONS = 500;

/**
 * One installation: apply its config, wait for the earliest due read or a message, run due reads as
 * child workflows, repeat; continue as new when history grows. Ends (cancelling its reads and
 * removing its provider subscriptions) when cancelled, which is how the API deletes an installation.
 */
export async function installationWorkflow(input: InstallationRunInput): Promise<void> {
  const state = new InstallationState(input);
  const inFlight = new InFlight();
  // Config versions apply one at a time, in arrival order, even though applying may await an activity.
  const configs = new SerialQueue();
  const apply = (config: InstallationConfigMessage) => configs.run(() => applyConfig(state, config));
  const whenReady = () => condition(() => state.ready);
  const wakeTimer = new WakeTimer();

  setHandler(describeQuery, () => state.describe());
  setHandler(applyConfigUpdate, apply, {
    validator: (config) => {
      const problem = configMessageProblem(config);
      if (problem) throw new Error(problem);
    },
  });
  setOperatorHandlers(state, whenReady);

  try {
    if (!state.ready) {
      try {
        // Awaited directly: one more promise step here would let a config Update queued behind this
        // one schedule its activity before the first reads start, changing the history's order.
        await apply(input.config);
      } catch (error) {
        if (isCancellation(error)) throw error;
        log.warn('installation not found in the database; ending', { error: errorMessage(error) });
        return;
      }
    }
    const maxIterations = input.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    for (let iteration = 1; ; iteration++) {
      state.takeWoken();
      startDueWork(state, inFlight);
      if (iteration >= maxIterations || workflowInfo().continueAsNewSuggested) break;
      const now = workflowNow();
      wakeTimer.arm(state.nextWakeAt(now)?.getTime(), now.getTime());
      await condition(
        () => state.woken || wakeTimer.fired || wakeTimer.behindTaskEnd(workflowNow().getTime()),
      );
    }
    // Nothing may be lost: running reads and subscription changes finish, and handlers complete, first.
    await condition(() => inFlight.idle && allHandlersFinished());
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(() => cleanUp(state, inFlight));
    throw error;
  }
  await continueAsNew<typeof installationWorkflow>({
    ...input,
    config: state.config,
    carried: state.snapshot(),
  });
}
