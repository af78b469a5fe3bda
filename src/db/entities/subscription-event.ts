import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, uuidColumn, uuidPrimaryKey } from '../columns.js';

/** One change event a provider sent to a subscription, kept once per provider event id. */
export interface SubscriptionEvent {
  id: string;
  projectId: string;
  subscriptionId: string;
  installationId: string;
  /** The provider's event id, or a digest of the event when it gives none. */
  providerEventId: string;
  /** The event as the connector translated it (`IncomingProviderEvent`, the raw event included). */
  event: Record<string, unknown>;
  /** The subscribe operation that delivers it, once one was made. */
  operationId?: string;
  /** The exact message body delivered, built once when the event is prepared. */
  message?: string;
  /** Why it was not delivered (an event type or fields the config does not watch). */
  skippedReason?: string;
  createTime: Date;
}

export const SubscriptionEventEntity = new EntitySchema<SubscriptionEvent>({
  name: 'SubscriptionEvent',
  tableName: 'subscription_events',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    subscriptionId: uuidColumn,
    installationId: uuidColumn,
    providerEventId: { type: 'text' },
    event: jsonColumn,
    operationId: { ...uuidColumn, nullable: true },
    message: { type: 'text', nullable: true },
    skippedReason: { type: 'text', nullable: true },
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});
