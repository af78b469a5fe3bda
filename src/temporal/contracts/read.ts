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
}

export interface ReadObjectResult {
  status: 'success' | 'failure';
  recordsProcessed: number;
  /** The provider refused the credentials; repeated auth failures pause the object. */
  authFailure?: boolean;
  result: string;
}
