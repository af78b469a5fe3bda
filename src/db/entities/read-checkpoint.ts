import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, timestamps, uuidColumn } from '../columns.js';

/**
 * Where one read operation stands: the provider page it will fetch next and what it has delivered.
 * Written after each delivered page, so a read resumed on another worker starts from the last
 * page, never from zero. `plan` freezes everything the read decided at its start (window, fields,
 * destination, message context), so every page is read and shaped the same way.
 */
export interface ReadCheckpoint {
  operationId: string;
  projectId: string;
  installationId: string;
  objectName: string;
  plan: Record<string, unknown>;
  /** Index of the provider page to read next (0 for the first). */
  pageIndex: number;
  /** The provider's token for that page; absent for the first page. */
  pageToken?: string;
  /** Messages of the current page already delivered or stored, so a retry resumes after them. */
  partsDelivered: number;
  recordsProcessed: number;
  /** The newest modification time delivered so far; the object's watermark when the read succeeds. */
  maxUpdatedAt?: Date;
  /** The newest deletion delivered so far from a listing of deletions. */
  maxDeletedAt?: Date;
  /** The provider's cursor the listing ended at (its last page), for the next read. */
  resumeCursor?: string;
  done: boolean;
  createTime: Date;
  updateTime: Date;
}

export const ReadCheckpointEntity = new EntitySchema<ReadCheckpoint>({
  name: 'ReadCheckpoint',
  tableName: 'read_checkpoints',
  properties: {
    operationId: { ...uuidColumn, primary: true },
    projectId: uuidColumn,
    installationId: uuidColumn,
    objectName: { type: 'string' },
    plan: jsonColumn,
    pageIndex: { type: 'integer' },
    pageToken: { type: 'text', nullable: true },
    partsDelivered: { type: 'integer' },
    recordsProcessed: { type: 'integer' },
    maxUpdatedAt: { ...timestampColumn, nullable: true },
    maxDeletedAt: { ...timestampColumn, nullable: true },
    resumeCursor: { type: 'text', nullable: true },
    done: { type: 'boolean' },
    ...timestamps,
  },
});
