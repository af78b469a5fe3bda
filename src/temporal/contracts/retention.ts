import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * The cleanup workflow's message API (one run per deployment, id `retention/<taskQueue>`). The worker
 * starts it with `configureRetentionSignal` (signal-with-start), so a restart with a new
 * FERRY_RETENTION_SCHEDULE reaches the running workflow; operators run a pass at once with the
 * `runRetentionNow` Update from the Temporal UI or CLI.
 */

export const RETENTION_WORKFLOW_TYPE = 'retentionWorkflow';

/** The cleanup's steps, children before parents (operations last, after everything that names them). */
export const RETENTION_TASKS = [
  'operation-logs',
  'delivery-attempts',
  'stored-pages',
  'read-checkpoints',
  'read-fingerprints',
  'subscription-events',
  'events',
  'operations',
] as const;

export type RetentionTask = (typeof RETENTION_TASKS)[number];

export interface RetentionProgress {
  task: RetentionTask;
  deleted: number;
  batches: number;
  /** The slowest batch's wall time. */
  longestBatchMs: number;
  /** Nothing more to delete now; false when the time budget ran out first. */
  done: boolean;
}

export interface RetentionWorkflowInput {
  /** Five-field cron, UTC. */
  schedule: string;
  /** Passes before continue-as-new, beside the server's suggestion (tests lower it). */
  maxPasses?: number;
  /** Carried across continue-as-new. */
  lastPass?: RetentionPassResult;
}

export interface RetentionPassResult {
  startedAt: string;
  finishedAt: string;
  tasks: RetentionProgress[];
}

export interface RetentionDescription {
  schedule: string;
  nextPassAt: string;
  running: boolean;
  lastPass?: RetentionPassResult;
}

export interface RetentionTaskInput {
  task: RetentionTask;
  /** How long one activity call deletes before handing back; the workflow calls again until done. */
  budgetMs: number;
}

export const configureRetentionSignal = defineSignal<[{ schedule: string }]>('configureRetention');
export const runRetentionNowUpdate = defineUpdate<RetentionPassResult, []>('runRetentionNow');
export const describeRetentionQuery = defineQuery<RetentionDescription>('describeRetention');
