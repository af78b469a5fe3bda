import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type * as activities from '../activities/installation.js';
import type * as readActivities from '../activities/read.js';
import type * as operatorActivities from '../activities/operator.js';
import type * as schemaWatchActivities from '../activities/schema-watch.js';

// Every activity of the installation workflow, with its timeouts and retries, in one place.

// The API starts this workflow just before committing the installation: at first start the row may
// not be visible yet, so retry quickly, and end the run if it never appears (the commit failed).
// Ending too early is repaired: the workers' repair loop restarts a committed installation's run.
const objectsNeedingBackfillOptions = {
  startToCloseTimeout: '20 seconds',
  scheduleToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds' },
} as const;

export const { objectsNeedingBackfill } = proxyActivities<typeof activities>(objectsNeedingBackfillOptions);

/**
 * The same as a local activity: run by the worker inside the workflow task that asks, with no
 * activity task for Temporal to schedule, dispatch and record, nor a second workflow task after it.
 * An installation's first start costs the server about half the work (bench:installations' creation).
 */
export const { objectsNeedingBackfill: objectsNeedingBackfillLocally } = proxyLocalActivities<
  typeof activities
>(objectsNeedingBackfillOptions);

export const { recordSchedulePaused, recordSubscriptionFailure, abandonTriggeredReads } = proxyActivities<
  typeof activities
>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '1 minute' },
});

// An operator waits on these (the Update answers once they are done): few quick retries, and a
// refusal (an operation that cannot be retried) fails the Update at once with its reason.
export const { recordRequestedRead, recordIgnoredMessage, describeRetry, prepareReadRetry, retryWrite } =
  proxyActivities<typeof operatorActivities>({
    startToCloseTimeout: '15 seconds',
    retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 5 },
  });

export const { changeSubscriptions } = proxyActivities<typeof activities>({
  // A provider subscription change typically takes 1 to 2 minutes and may take up to 10 (spec: States).
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const { changeSubscriptions: removeSubscriptionsNow } = proxyActivities<typeof activities>({
  // On deletion the API waits about 30 s before terminating the workflow: try within that.
  startToCloseTimeout: '20 seconds',
  scheduleToCloseTimeout: '25 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds' },
});

export const { renewSubscriptions, subscriptionRenewalAt } = proxyActivities<typeof activities>({
  // A renewal is a request or two per expiring subscription. Each failed attempt is an operation the
  // builder sees; after the last, the workflow tries again FERRY_SUBSCRIPTION_RENEWAL_RETRY_SECONDS later.
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 4,
  },
});

export const { watchSchema } = proxyActivities<typeof schemaWatchActivities>({
  // Describes every read object at the provider: a few provider calls each.
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 5,
  },
});

/**
 * A scheduled read inline: a local activity, run by the worker inside the workflow's task, so the
 * server records one marker instead of scheduling, starting and completing an activity (1.3 server
 * operations per read instead of 5.6 as an activity, or 25 as a child workflow: bench/results/).
 * Not retried here: whatever fails hands the read to its child workflow, which retries from the
 * checkpoint. A worker that dies runs it again from the checkpoint on replay. Its summary, shown by
 * the Temporal UI on the installation's history, names the operation as a child's id would.
 */
export function inlineRead(operationId: string) {
  return proxyLocalActivities<typeof readActivities>({
    startToCloseTimeout: '2 minutes',
    retry: { maximumAttempts: 1 },
    summary: `read/${operationId}`,
  }).readObjectInline;
}
