/**
 * Every workflow's id, derived from the Ferry id it serves, so a second start of the same work is
 * refused by Temporal rather than run twice, and an operator finds a run from its operation id.
 */
export const installationWorkflowId = (installationId: string) => `installation/${installationId}`;
export const readWorkflowId = (operationId: string) => `read/${operationId}`;
export const writeWorkflowId = (operationId: string) => `write/${operationId}`;
/** One delivery of one event to one destination; starting it twice is a no-op. */
export const notificationWorkflowId = (eventId: string, destinationId: string) =>
  `notification/${eventId}/${destinationId}`;
/** The delivery of one change event a provider sent; one per event, so a redelivered event is not sent twice. */
export const subscriptionEventWorkflowId = (subscriptionEventId: string) =>
  `subscription-event/${subscriptionEventId}`;
/** The delivery of one schema watch run's messages; one per run. */
export const schemaWatchWorkflowId = (operationId: string) => `schema-watch/${operationId}`;
/** The deployment's cleanup: one per task queue, so deployments sharing a namespace each keep their own. */
export const retentionWorkflowId = (taskQueue: string) => `retention/${taskQueue}`;
