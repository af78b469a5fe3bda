import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { decryptSecret, encryptSecret, hashToken } from '../crypto/secrets.js';
import {
  ConsumerEntity,
  GroupEntity,
  ProviderAppEntity,
  type Connection,
  type ProviderApp,
} from '../db/entities/connection.js';
import { OAuthStateEntity, type OAuthState } from '../db/entities/oauth-state.js';
import type { Project } from '../db/entities/project.js';
import { logger } from '../logger.js';
import {
  exchangeAuthorizationCode,
  TokenEndpointError,
  type TokenResponse,
} from '../providers/oauth-client.js';
import type { ConnectionView, ProviderMetadata } from '../schemas/connections.js';
import type { OAuthConnectInput } from '../schemas/oauth.js';
import { findConnection } from './connections/lookups.js';
import {
  checkTemplateValues,
  normaliseProviderMetadata,
  renderProviderUrl,
  templateVars,
} from './connections/provider-metadata.js';
import { authSchemes } from './connections/sealed-credentials.js';
import { tokenFacts } from './connections/token-facts.js';
import { connectionView } from './connections/views.js';
import { saveConnection } from './connections/writes.js';
import { ensureConsumer, ensureGroup } from './groups.js';
import {
  defaultProviderApp,
  findProviderApp,
  providerAppSecret,
  requireOAuth2Provider,
  type OAuth2Provider,
} from './provider-apps.js';

/**
 * The OAuth 2.0 authorization-code flow (RFC 6749 4.1, with PKCE per RFC 7636 where the provider
 * supports it): `POST /oauth-connect` or `:oauth-update` stores a single-use state and returns the
 * provider's authorization URL; the provider sends the browser to `GET /v1/oauth-callback`, which
 * consumes the state, exchanges the code and saves the connection.
 */

export const STATE_TTL_MS = 10 * 60_000;
/** Consumed and expired states are kept this long, so the callback can say "used" or "expired". */
const STATE_RETENTION_MS = 24 * 60 * 60_000;

/** Where providers send the browser back: under Ferry's public URL (FERRY_PUBLIC_API_URL). */
export function oauthCallbackUrl(publicApiUrl: string): string {
  return `${publicApiUrl}/v1/oauth-callback`;
}

interface AuthorizationRequest {
  projectId: string;
  provider: OAuth2Provider;
  app: ProviderApp;
  groupRef: string;
  groupName?: string;
  consumerRef: string;
  consumerName?: string;
  providerWorkspaceRef?: string;
  providerMetadata: ProviderMetadata;
  connectionId?: string;
  redirectUrl?: string;
  /** Ferry's public URL, which the callback's is under. */
  publicApiUrl: string;
}

function requireAuthorizationCodeGrant(provider: OAuth2Provider, field: string): void {
  const { grantType } = provider.oauth2Opts;
  if (grantType !== 'authorizationCode' && grantType !== 'authorizationCodePKCE') {
    throw ProblemError.invalid([
      {
        in: 'body',
        name: field,
        value: provider.name,
        detail: `${provider.name} uses the OAuth 2.0 ${grantType} grant, which has no browser flow; create its connection with POST /projects/{projectIdOrName}/connections:generate`,
      },
    ]);
  }
}

/** Scopes asked for: the provider app's, else the catalog's defaults. */
function requestedScopes(provider: OAuth2Provider, app: ProviderApp): string[] {
  const fromApp = [...new Set(app.scopes.flat())];
  if (fromApp.length) return fromApp;
  if (provider.oauth2Opts.explicitScopesRequired) {
    throw ProblemError.invalid([
      {
        in: 'body',
        name: 'providerAppId',
        value: app.id,
        detail: `${provider.name} has no default scopes: set scopes on provider app ${app.id} (PATCH .../provider-apps/${app.id})`,
      },
    ]);
  }
  return [...(provider.oauth2Opts.defaultScopes ?? [])];
}

function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Forgets states that can no longer be used or explained; cheap thanks to the expire_time index. */
async function sweepStates(em: EntityManager): Promise<void> {
  await em.nativeDelete(OAuthStateEntity, { expireTime: { $lt: new Date(Date.now() - STATE_RETENTION_MS) } });
}

async function authorizationUrl(em: EntityManager, request: AuthorizationRequest): Promise<string> {
  const { provider, app } = request;
  const opts = provider.oauth2Opts;
  const scopes = requestedScopes(provider, app);
  if (opts.explicitWorkspaceRequired && !request.providerWorkspaceRef) {
    throw ProblemError.invalid([
      { in: 'body', name: 'providerWorkspaceRef', detail: `${provider.name} needs the customer’s workspace` },
    ]);
  }
  const vars = templateVars(provider, request);
  const url = new URL(renderProviderUrl(opts.authURL!, vars));
  renderProviderUrl(opts.tokenURL, vars); // fail now, not in the callback, when the token URL lacks a value

  const state = randomBytes(32).toString('base64url');
  const pkce = opts.pkce || opts.grantType === 'authorizationCodePKCE' ? pkcePair() : undefined;
  const redirectUri = oauthCallbackUrl(request.publicApiUrl);
  await sweepStates(em);
  em.persist(
    em.create(OAuthStateEntity, {
      id: randomUUID(),
      stateHash: hashToken(state),
      projectId: request.projectId,
      provider: provider.name,
      providerAppId: app.id,
      connectionId: request.connectionId,
      groupRef: request.groupRef,
      groupName: request.groupName,
      consumerRef: request.consumerRef,
      consumerName: request.consumerName,
      providerWorkspaceRef: request.providerWorkspaceRef,
      providerMetadata: request.providerMetadata,
      scopes,
      codeVerifierEncrypted: pkce && encryptSecret(pkce.verifier),
      redirectUri,
      redirectUrl: request.redirectUrl,
      expireTime: new Date(Date.now() + STATE_TTL_MS),
      createTime: new Date(),
    }),
  );
  await em.flush();

  for (const [name, value] of Object.entries(opts.authURLParams ?? {})) url.searchParams.set(name, value);
  const authQueryParams = (app.metadata.authQueryParams ?? {}) as Record<string, string[]>;
  for (const [name, values] of Object.entries(authQueryParams)) url.searchParams.set(name, values.join(' '));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  if (scopes.length) url.searchParams.set('scope', scopes.join(opts.scopeSeparator ?? ' '));
  url.searchParams.set('state', state);
  if (pkce) {
    url.searchParams.set('code_challenge', pkce.challenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

/** `POST /oauth-connect`: the authorization URL for a new (or renewed) connection of a group. */
export async function startOAuthConnect(
  em: EntityManager,
  project: Project,
  input: OAuthConnectInput,
  publicApiUrl: string,
): Promise<string> {
  const provider = requireOAuth2Provider(input.provider);
  requireAuthorizationCodeGrant(provider, 'provider');
  let app: ProviderApp | null;
  if (input.providerAppId) {
    app = await findProviderApp(em, project.id, input.providerAppId).catch(() => null);
    if (!app) {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: 'providerAppId',
          value: input.providerAppId,
          detail: 'no provider app of this project has this ID',
        },
      ]);
    }
    if (app.provider !== provider.name) {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: 'providerAppId',
          value: input.providerAppId,
          detail: `provider app ${app.id} is for ${app.provider}, not ${provider.name}`,
        },
      ]);
    }
  } else {
    app = await defaultProviderApp(em, project.id, provider.name);
    if (!app) {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: 'provider',
          value: provider.name,
          detail: `project "${project.name}" has no provider app for ${provider.name}; create one with POST /projects/${project.name}/provider-apps`,
        },
      ]);
    }
  }
  const providerMetadata = normaliseProviderMetadata(input.providerMetadata);
  checkTemplateValues(provider, providerMetadata);
  return authorizationUrl(em, {
    publicApiUrl,
    projectId: project.id,
    provider,
    app,
    groupRef: input.groupRef,
    groupName: input.groupName,
    consumerRef: input.consumerRef,
    consumerName: input.consumerName,
    providerWorkspaceRef: input.providerWorkspaceRef,
    providerMetadata,
    redirectUrl: input.redirectUrl,
  });
}

/** `PATCH .../connections/{id}:oauth-update`: the authorization URL that renews this connection. */
export async function startOAuthUpdate(
  em: EntityManager,
  project: Project,
  connectionId: string,
  publicApiUrl: string,
): Promise<string> {
  const connection: Connection = await findConnection(em, project.id, connectionId);
  if (connection.authScheme !== authSchemes.oauth2AuthorizationCode) {
    throw ProblemError.badRequest(
      `Connection ${connection.id} uses ${connection.authScheme}, not OAuth 2.0 authorization code; replace its credentials with POST .../connections:generate.`,
    );
  }
  const provider = requireOAuth2Provider(connection.provider);
  requireAuthorizationCodeGrant(provider, 'provider');
  const app =
    (connection.providerAppId &&
      (await em.findOne(ProviderAppEntity, { id: connection.providerAppId, projectId: project.id }))) ||
    (await defaultProviderApp(em, project.id, provider.name));
  if (!app) {
    throw ProblemError.badRequest(
      `Project "${project.name}" has no provider app for ${provider.name}; create one with POST /projects/${project.name}/provider-apps.`,
    );
  }
  const group = await em.findOneOrFail(GroupEntity, { id: connection.groupId });
  const consumer = await em.findOneOrFail(ConsumerEntity, { id: connection.consumerId });
  return authorizationUrl(em, {
    publicApiUrl,
    projectId: project.id,
    provider,
    app,
    groupRef: group.groupRef,
    consumerRef: consumer.consumerRef,
    providerWorkspaceRef: connection.providerWorkspaceRef ?? undefined,
    providerMetadata: connection.providerMetadata as ProviderMetadata,
    connectionId: connection.id,
  });
}

export type CallbackResult =
  | {
      status: 'success';
      connectionId: string;
      /** The saved connection as the API shows it (no credentials), for the opener window. */
      connection: ConnectionView;
      created: boolean;
      provider: string;
      redirectUrl?: string;
    }
  | { status: 'failure'; error: string; provider?: string; redirectUrl?: string };

/** Marks the state used; only the first caller gets the row, every later one gets a reason. */
async function consumeState(
  em: EntityManager,
  state: string,
): Promise<{ row: OAuthState } | { error: string; row?: OAuthState }> {
  const row = await em.findOne(OAuthStateEntity, { stateHash: hashToken(state) });
  if (!row) {
    return {
      error: 'This authorization is unknown to Ferry: the link is not one Ferry issued. Start again.',
    };
  }
  const taken = await em.nativeUpdate(
    OAuthStateEntity,
    { id: row.id, consumeTime: null },
    { consumeTime: new Date() },
  );
  if (taken === 0) {
    return { error: 'This authorization was already used; each link works once. Start again.' };
  }
  if (row.expireTime.getTime() <= Date.now()) {
    return {
      row,
      error: `This authorization expired (links are valid for ${STATE_TTL_MS / 60_000} minutes). Start again.`,
    };
  }
  return { row };
}

function providerError(provider: string, code: string, description?: string): string {
  const detail = description ? `: ${description.slice(0, 300)}` : '';
  if (code === 'access_denied') return `Access was denied at ${provider}${detail}. Nothing was connected.`;
  return `${provider} returned an error (${code.slice(0, 100)})${detail}. Nothing was connected.`;
}

/**
 * `GET /v1/oauth-callback`: consumes the state (single use, even when something fails next),
 * exchanges the code, and creates or renews the group's connection in one transaction.
 */
export async function completeOAuthCallback(
  em: EntityManager,
  query: { code?: string; state?: string; error?: string; error_description?: string },
): Promise<CallbackResult> {
  if (!query.state) {
    return {
      status: 'failure',
      error: 'The provider sent no state parameter, so this authorization cannot be matched.',
    };
  }
  const consumed = await consumeState(em, query.state);
  if ('error' in consumed) {
    return {
      status: 'failure',
      error: consumed.error,
      provider: consumed.row?.provider,
      redirectUrl: consumed.row?.redirectUrl ?? undefined,
    };
  }
  const { row } = consumed;
  const fail = (error: string): CallbackResult => ({
    status: 'failure',
    error,
    provider: row.provider,
    redirectUrl: row.redirectUrl ?? undefined,
  });
  if (query.error) return fail(providerError(row.provider, query.error, query.error_description));
  if (!query.code) return fail(`${row.provider} sent no authorization code. Nothing was connected.`);

  const app = await em.findOne(ProviderAppEntity, { id: row.providerAppId, projectId: row.projectId });
  if (!app) return fail('The provider app of this authorization was deleted. Nothing was connected.');
  let provider: OAuth2Provider;
  try {
    provider = requireOAuth2Provider(row.provider);
  } catch {
    return fail(`${row.provider} is no longer an OAuth 2.0 provider in Ferry’s catalog.`);
  }
  const vars = templateVars(provider, row);
  let tokens: TokenResponse;
  try {
    tokens = await exchangeAuthorizationCode(
      {
        tokenUrl: renderProviderUrl(provider.oauth2Opts.tokenURL, vars),
        client: { clientId: app.clientId, clientSecret: providerAppSecret(app) },
        authMethod: provider.oauth2Opts.clientAuthMethod,
      },
      {
        code: query.code,
        redirectUri: row.redirectUri,
        codeVerifier: row.codeVerifierEncrypted ? decryptSecret(row.codeVerifierEncrypted) : undefined,
      },
    );
  } catch (error) {
    if (error instanceof TokenEndpointError) {
      return fail(
        `Could not exchange the authorization code at ${provider.name}: ${error.message} Nothing was connected.`,
      );
    }
    throw error;
  }
  const facts = tokenFacts(provider, tokens, row.scopes);
  try {
    const { connection, created } = await em.transactional(async (tx) => {
      const group = await ensureGroup(tx, row.projectId, row.groupRef, row.groupName ?? undefined);
      const consumer = await ensureConsumer(
        tx,
        row.projectId,
        row.consumerRef,
        row.consumerName ?? undefined,
      );
      return saveConnection(
        tx,
        row.projectId,
        {
          provider: provider.name,
          group,
          consumer,
          providerAppId: app.id,
          providerWorkspaceRef: row.providerWorkspaceRef ?? facts.providerWorkspaceRef,
          providerConsumerRef: facts.providerConsumerRef,
          providerMetadata: { ...facts.providerMetadata, ...(row.providerMetadata as ProviderMetadata) },
          credentials: {
            kind: 'oauth2AuthorizationCode',
            accessToken: tokens.accessToken,
            refreshToken: tokens.refreshToken,
            tokenType: tokens.tokenType,
          },
          scopes: facts.scopes,
          accessTokenIssuedAt: facts.accessTokenIssuedAt,
          accessTokenExpiresAt: facts.accessTokenExpiresAt,
          refreshTokenIssuedAt: facts.refreshTokenIssuedAt,
          refreshTokenExpiresAt: facts.refreshTokenExpiresAt,
        },
        row.connectionId ?? undefined,
      );
    });
    return {
      status: 'success',
      connectionId: connection.id,
      connection: await connectionView(em, connection),
      created,
      provider: provider.name,
      redirectUrl: row.redirectUrl ?? undefined,
    };
  } catch (error) {
    if (error instanceof ProblemError) return fail(`${error.detail ?? error.title} Nothing was connected.`);
    logger.error({ err: error, provider: provider.name }, 'saving an OAuth connection failed');
    return fail('Ferry could not save the connection. Nothing was connected; try again.');
  }
}
