import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

/**
 * One object's change subscription at the provider, made by an installation's workflow. `id` is
 * Ferry's: the webhook URL `/v1/webhooks/providers/{provider}/{id}` names it.
 */
export interface Subscription {
  id: string;
  projectId: string;
  installationId: string;
  provider: string;
  objectName: string;
  providerSubscriptionId: string;
  /** The provider's signing secret for deliveries, when it issues one; sealed with FERRY_ENCRYPTION_KEY. */
  secretEncrypted?: string;
  /** The installation's subscribe config of the object when the subscription was last made or changed. */
  config: Record<string, unknown>;
  /** When the provider ends it unless renewed (Graph, Jira's dynamic webhooks); absent when it lasts. */
  expiresAt?: Date;
  createTime: Date;
  updateTime: Date;
}

export const SubscriptionEntity = new EntitySchema<Subscription>({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    installationId: uuidColumn,
    provider: { type: 'string' },
    objectName: { type: 'string' },
    providerSubscriptionId: { type: 'text' },
    secretEncrypted: { type: 'text', nullable: true },
    config: jsonColumn,
    expiresAt: { ...timestampColumn, nullable: true },
    ...timestamps,
  },
});
