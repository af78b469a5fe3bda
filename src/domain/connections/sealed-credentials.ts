import { decryptJson, encryptJson } from '../../crypto/secrets.js';
import type { Connection } from '../../db/entities/connection.js';
import {
  authMethodFor,
  providerWithAuthMethod,
  type CredentialKind,
} from '../../providers/catalog/auth-methods.js';
import type { Provider } from '../../providers/catalog/index.js';

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
  | {
      /** RFC 6749 4.3: kept so a new grant can replace a refresh token that expired. */
      kind: 'oauth2Password';
      username: string;
      password: string;
      clientId?: string;
      clientSecret?: string;
      accessToken: string;
      refreshToken?: string;
      tokenType?: string;
    }
  | { kind: 'apiKey'; apiKey: string }
  | { kind: 'basic'; username: string; password: string }
  | {
      /** RFC 7523 JWT bearer: the private key signs each assertion; the access token it bought. */
      kind: 'jwtBearer';
      privateKey: string;
      issuer: string;
      subject?: string;
      keyId?: string;
      accessToken: string;
      tokenType?: string;
    }
  /** The values of the provider's `customOpts.inputs`, by input name. */
  | { kind: 'custom'; values: Record<string, string> }
  | { kind: 'none' };

export const authSchemes = {
  oauth2AuthorizationCode: 'oauth2/authorizationCode',
  oauth2ClientCredentials: 'oauth2/clientCredentials',
  oauth2Password: 'oauth2/password',
  apiKey: 'apiKey',
  basic: 'basic',
  jwtBearer: 'jwt',
  custom: 'custom',
  none: 'none',
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

/** Connections holding an access token that Ferry renews: OAuth 2.0 ones and JWT bearer ones. */
export function hasRenewableToken(connection: Pick<Connection, 'authScheme'>): boolean {
  return isOAuth2Connection(connection) || connection.authScheme === authSchemes.jwtBearer;
}

/** The `connections:generate` credential kind each stored kind came from. */
const generatedAs: Record<StoredCredentials['kind'], CredentialKind | undefined> = {
  oauth2AuthorizationCode: 'oauth2AuthorizationCode',
  oauth2ClientCredentials: 'oauth2ClientCredentials',
  oauth2Password: 'oauth2Password',
  apiKey: 'apiKey',
  basic: 'basicAuth',
  jwtBearer: 'jwt',
  custom: 'customAuth',
  none: undefined,
};

/**
 * The provider as the connection's auth method sees it: the method that takes the connection's kind
 * of credentials (its `authScheme`), which is the main one or one alternative. A kind the provider no
 * longer takes falls back to the main method, as before alternatives existed.
 */
export function providerForScheme(provider: Provider, authScheme: string): Provider {
  const stored = (Object.keys(authSchemes) as StoredCredentials['kind'][]).find(
    (kind) => authSchemes[kind] === authScheme,
  );
  const kind = stored && generatedAs[stored];
  const method = kind && authMethodFor(provider, kind);
  return method ? providerWithAuthMethod(provider, method) : provider;
}
