/** Activities the worker runs, thin over src/domain and src/providers. */
export * from './read.js';
export * from './notifications.js';
export * from './installation.js';
export * from './write.js';
export * from './operator.js';
export * from './subscriptions.js';
export * from './schema-watch.js';
export * from './retention.js';
