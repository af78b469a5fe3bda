import type { RecordChangeType } from '../../schemas/write.js';

export const WRITE_WORKFLOW_TYPE = 'writeRecordsWorkflow';

/** One record of a write, as the connector receives it. */
export interface WriteItem {
  record?: Record<string, unknown>;
  recordId?: string;
  associations?: unknown[];
}

/** What happened to one record; never carries record data, so it may pass through workflow history. */
export interface WriteOutcome {
  index: number;
  success: boolean;
  recordId?: string;
  error?: string;
}

/** The workflow's input: everything a worker needs, records included (bounded by `maxAsyncPayloadBytes`). */
export interface AsyncWriteInput {
  operationId: string;
  projectId: string;
  installationId: string;
  connectionId: string;
  objectName: string;
  type: RecordChangeType;
  items: WriteItem[];
}
