import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import {
  ConnectionEntity,
  type Connection,
  type Consumer,
  type Group,
} from '../../db/entities/connection.js';
import { InstallationEntity } from '../../db/entities/installation.js';
import { getProvider } from '../../providers/catalog/index.js';
import type {
  ProviderMetadata,
  ProviderMetadataInputValue,
  UpdateConnectionInput,
} from '../../schemas/connections.js';
import { UpdateConnectionBody } from '../../schemas/connections.js';
import { applyUpdateMask } from '../update-mask.js';
import { recordConnectionEvent } from './events.js';
import { checkTemplateValues, normaliseProviderMetadata } from './provider-metadata.js';
import {
  authSchemes,
  openCredentials,
  sealCredentials,
  type StoredCredentials,
} from './sealed-credentials.js';

/**
 * Changing a project's connections: saving new or renewed credentials, updating metadata and
 * workspace, and deleting; each writes its `connection.*` notification in the same transaction.
 */

/** Everything a new or renewed set of credentials says about a connection. */
export interface ConnectionWrite {
  provider: string;
  group: Group;
  consumer: Consumer;
  providerAppId?: string;
  providerWorkspaceRef?: string;
  providerConsumerRef?: string;
  /** Merged over the connection's current metadata. */
  providerMetadata: ProviderMetadata;
  credentials: StoredCredentials;
  scopes: string[];
  accessTokenIssuedAt?: Date;
  accessTokenExpiresAt?: Date;
  refreshTokenIssuedAt?: Date;
  refreshTokenExpiresAt?: Date;
}

/**
 * Some providers (Google, for one) send a refresh token only on the first consent; re-authorizing
 * must not throw away the one the connection already holds.
 */
function keepRefreshToken(write: ConnectionWrite, existing: Connection | null): void {
  if (!existing || write.credentials.kind !== 'oauth2AuthorizationCode' || write.credentials.refreshToken)
    return;
  const previous = openCredentials(existing);
  if (previous.kind === 'oauth2AuthorizationCode' && previous.refreshToken) {
    write.credentials = { ...write.credentials, refreshToken: previous.refreshToken };
    write.refreshTokenIssuedAt ??= existing.refreshTokenIssuedAt;
    write.refreshTokenExpiresAt ??= existing.refreshTokenExpiresAt;
  }
}

/**
 * Creates the group's connection for the provider, or renews it (or the one named by `connectionId`)
 * with new credentials, back to `working`; writes `connection.created` or `connection.updated`.
 */
export async function saveConnection(
  em: EntityManager,
  projectId: string,
  write: ConnectionWrite,
  connectionId?: string,
): Promise<{ connection: Connection; created: boolean }> {
  const existing = connectionId
    ? await em.findOne(ConnectionEntity, { id: connectionId, projectId, provider: write.provider })
    : await em.findOne(ConnectionEntity, { projectId, groupId: write.group.id, provider: write.provider });
  if (connectionId && !existing) {
    throw ProblemError.notFound(`Connection "${connectionId}" no longer exists.`);
  }
  keepRefreshToken(write, existing);
  const fields = {
    consumerId: write.consumer.id,
    authScheme: authSchemes[write.credentials.kind],
    status: 'working' as const,
    credentialsEncrypted: sealCredentials(write.credentials),
    scopes: write.scopes,
    // null, not undefined: a renewed connection must lose the times its old credentials had.
    accessTokenIssuedAt: write.accessTokenIssuedAt ?? (null as unknown as undefined),
    accessTokenExpiresAt: write.accessTokenExpiresAt ?? (null as unknown as undefined),
    refreshTokenIssuedAt: write.refreshTokenIssuedAt ?? (null as unknown as undefined),
    refreshTokenExpiresAt: write.refreshTokenExpiresAt ?? (null as unknown as undefined),
    lastError: null as unknown as undefined,
  };
  if (existing) {
    Object.assign(existing, fields);
    existing.providerAppId = write.providerAppId ?? (null as unknown as undefined);
    if (write.providerWorkspaceRef) existing.providerWorkspaceRef = write.providerWorkspaceRef;
    if (write.providerConsumerRef) existing.providerConsumerRef = write.providerConsumerRef;
    existing.providerMetadata = { ...existing.providerMetadata, ...write.providerMetadata };
    await recordConnectionEvent(em, existing, 'connection.updated');
    return { connection: existing, created: false };
  }
  const now = new Date();
  const connection = em.create(ConnectionEntity, {
    id: randomUUID(),
    projectId,
    provider: write.provider,
    groupId: write.group.id,
    providerAppId: write.providerAppId,
    providerWorkspaceRef: write.providerWorkspaceRef,
    providerConsumerRef: write.providerConsumerRef,
    providerMetadata: write.providerMetadata,
    ...fields,
    createTime: now,
    updateTime: now,
  });
  em.persist(connection);
  await recordConnectionEvent(em, connection, 'connection.created');
  return { connection, created: true };
}

export async function updateConnection(
  em: EntityManager,
  connection: Connection,
  input: UpdateConnectionInput,
): Promise<void> {
  const draft: Partial<UpdateConnectionInput['connection']> = {};
  applyUpdateMask(
    draft,
    input.connection,
    input.updateMask,
    UpdateConnectionBody.properties.connection,
    'connection',
  );
  const provider = getProvider(connection.provider);
  if (draft.providerMetadata !== undefined) {
    const metadata = normaliseProviderMetadata(draft.providerMetadata as ProviderMetadataInputValue);
    if (provider) checkTemplateValues(provider, metadata, 'connection.');
    connection.providerMetadata = metadata;
  }
  if (draft.providerWorkspaceRef !== undefined) {
    connection.providerWorkspaceRef = draft.providerWorkspaceRef as string;
  }
  await recordConnectionEvent(em, connection, 'connection.updated');
}

/** Refused while an installation uses the connection: it would be left without credentials. */
export async function deleteConnection(em: EntityManager, connection: Connection): Promise<void> {
  const installations = await em.count(InstallationEntity, { connectionId: connection.id });
  if (installations > 0) {
    const users = await em.execute<{ id: string; name: string }[]>(
      `select s.id, i.name from installations s join integrations i on i.id = s.integration_id
        where s.connection_id = ? order by i.name, s.id limit 5`,
      [connection.id],
    );
    const named = users.map((row) => `${row.id} of integration "${row.name}"`).join(', ');
    throw ProblemError.conflict(
      `Connection "${connection.id}" is used by ${installations} installation${installations === 1 ? '' : 's'} (${named}${installations > users.length ? ', …' : ''}); delete ${installations === 1 ? 'it' : 'them'} first.`,
    );
  }
  await recordConnectionEvent(em, connection, 'connection.deleted');
  em.remove(connection);
}
