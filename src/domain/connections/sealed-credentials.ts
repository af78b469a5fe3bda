import { decryptJson, encryptJson } from '../../crypto/secrets.js';
import type { Connection } from '../../db/entities/connection.js';

/**
 * A connection's credentials as stored: one customer's credentials for one provider, sealed
 * (AES-256-GCM) in `credentialsEncrypted`, and the auth scheme each kind is listed under. Times and
 * scopes stay in the clear on the connection so lists never decrypt anything.
 */

export type StoredCredentials =
  | { kind: 'oauth2AuthorizationCode'; accessToken: string; refreshToken?: string; tokenType?: string }
  | {
      kind: 'oauth2ClientCredentials';
      clientId: string;
      clientSecret: string;
      accessToken: string;
      tokenType?: string;
    }
  | { kind: 'apiKey'; apiKey: string }
  | { kind: 'basic'; username: string; password: string };

export const authSchemes = {
  oauth2AuthorizationCode: 'oauth2/authorizationCode',
  oauth2ClientCredentials: 'oauth2/clientCredentials',
  apiKey: 'apiKey',
  basic: 'basic',
} as const satisfies Record<StoredCredentials['kind'], string>;

export function sealCredentials(credentials: StoredCredentials): string {
  return encryptJson(credentials);
}

export function openCredentials(connection: Pick<Connection, 'credentialsEncrypted'>): StoredCredentials {
  return decryptJson<StoredCredentials>(connection.credentialsEncrypted);
}

export function isOAuth2Connection(connection: Pick<Connection, 'authScheme'>): boolean {
  return connection.authScheme.startsWith('oauth2/');
}
