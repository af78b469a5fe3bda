import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, uuidColumn, uuidPrimaryKey } from '../columns.js';

/**
 * One OAuth authorization in flight, from `POST /oauth-connect` (or `:oauth-update`) to the callback.
 * Only the SHA-256 of the `state` parameter is kept, so a database reader cannot complete someone
 * else's flow; the PKCE verifier is sealed. The callback marks the row consumed (single use) and
 * keeps it a while, so a reused link can be told apart from a forged one.
 */
export interface OAuthState {
  id: string;
  stateHash: string;
  projectId: string;
  provider: string;
  providerAppId: string;
  /** Set when the flow re-authorizes an existing connection. */
  connectionId?: string;
  groupRef: string;
  /** Absent: keep the existing group's name (or use the ref for a new group). */
  groupName?: string;
  consumerRef: string;
  consumerName?: string;
  providerWorkspaceRef?: string;
  providerMetadata: Record<string, unknown>;
  scopes: string[];
  codeVerifierEncrypted?: string;
  /** The `redirect_uri` sent to the provider; the token request must repeat it. */
  redirectUri: string;
  /** Where the browser goes after the callback, instead of the result page. */
  redirectUrl?: string;
  expireTime: Date;
  consumeTime?: Date;
  createTime: Date;
}

export const OAuthStateEntity = new EntitySchema<OAuthState>({
  name: 'OAuthState',
  tableName: 'oauth_states',
  properties: {
    id: uuidPrimaryKey,
    stateHash: { type: 'string', unique: true },
    projectId: uuidColumn,
    provider: { type: 'string' },
    providerAppId: uuidColumn,
    connectionId: { ...uuidColumn, nullable: true },
    groupRef: { type: 'string' },
    groupName: { type: 'string', nullable: true },
    consumerRef: { type: 'string' },
    consumerName: { type: 'string', nullable: true },
    providerWorkspaceRef: { type: 'string', nullable: true },
    providerMetadata: jsonColumn,
    scopes: jsonColumn,
    codeVerifierEncrypted: { type: 'text', nullable: true },
    redirectUri: { type: 'text' },
    redirectUrl: { type: 'text', nullable: true },
    expireTime: timestampColumn,
    consumeTime: { ...timestampColumn, nullable: true },
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});
