import { ActivityFailure, ApplicationFailure, log, patched, setHandler, uuid4 } from '@temporalio/workflow';
import {
  backfillSignal,
  pauseReadsUpdate,
  pauseSignal,
  renewSubscriptionsSignal,
  requestBackfillUpdate,
  requestReadUpdate,
  resumeReadsUpdate,
  resumeSignal,
  retryOperationUpdate,
  triggerReadSignal,
  type BackfillRequest,
  type IgnoredMessage,
  type RequestedRun,
} from '../src/temporal/contracts/installation.js';
import {
  describeRetry,
  prepareReadRetry,
  recordIgnoredMessage,
  recordRequestedRead,
  retryWrite,
} from './installation-activities.js';
import type { InstallationState } from './installation-state.js';
import { backfillWindow, objectProblem, triggerWindowProblem } from './operator-requests.js';
import { workflowNow } from './workflow-now.js';

/**
 * What an operator (or the API) can send an installation's workflow about its reads. The Signals are
 * fire-and-forget: one that cannot act says why in the workflow's log, in `describe`, and, for a read
 * asked for, as `read.triggered.error`. The Updates refuse a mistake with the reason before it
 * enters history, and answer with the operation they recorded.
 */

/** Workflows started before these behaviours replay their histories the old way. */
const IGNORED_MESSAGES_RECORDED = 'ignored-operator-messages-recorded';
const BACKFILL_WINDOWS = 'backfill-windows';

function refuse(problem: string | undefined): void {
  if (problem) throw new Error(problem);
}

/** An activity's refusal, passed on with its own words: the Update's caller sees why, not "activity failed". */
function passOnRefusal(error: unknown): never {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  throw ApplicationFailure.nonRetryable(
    cause instanceof Error ? cause.message : String(cause),
    'OperatorRequestRefused',
  );
}

export function setOperatorHandlers(state: InstallationState, whenReady: () => Promise<void>): void {
  const hasManifestBackfill = (objectName: string) =>
    state.config.reads.some((read) => read.objectName === objectName && read.backfill);

  async function ignore(
    message: IgnoredMessage['message'],
    reason: string,
    objectName?: string,
  ): Promise<void> {
    log.warn(`${message} ignored: ${reason}`, { objectName });
    state.noteIgnored({
      message,
      reason,
      at: workflowNow().toISOString(),
      ...(objectName && { objectName }),
    });
    if (patched(IGNORED_MESSAGES_RECORDED)) {
      await recordIgnoredMessage({
        installationId: state.installationId,
        message,
        reason,
        ...(objectName && { objectName }),
      });
    }
  }

  /** Records the read's operation, then queues it in turn with triggered reads. */
  async function requestBackfill(request: BackfillRequest): Promise<RequestedRun | undefined> {
    const now = workflowNow();
    const window = backfillWindow(request, hasManifestBackfill(request.objectName), now);
    if ('problem' in window) return undefined;
    const operationId = uuid4();
    await recordRequestedRead({
      installationId: state.installationId,
      operationId,
      objectName: request.objectName,
      readType: 'backfill',
      ...window,
    });
    state.reads.queueRun(
      {
        objectName: request.objectName,
        readType: 'backfill',
        operationId,
        ...(window.sinceTimestamp && { sinceTimestamp: window.sinceTimestamp }),
        ...(window.untilTimestamp && { untilTimestamp: window.untilTimestamp }),
      },
      now,
    );
    return { operationId, objectName: request.objectName, readType: 'backfill' };
  }

  setHandler(renewSubscriptionsSignal, async ({ notice }) => {
    await whenReady();
    log.info('the provider asked for a renewal', { notice });
    state.subscriptions.renewNow(workflowNow());
  });

  setHandler(triggerReadSignal, async (request) => {
    await whenReady();
    const outcome = state.reads.trigger(request, workflowNow());
    if (outcome === 'queued') return;
    if (outcome === 'duplicate' || request.operationId) {
      // A duplicate changes nothing; an unknown object's recorded operation fails as abandoned.
      log.warn(`trigger ignored: ${outcome}`, { ...request });
      return;
    }
    await ignore('triggerRead', objectProblem(request.objectName, 'unknown')!, request.objectName);
  });

  setHandler(backfillSignal, async (request) => {
    await whenReady();
    if (!patched(BACKFILL_WINDOWS)) {
      if (!state.reads.requestBackfill(request.objectName, workflowNow()))
        log.warn('backfill of an unknown object ignored', { objectName: request.objectName });
      return;
    }
    const status = state.reads.status(request.objectName);
    // A backfill of a paused object waits for its resume, as it always did.
    const problem = objectProblem(request.objectName, status === 'paused' ? 'active' : status);
    const window = backfillWindow(request, hasManifestBackfill(request.objectName), workflowNow());
    const reason = problem ?? ('problem' in window ? window.problem : undefined);
    if (reason) return ignore('backfill', reason, request.objectName);
    if (!('problem' in window) && !window.requestedWindow) {
      state.reads.requestBackfill(request.objectName, workflowNow());
      return;
    }
    await requestBackfill(request);
  });

  setHandler(pauseSignal, async (request) => {
    await whenReady();
    state.reads.pause(request);
  });

  setHandler(resumeSignal, async ({ objects }) => {
    await whenReady();
    state.reads.resume(objects, workflowNow());
  });

  setHandler(
    requestReadUpdate,
    async (request) => {
      await whenReady();
      const operationId = uuid4();
      await recordRequestedRead({
        installationId: state.installationId,
        operationId,
        objectName: request.objectName,
        readType: 'triggered',
        ...(request.sinceTimestamp && { sinceTimestamp: request.sinceTimestamp }),
        ...(request.untilTimestamp && { untilTimestamp: request.untilTimestamp }),
        requestedWindow: true,
      });
      state.reads.trigger({ ...request, operationId }, workflowNow());
      return { operationId, objectName: request.objectName, readType: 'triggered' };
    },
    {
      validator: (request) => {
        refuse(objectProblem(request?.objectName, state.reads.status(request?.objectName)));
        refuse(triggerWindowProblem(request));
      },
    },
  );

  setHandler(
    requestBackfillUpdate,
    async (request) => {
      await whenReady();
      return (await requestBackfill(request))!;
    },
    {
      validator: (request) => {
        refuse(objectProblem(request?.objectName, state.reads.status(request?.objectName)));
        const window = backfillWindow(request, hasManifestBackfill(request.objectName), workflowNow());
        refuse('problem' in window ? window.problem : undefined);
      },
    },
  );

  setHandler(
    retryOperationUpdate,
    async ({ operationId }) => {
      await whenReady();
      const failed = await describeRetry({ installationId: state.installationId, operationId }).catch(
        passOnRefusal,
      );
      const newOperationId = uuid4();
      if (failed.actionType === 'write') {
        await retryWrite({ operationId, newOperationId }).catch(passOnRefusal);
        return { operationId: newOperationId, retryOf: operationId, actionType: 'write' };
      }
      const problem = objectProblem(failed.objectName, state.reads.status(failed.objectName!));
      if (problem)
        throw ApplicationFailure.nonRetryable(`Cannot retry operation ${operationId}: ${problem}.`);
      await prepareReadRetry({ operationId, newOperationId }).catch(passOnRefusal);
      state.reads.queueRun(
        {
          objectName: failed.objectName!,
          readType: failed.readType!,
          operationId: newOperationId,
          retryOf: operationId,
        },
        workflowNow(),
      );
      return { operationId: newOperationId, retryOf: operationId, actionType: 'read' };
    },
    {
      validator: (request) => {
        if (typeof request?.operationId !== 'string' || !request.operationId)
          throw new Error('operationId is required');
      },
    },
  );

  setHandler(
    pauseReadsUpdate,
    async (request) => {
      await whenReady();
      return { paused: state.reads.pause(request) };
    },
    { validator: (request) => refuse(unknownObjectsProblem(state, request?.objects)) },
  );

  setHandler(
    resumeReadsUpdate,
    async (request) => {
      await whenReady();
      return { resumed: state.reads.resume(request?.objects, workflowNow()) };
    },
    { validator: (request) => refuse(unknownObjectsProblem(state, request?.objects)) },
  );
}

function unknownObjectsProblem(state: InstallationState, objects: unknown): string | undefined {
  if (objects === undefined) return undefined;
  if (!Array.isArray(objects) || objects.some((name) => typeof name !== 'string')) {
    return 'objects must be a list of object names';
  }
  const unknown = objects.filter((name: string) => state.reads.status(name) === 'unknown');
  return unknown.length ? `not read by this installation: ${unknown.join(', ')}` : undefined;
}
