export const SCHEMA_WATCH_DELIVERY_WORKFLOW_TYPE = 'deliverSchemaWatchWorkflow';

/** One schema watch run of an installation (an activity of its workflow). */
export interface SchemaWatchInput {
  installationId: string;
  /** The run's operation id, made by the workflow so a retried activity records the run once. */
  runId: string;
}

export interface SchemaWatchOutcome {
  operationId?: string;
  messages: number;
}

/** The `schema.watch` messages one run found, delivered in order to the watch's destination. */
export interface SchemaWatchDeliveryInput {
  operationId: string;
  projectId: string;
  messageIds: string[];
}

export interface SchemaWatchDeliveryResult {
  delivered: number;
  failed: number;
  error?: string;
}
