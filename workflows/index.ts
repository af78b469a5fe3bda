/** Workflows the worker runs; each lives in its own file. */
export { readObjectWorkflow } from './read.js';
export { deliverNotificationWorkflow } from './notification.js';
export { installationWorkflow } from './installation.js';
export { writeRecordsWorkflow } from './write.js';
export { deliverSubscriptionEventWorkflow } from './subscription-event.js';
export { deliverSchemaWatchWorkflow } from './schema-watch.js';
export { retentionWorkflow } from './retention.js';
