import type { ReadType } from '../../schemas/reads.js';

export const READ_WORKFLOW_TYPE = 'readObjectWorkflow';

/** What the installation workflow asks of one read; the child's workflow id is `read/<operationId>`. */
export interface ReadObjectInput {
  operationId: string;
  installationId: string;
  projectId: string;
  objectName: string;
  readType: ReadType;
  /** Triggered reads and requested backfills: the window asked for; absent `sinceTimestamp` means full history. */
  sinceTimestamp?: string;
  untilTimestamp?: string;
  /** Scheduled reads and backfills: when the schedule planned the fire (ISO 8601), to measure how late the read began. */
  plannedAt?: string;
  /**
   * The read runs inline in its installation's workflow (an activity there, no child): recorded on
   * the operation, so operators and the stuck-operation sweep look for the installation's run.
   */
  inline?: boolean;
  /**
   * Handed over by an inline read whose destination failed retryably: the child waits the retry
   * schedule's delay for this many failed attempts before trying the page again.
   */
  failedAttempts?: number;
  retryAfterMs?: number;
  /**
   * Handed over by an inline read that the provider asked to wait (a `Retry-After` longer than the
   * HTTP layer waits in place): the child waits this long before it asks the provider again.
   */
  providerWaitMs?: number;
}

/** What the installation workflow asks of an inline read: at most `maxPages` pages, then hand over. */
export interface InlineReadInput extends ReadObjectInput {
  maxPages: number;
}

/**
 * An inline read either ended (its operation is finished) or hands the rest to a child
 * `readObjectWorkflow`, which resumes from the checkpoint.
 */
export type InlineReadOutcome =
  | ({ handover: false } & ReadObjectResult)
  | {
      handover: true;
      reason: string;
      failedAttempts?: number;
      retryAfterMs?: number;
      providerWaitMs?: number;
    };

export interface ReadObjectResult {
  status: 'success' | 'failure';
  recordsProcessed: number;
  /** The provider refused the credentials; repeated auth failures pause the object. */
  authFailure?: boolean;
  result: string;
}
