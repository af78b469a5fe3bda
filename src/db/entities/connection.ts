import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

/** The builder's customer organisation or workspace. */
export interface Group {
  id: string;
  projectId: string;
  groupRef: string;
  groupName: string;
  createTime: Date;
  updateTime: Date;
}

export const GroupEntity = new EntitySchema<Group>({
  name: 'Group',
  tableName: 'groups',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    groupRef: { type: 'string' },
    groupName: { type: 'string' },
    ...timestamps,
  },
});

/** The person in the group whose credentials a connection holds. */
export interface Consumer {
  id: string;
  projectId: string;
  consumerRef: string;
  consumerName: string;
  createTime: Date;
  updateTime: Date;
}

export const ConsumerEntity = new EntitySchema<Consumer>({
  name: 'Consumer',
  tableName: 'consumers',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    consumerRef: { type: 'string' },
    consumerName: { type: 'string' },
    ...timestamps,
  },
});

/** A builder's OAuth client at a provider. The secret is stored only encrypted. */
export interface ProviderApp {
  id: string;
  projectId: string;
  provider: string;
  externalRef?: string;
  clientId: string;
  clientSecretEncrypted: string;
  scopes: string[][];
  metadata: Record<string, unknown>;
  createTime: Date;
  updateTime: Date;
}

export const ProviderAppEntity = new EntitySchema<ProviderApp>({
  name: 'ProviderApp',
  tableName: 'provider_apps',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    provider: { type: 'string' },
    externalRef: { type: 'string', nullable: true },
    clientId: { type: 'string' },
    clientSecretEncrypted: { type: 'text' },
    scopes: jsonColumn,
    metadata: jsonColumn,
    ...timestamps,
  },
});

export type ConnectionStatus = 'working' | 'bad_credentials' | 'error';

/**
 * A customer's credentials for one provider. Every credential (tokens, API key, password, client
 * secret) lives in `credentialsEncrypted`, an AES-256-GCM sealed JSON object; only times and scopes
 * are kept in the clear.
 */
export interface Connection {
  id: string;
  projectId: string;
  provider: string;
  groupId: string;
  consumerId: string;
  providerAppId?: string;
  providerWorkspaceRef?: string;
  providerConsumerRef?: string;
  authScheme: string;
  status: ConnectionStatus;
  credentialsEncrypted: string;
  scopes: string[];
  accessTokenIssuedAt?: Date;
  accessTokenExpiresAt?: Date;
  refreshTokenIssuedAt?: Date;
  refreshTokenExpiresAt?: Date;
  providerMetadata: Record<string, unknown>;
  lastError?: string;
  createTime: Date;
  updateTime: Date;
}

export const ConnectionEntity = new EntitySchema<Connection>({
  name: 'Connection',
  tableName: 'connections',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    provider: { type: 'string' },
    groupId: uuidColumn,
    consumerId: uuidColumn,
    providerAppId: { ...uuidColumn, nullable: true },
    providerWorkspaceRef: { type: 'string', nullable: true },
    providerConsumerRef: { type: 'string', nullable: true },
    authScheme: { type: 'string' },
    status: { type: 'string' },
    credentialsEncrypted: { type: 'text' },
    scopes: jsonColumn,
    accessTokenIssuedAt: { ...timestampColumn, nullable: true },
    accessTokenExpiresAt: { ...timestampColumn, nullable: true },
    refreshTokenIssuedAt: { ...timestampColumn, nullable: true },
    refreshTokenExpiresAt: { ...timestampColumn, nullable: true },
    providerMetadata: jsonColumn,
    lastError: { type: 'text', nullable: true },
    ...timestamps,
  },
});
