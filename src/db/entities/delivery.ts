import { EntitySchema } from '@mikro-orm/core';
import { timestampColumn, uuidColumn } from '../columns.js';

/** One attempt to deliver one message to one destination, successful or not. */
export interface DeliveryAttempt {
  id?: string;
  projectId: string;
  destinationId: string;
  messageId: string;
  /** 1 for the first attempt of this message to this destination. */
  attempt: number;
  kind: 'record' | 'notification';
  operationId?: string;
  delivered: boolean;
  /** Recorded before sending, no answer recorded yet (or ever: the sender died). */
  pending?: boolean;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  durationMs: number;
  /** The start of the receiver's answer (truncated). */
  responseBody?: string;
  error?: string;
  createTime: Date;
}

export const DeliveryAttemptEntity = new EntitySchema<DeliveryAttempt>({
  name: 'DeliveryAttempt',
  tableName: 'delivery_attempts',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    projectId: uuidColumn,
    destinationId: uuidColumn,
    messageId: { type: 'string' },
    attempt: { type: 'integer' },
    kind: { type: 'string' },
    operationId: { ...uuidColumn, nullable: true },
    delivered: { type: 'boolean' },
    pending: { type: 'boolean', default: false },
    status: { type: 'integer', nullable: true },
    durationMs: { type: 'integer' },
    responseBody: { type: 'text', nullable: true },
    error: { type: 'text', nullable: true },
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});
