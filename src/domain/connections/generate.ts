import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import type { Connection } from '../../db/entities/connection.js';
import { getProvider, type Provider } from '../../providers/catalog/index.js';
import {
  clientCredentialsToken,
  TokenEndpointError,
  type TokenResponse,
} from '../../providers/oauth-client.js';
import type {
  GenerateConnectionInput,
  ProviderMetadata,
  TokenInputValue,
} from '../../schemas/connections.js';
import { ensureConsumer, ensureGroup } from '../groups.js';
import { defaultProviderApp } from '../provider-apps.js';
import {
  checkTemplateValues,
  normaliseProviderMetadata,
  renderProviderUrl,
  templateVars,
} from './provider-metadata.js';
import { tokenFacts, type TokenFacts } from './token-facts.js';
import { saveConnection, type ConnectionWrite } from './writes.js';

/**
 * Connections from credentials the caller already holds, rather than from the OAuth flow: which
 * credential kinds a provider accepts, and how each becomes stored credentials.
 */

const credentialFields = [
  'apiKey',
  'basicAuth',
  'oauth2ClientCredentials',
  'oauth2AuthorizationCode',
] as const;
type CredentialField = (typeof credentialFields)[number];

function invalidCredential(field: string, detail: string, value?: unknown): ProblemError {
  return ProblemError.invalid([{ in: 'body', name: field, detail, ...(value !== undefined && { value }) }]);
}

/** Which credential kinds a provider's auth type accepts. */
function acceptedCredentialFields(provider: Provider): CredentialField[] {
  switch (provider.authType) {
    case 'apiKey':
      return ['apiKey'];
    case 'basic':
      return provider.basicOpts?.apiKeyAsBasic ? ['apiKey', 'basicAuth'] : ['basicAuth'];
    case 'oauth2':
      return ['authorizationCode', 'authorizationCodePKCE'].includes(provider.oauth2Opts?.grantType ?? '')
        ? ['oauth2AuthorizationCode', 'oauth2ClientCredentials']
        : ['oauth2ClientCredentials'];
    default:
      return [];
  }
}

function importedToken(value: TokenInputValue): { token: string; issuedAt?: Date; expiresAt?: Date } {
  if (typeof value === 'string') return { token: value };
  return {
    token: value.token,
    issuedAt: value.issuedAt ? new Date(value.issuedAt) : undefined,
    expiresAt: value.expiresAt ? new Date(value.expiresAt) : undefined,
  };
}

type GeneratedCredentials = Pick<
  ConnectionWrite,
  'credentials' | 'scopes' | 'accessTokenIssuedAt' | 'accessTokenExpiresAt' | 'refreshTokenIssuedAt'
> &
  Partial<Pick<TokenFacts, 'providerConsumerRef' | 'providerWorkspaceRef'>> & {
    tokenMetadata?: ProviderMetadata;
  };

async function clientCredentialsConnection(
  provider: Provider,
  input: NonNullable<GenerateConnectionInput['oauth2ClientCredentials']>,
  vars: Record<string, string>,
): Promise<GeneratedCredentials> {
  const opts = provider.oauth2Opts!;
  const tokenUrl = renderProviderUrl(opts.tokenURL, vars);
  const scopes = input.scopes ?? [];
  let tokens: TokenResponse;
  try {
    tokens = await clientCredentialsToken(
      {
        tokenUrl,
        client: { clientId: input.clientId, clientSecret: input.clientSecret },
        authMethod: opts.clientAuthMethod,
      },
      scopes,
      opts.scopeSeparator,
    );
  } catch (error) {
    if (error instanceof TokenEndpointError && error.kind === 'rejected') {
      throw invalidCredential(
        'oauth2ClientCredentials',
        `${provider.name} refused these client credentials: ${error.message}`,
      );
    }
    if (error instanceof TokenEndpointError) throw ProblemError.badGateway(error.message);
    throw error;
  }
  const facts = tokenFacts(provider, tokens, scopes);
  return {
    credentials: {
      kind: 'oauth2ClientCredentials',
      clientId: input.clientId,
      clientSecret: input.clientSecret,
      accessToken: tokens.accessToken,
      tokenType: tokens.tokenType,
    },
    scopes: facts.scopes,
    accessTokenIssuedAt: facts.accessTokenIssuedAt,
    accessTokenExpiresAt: facts.accessTokenExpiresAt,
    providerConsumerRef: facts.providerConsumerRef,
    providerWorkspaceRef: facts.providerWorkspaceRef,
    tokenMetadata: facts.providerMetadata,
  };
}

function importedAuthorizationCode(
  input: NonNullable<GenerateConnectionInput['oauth2AuthorizationCode']>,
): GeneratedCredentials {
  const access = importedToken(input.accessToken);
  const refresh = input.refreshToken ? importedToken(input.refreshToken) : undefined;
  if (access.issuedAt && access.expiresAt && access.expiresAt <= access.issuedAt) {
    throw invalidCredential(
      'oauth2AuthorizationCode.accessToken.expiresAt',
      'expiresAt must be after issuedAt',
      access.expiresAt.toISOString(),
    );
  }
  return {
    credentials: { kind: 'oauth2AuthorizationCode', accessToken: access.token, refreshToken: refresh?.token },
    scopes: input.scopes ?? [],
    accessTokenIssuedAt: access.issuedAt ?? new Date(),
    accessTokenExpiresAt: access.expiresAt,
    refreshTokenIssuedAt: refresh ? (refresh.issuedAt ?? new Date()) : undefined,
  };
}

/**
 * `POST connections:generate`: a connection from credentials the caller already has. Client
 * credentials are exchanged for a token first, so a connection is only saved when they work.
 */
export async function generateConnection(
  em: EntityManager,
  projectId: string,
  input: GenerateConnectionInput,
): Promise<{ connection: Connection; created: boolean }> {
  const provider = getProvider(input.provider);
  if (!provider) {
    throw invalidCredential(
      'provider',
      `"${input.provider}" is not a provider in Ferry’s catalog`,
      input.provider,
    );
  }
  const given = credentialFields.filter((field) => input[field] !== undefined);
  const accepted = acceptedCredentialFields(provider);
  if (given.length !== 1) {
    throw ProblemError.invalid(
      (given.length ? given : ['credentials']).map((field) => ({
        in: 'body' as const,
        name: field,
        detail: `give exactly one of ${credentialFields.join(', ')}; ${provider.name} accepts ${accepted.join(' or ') || 'none of them'}`,
      })),
    );
  }
  const field = given[0];
  if (!accepted.includes(field)) {
    throw invalidCredential(
      field,
      `${provider.name} authenticates with ${provider.authType}${provider.oauth2Opts ? ` (${provider.oauth2Opts.grantType})` : ''}; give ${accepted.join(' or ') || 'nothing: Ferry cannot hold its credentials yet'}`,
    );
  }
  const metadata = normaliseProviderMetadata(input.providerMetadata);
  checkTemplateValues(provider, metadata);
  const vars = templateVars(provider, {
    providerWorkspaceRef: input.providerWorkspaceRef,
    providerMetadata: metadata,
  });

  let generated: GeneratedCredentials;
  let providerAppId: string | undefined;
  switch (field) {
    case 'apiKey':
      generated = { credentials: { kind: 'apiKey', apiKey: input.apiKey! }, scopes: [] };
      break;
    case 'basicAuth':
      generated = { credentials: { kind: 'basic', ...input.basicAuth! }, scopes: [] };
      break;
    case 'oauth2ClientCredentials':
      generated = await clientCredentialsConnection(provider, input.oauth2ClientCredentials!, vars);
      break;
    case 'oauth2AuthorizationCode':
      generated = importedAuthorizationCode(input.oauth2AuthorizationCode!);
      // The project's app for the provider is what can refresh these tokens later.
      providerAppId = (await defaultProviderApp(em, projectId, provider.name))?.id;
      break;
  }
  const { tokenMetadata, providerConsumerRef, providerWorkspaceRef, ...credentialColumns } = generated;
  return em.transactional(async (tx) => {
    const group = await ensureGroup(tx, projectId, input.groupRef, input.groupName);
    const consumer = await ensureConsumer(tx, projectId, input.consumerRef, input.consumerName);
    return saveConnection(tx, projectId, {
      provider: provider.name,
      group,
      consumer,
      providerAppId,
      providerWorkspaceRef: input.providerWorkspaceRef ?? providerWorkspaceRef,
      providerConsumerRef,
      providerMetadata: { ...tokenMetadata, ...metadata },
      ...credentialColumns,
    });
  });
}
