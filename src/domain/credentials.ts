import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { ConnectionEntity, ProviderAppEntity, type Connection } from '../db/entities/connection.js';
import { em as newEntityManager, transaction } from '../db/orm.js';
import type { AuthMaterial, ConnectionTarget } from '../providers/auth-material.js';
import { getProvider, type Provider } from '../providers/catalog/index.js';
import {
  clientCredentialsToken,
  refreshAccessToken,
  TokenEndpointError,
  type TokenResponse,
} from '../providers/oauth-client.js';
import { recordConnectionError, recordConnectionEvent } from './connections/events.js';
import { renderProviderUrl, templateVars } from './connections/provider-metadata.js';
import { requestJwtBearerToken } from './connections/jwt-bearer.js';
import { renewPasswordToken } from './connections/password-grant.js';
import {
  hasRenewableToken,
  openCredentials,
  providerForScheme,
  sealCredentials,
  type StoredCredentials,
} from './connections/sealed-credentials.js';
import { tokenFacts } from './connections/token-facts.js';
import { findGroupByRef } from './groups.js';
import { providerAppSecret } from './provider-apps.js';

/**
 * The credentials contract: how the runtime (connectors, reads, writes, metadata) gets working
 * credentials for a connection. OAuth access tokens are refreshed ahead of expiry, and at most one
 * process refreshes a given connection at a time, so a provider that rotates refresh tokens never
 * sees the same refresh token twice.
 */

/** Refresh when less than this is left (or half the token's lifetime, for short-lived tokens). */
export const REFRESH_AHEAD_MS = 5 * 60_000;

/** First key of the two-key advisory lock, so Ferry's connection locks never collide with others'. */
const LOCK_NAMESPACE = 0x46525259; // "FRRY"

/** The group's connection to `provider`; a 404 problem when it has none. */
export async function findGroupConnection(
  em: EntityManager,
  projectId: string,
  groupRef: string,
  provider: string,
): Promise<Connection> {
  const group = await findGroupByRef(em, projectId, groupRef);
  const connection =
    group && (await em.findOne(ConnectionEntity, { projectId, groupId: group.id, provider }));
  if (!connection) {
    throw ProblemError.notFound(
      `Group "${groupRef}" has no ${provider} connection.`,
      'Connect the group first, with POST /oauth-connect or POST /projects/{projectIdOrName}/connections:generate.',
    );
  }
  return connection;
}

/** Whether the access token should be renewed now rather than used. */
export function needsRefresh(connection: Connection, now = Date.now()): boolean {
  const expiresAt = connection.accessTokenExpiresAt?.getTime();
  if (expiresAt === undefined) return false;
  const issuedAt = connection.accessTokenIssuedAt?.getTime() ?? now;
  const margin = Math.min(REFRESH_AHEAD_MS, Math.max(0, (expiresAt - issuedAt) / 2));
  return expiresAt - now <= margin;
}

function isExpired(connection: Connection, now = Date.now()): boolean {
  const expiresAt = connection.accessTokenExpiresAt?.getTime();
  return expiresAt !== undefined && expiresAt <= now;
}

function badCredentials(connection: Connection, reason: string | undefined): ProblemError {
  return new ProblemError({
    status: 502,
    type: 'urn:ferry:problem:connection-bad-credentials',
    detail: `The ${connection.provider} credentials of connection ${connection.id} no longer work${reason ? ` (${reason})` : ''}; re-authorize the connection (PATCH .../connections/${connection.id}:oauth-update).`,
    retryable: false,
    context: { connectionId: connection.id, connectionStatus: 'bad_credentials' },
  });
}

/** The connection's provider as its auth method sees it (the OAuth alternative of an API-key provider...). */
function providerOf(connection: Connection): Provider {
  const provider = getProvider(connection.provider);
  if (!provider) {
    throw new ProblemError({
      status: 500,
      detail: `Connection ${connection.id} names provider "${connection.provider}", which is no longer in the catalog.`,
    });
  }
  return providerForScheme(provider, connection.authScheme);
}

/**
 * Asks the provider for a new access token: a refresh grant, a new client-credentials grant, or a
 * new JWT bearer grant with a freshly signed assertion.
 */
async function fetchNewToken(
  em: EntityManager,
  connection: Connection,
  credentials: StoredCredentials,
): Promise<TokenResponse> {
  const provider = providerOf(connection);
  if (credentials.kind === 'jwtBearer') {
    if (!provider.jwtOpts)
      throw badCredentials(connection, `${provider.name} does not take JWT bearer grants`);
    return requestJwtBearerToken(
      provider,
      templateVars(provider, connection),
      credentials,
      connection.scopes,
    );
  }
  const opts = provider.oauth2Opts;
  if (!opts) throw badCredentials(connection, `${provider.name} is not an OAuth 2.0 provider`);
  if (credentials.kind === 'oauth2Password') {
    return renewPasswordToken(provider, templateVars(provider, connection), credentials, connection.scopes);
  }
  const tokenUrl = renderProviderUrl(opts.tokenURL, templateVars(provider, connection));
  if (credentials.kind === 'oauth2ClientCredentials') {
    return clientCredentialsToken(
      {
        tokenUrl,
        client: { clientId: credentials.clientId, clientSecret: credentials.clientSecret },
        authMethod: opts.clientAuthMethod,
      },
      connection.scopes,
      opts.scopeSeparator,
    );
  }
  if (credentials.kind !== 'oauth2AuthorizationCode' || !credentials.refreshToken) {
    throw new TokenEndpointError(
      'The connection has no refresh token; re-authorize it.',
      'rejected',
      'no_refresh_token',
    );
  }
  const app = connection.providerAppId
    ? await em.findOne(ProviderAppEntity, { id: connection.providerAppId, projectId: connection.projectId })
    : null;
  if (!app) {
    throw new TokenEndpointError(
      'The connection has no provider app to refresh its token with; re-authorize it.',
      'rejected',
      'no_provider_app',
    );
  }
  return refreshAccessToken(
    {
      tokenUrl,
      client: { clientId: app.clientId, clientSecret: providerAppSecret(app) },
      authMethod: opts.clientAuthMethod,
    },
    credentials.refreshToken,
  );
}

/** The provider said the grant itself is dead: only a new authorization helps. */
function isPermanentRejection(error: TokenEndpointError): boolean {
  return (
    error.kind === 'rejected' &&
    [
      'invalid_grant',
      'invalid_client',
      'unauthorized_client',
      'no_refresh_token',
      'no_provider_app',
    ].includes(error.oauthError ?? '')
  );
}

type RefreshOutcome =
  | { kind: 'ok'; connection: Connection }
  | { kind: 'bad'; connection: Connection; reason?: string }
  | { kind: 'failed'; connection: Connection; reason: string; retryable: boolean };

export interface RefreshOptions {
  /** Refresh even if the token is not near expiry (after a 401), unless another process just did. */
  force?: boolean;
  /**
   * The `credentialsEncrypted` the caller last used. If the row holds different credentials, another
   * process refreshed (or the user re-authorized) meanwhile, and those are used instead.
   */
  seenCredentials?: string;
}

/**
 * Refreshes the connection's access token if needed, under a transaction-scoped advisory lock on
 * the connection: a second process waits, re-reads the row and uses the token the first obtained.
 * `invalid_grant` marks the connection `bad_credentials` and writes `connection.error`; a successful
 * refresh writes `connection.refreshed`. Returns the current row.
 */
export async function refreshConnectionCredentials(
  connectionId: string,
  options: RefreshOptions = {},
): Promise<Connection> {
  const em = await newEntityManager();
  const outcome = await em.transactional(async (tx): Promise<RefreshOutcome | undefined> => {
    await tx.execute('select pg_advisory_xact_lock(?, hashtext(?))', [LOCK_NAMESPACE, connectionId]);
    // A fresh entity manager: this read happens after the lock, so it sees the last holder's commit.
    const connection = await tx.findOne(ConnectionEntity, { id: connectionId });
    if (!connection) return undefined;
    if (!hasRenewableToken(connection)) return { kind: 'ok', connection };
    const changedMeanwhile =
      options.seenCredentials !== undefined && connection.credentialsEncrypted !== options.seenCredentials;
    if (changedMeanwhile && !isExpired(connection) && connection.status === 'working')
      return { kind: 'ok', connection };
    if (!options.force && !needsRefresh(connection)) return { kind: 'ok', connection };
    if (connection.status === 'bad_credentials')
      return { kind: 'bad', connection, reason: connection.lastError ?? undefined };

    const markBad = async (reason: string): Promise<RefreshOutcome> => {
      connection.status = 'bad_credentials';
      connection.lastError = reason;
      await recordConnectionError(tx, connection, reason);
      return { kind: 'bad', connection, reason };
    };
    const credentials = openCredentials(connection);
    // The provider said when the refresh token stops working: past that, asking is pointless.
    const refreshExpiresAt = connection.refreshTokenExpiresAt;
    if (
      credentials.kind === 'oauth2AuthorizationCode' &&
      refreshExpiresAt &&
      refreshExpiresAt <= new Date()
    ) {
      return markBad(`its refresh token expired at ${refreshExpiresAt.toISOString()}`);
    }
    let tokens: TokenResponse;
    try {
      tokens = await fetchNewToken(tx, connection, credentials);
    } catch (error) {
      if (!(error instanceof TokenEndpointError)) throw error;
      if (!isPermanentRejection(error)) {
        return { kind: 'failed', connection, reason: error.message, retryable: error.kind === 'unavailable' };
      }
      return markBad(error.message);
    }
    const facts = tokenFacts(providerOf(connection), tokens, connection.scopes);
    const renewed: StoredCredentials =
      credentials.kind === 'oauth2ClientCredentials' || credentials.kind === 'jwtBearer'
        ? { ...credentials, accessToken: tokens.accessToken, tokenType: tokens.tokenType }
        : credentials.kind === 'oauth2Password'
          ? {
              ...credentials,
              accessToken: tokens.accessToken,
              refreshToken: tokens.refreshToken ?? credentials.refreshToken,
              tokenType: tokens.tokenType,
            }
          : {
              kind: 'oauth2AuthorizationCode',
              accessToken: tokens.accessToken,
              // Providers that do not rotate send no new refresh token: the old one stays valid.
              refreshToken:
                tokens.refreshToken ??
                (credentials.kind === 'oauth2AuthorizationCode' ? credentials.refreshToken : undefined),
              tokenType: tokens.tokenType,
            };
    connection.credentialsEncrypted = sealCredentials(renewed);
    connection.scopes = facts.scopes;
    connection.accessTokenIssuedAt = facts.accessTokenIssuedAt;
    connection.accessTokenExpiresAt = facts.accessTokenExpiresAt ?? (null as unknown as undefined);
    if (tokens.refreshToken) {
      connection.refreshTokenIssuedAt = facts.refreshTokenIssuedAt;
      connection.refreshTokenExpiresAt = facts.refreshTokenExpiresAt ?? (null as unknown as undefined);
    }
    connection.status = 'working';
    connection.lastError = null as unknown as undefined;
    await recordConnectionEvent(tx, connection, 'connection.refreshed');
    return { kind: 'ok', connection };
  });
  if (!outcome) throw ProblemError.notFound(`Connection "${connectionId}" was not found.`);
  switch (outcome.kind) {
    case 'ok':
      return outcome.connection;
    case 'bad':
      throw badCredentials(outcome.connection, outcome.reason);
    case 'failed':
      // A token that still works is better than none while the token endpoint is down.
      if (!options.force && !isExpired(outcome.connection)) return outcome.connection;
      throw new ProblemError({
        status: 502,
        type: 'urn:ferry:problem:token-refresh-failed',
        detail: `Could not refresh the ${outcome.connection.provider} token of connection ${connectionId}: ${outcome.reason}`,
        retryable: outcome.retryable,
        ...(outcome.retryable && { retryAfter: 5 }),
        context: { connectionId },
      });
  }
}

function authMaterial(provider: Provider | undefined, credentials: StoredCredentials): AuthMaterial {
  switch (credentials.kind) {
    case 'oauth2AuthorizationCode':
    case 'oauth2ClientCredentials':
    case 'oauth2Password':
    case 'jwtBearer':
      // A JWT bearer grant buys an OAuth 2.0 access token, sent as one.
      return { type: 'oauth2', accessToken: credentials.accessToken };
    case 'custom':
      return { type: 'custom', values: credentials.values };
    case 'none':
      return { type: 'none' };
    case 'basic':
      return { type: 'basic', username: credentials.username, password: credentials.password };
    case 'apiKey': {
      // `provider` is the connection's method: an API key that method sends as Basic becomes Basic.
      const asBasic = provider?.authType === 'basic' && provider.basicOpts?.apiKeyAsBasic;
      if (!asBasic) return { type: 'apiKey', apiKey: credentials.apiKey };
      const options = provider.basicOpts?.apiKeyAsBasicOpts;
      const value = options?.keyFormat
        ? options.keyFormat.replace('%s', credentials.apiKey)
        : credentials.apiKey;
      return options?.fieldUsed === 'password'
        ? { type: 'basic', username: '', password: value }
        : { type: 'basic', username: value, password: '' };
    }
  }
}

/**
 * How a connector reaches one connection's account. `auth()` returns the current credentials,
 * refreshing OAuth tokens that are (nearly) expired; `auth({ forceRefresh: true })` after a 401
 * refreshes unless another process already did since this target last looked.
 */
export async function connectionTarget(connectionId: string): Promise<ConnectionTarget> {
  const em = await newEntityManager();
  let connection = await em.findOne(ConnectionEntity, { id: connectionId });
  if (!connection) throw ProblemError.notFound(`Connection "${connectionId}" was not found.`);
  const catalogProvider = getProvider(connection.provider);
  const provider = catalogProvider && providerForScheme(catalogProvider, connection.authScheme);
  const templateValues = templateVars(provider, connection);
  return {
    provider: connection.provider,
    connectionId,
    templateVars: templateValues,
    async auth(options = {}) {
      const current = connection!;
      if (hasRenewableToken(current) && (options.forceRefresh || needsRefresh(current))) {
        connection = await refreshConnectionCredentials(connectionId, {
          force: options.forceRefresh,
          seenCredentials: current.credentialsEncrypted,
        });
      }
      return authMaterial(provider, openCredentials(connection!));
    },
    async rejected(reason) {
      await markCredentialsRefused(connectionId, reason);
    },
  };
}

/**
 * The provider refused the connection's credentials even fresh: `bad_credentials` and one
 * `connection.error`, until the customer re-authorizes (which sets it `working` again).
 */
export async function markCredentialsRefused(connectionId: string, reason: string): Promise<void> {
  await transaction(async (tx) => {
    const connection = await tx.findOne(
      ConnectionEntity,
      { id: connectionId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!connection || connection.status === 'bad_credentials') return;
    connection.status = 'bad_credentials';
    connection.lastError = reason;
    await recordConnectionError(tx, connection, reason);
  });
}
