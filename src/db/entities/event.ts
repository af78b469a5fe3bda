import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, uuidColumn, uuidPrimaryKey } from '../columns.js';

/**
 * The notification outbox: every state change clients may hear about writes its event here in the
 * same transaction as the change; routing and delivery happen afterwards.
 */
export interface NotificationEvent {
  id: string;
  projectId: string;
  type: string;
  data: Record<string, unknown>;
  createTime: Date;
  /** Set once the event was matched against routes (delivered or kept as unrouted). */
  routedTime?: Date;
}

export const NotificationEventEntity = new EntitySchema<NotificationEvent>({
  name: 'NotificationEvent',
  tableName: 'events',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    type: { type: 'string' },
    data: jsonColumn,
    createTime: { ...timestampColumn, onCreate: () => new Date() },
    routedTime: { ...timestampColumn, nullable: true },
  },
});
