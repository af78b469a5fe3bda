import type { ReadType } from '../../schemas/reads.js';

export const READ_WORKFLOW_TYPE = 'readObjectWorkflow';

/**
 * What a read waits for before its next step, carried from the step that failed to the one that
 * tries again (an inline read's hand-over to its child, each turn of the child's loop): one value,
 * so the retry arithmetic reads one thing wherever the read resumes.
 */
export interface ReadWait {
  /** Failed deliveries of the page at the checkpoint: the retry schedule's delay follows from it. */
  failedAttempts: number;
  /** The destination's Retry-After on the last of them. */
  retryAfterMs?: number;
  /**
   * The provider asked that nothing be sent for this long (a `Retry-After` longer than the HTTP layer
   * waits in place).
   */
  providerWaitMs?: number;
}

/** What versions before ReadWait carried as loose fields; still read from older histories. */
interface LegacyWait {
  failedAttempts?: number;
  retryAfterMs?: number;
  providerWaitMs?: number;
}

/** What the installation workflow asks of one read; the child's workflow id is `read/<operationId>`. */
export interface ReadObjectInput extends LegacyWait {
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
  /** Handed over by an inline read that must wait first (its destination or its provider asked to). */
  wait?: ReadWait;
}

/** What the installation workflow asks of an inline read: at most `maxPages` pages, then hand over. */
export interface InlineReadInput extends ReadObjectInput {
  maxPages: number;
}

/** How a read ended, as the one function that ends a read's operation records it. */
export interface ReadEnding {
  status: 'success' | 'failure';
  error?: string;
  authFailure?: boolean;
  /** Failed at the destination (refused, down, disabled), not at the provider: re-enabling it resumes the read. */
  destinationFailure?: boolean;
}

/** The input of `finishReadOperation`: the read and how it ended. */
export type FinishReadInput = ReadObjectInput & ReadEnding;

/** Ends a read as cancelled (its installation was deleted). */
export const CANCELLED_READ: ReadEnding = { status: 'failure', error: 'The read was cancelled.' };

/** An inline read's hand-over to its child `readObjectWorkflow`, which resumes from the checkpoint. */
export interface ReadHandover extends LegacyWait {
  handover: true;
  reason: string;
  wait?: ReadWait;
}

/** An inline read either ended (its operation is finished) or hands the rest to a child. */
export type InlineReadOutcome = ({ handover: false } & ReadObjectResult) | ReadHandover;

/**
 * The wait a read input or hand-over carries, from `wait` or (recorded by an older version) its
 * loose fields; undefined when there is nothing to wait for.
 */
export function readWaitOf(carrier: LegacyWait & { wait?: ReadWait }): ReadWait | undefined {
  if (carrier.wait) return carrier.wait;
  const { failedAttempts, retryAfterMs, providerWaitMs } = carrier;
  if (!failedAttempts && !providerWaitMs) return undefined;
  return {
    failedAttempts: failedAttempts ?? 0,
    ...(retryAfterMs !== undefined && { retryAfterMs }),
    ...(providerWaitMs !== undefined && { providerWaitMs }),
  };
}

export interface ReadObjectResult {
  status: 'success' | 'failure';
  recordsProcessed: number;
  /** The provider refused the credentials; repeated auth failures pause the object. */
  authFailure?: boolean;
  result: string;
}
