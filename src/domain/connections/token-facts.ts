import type { Provider } from '../../providers/catalog/index.js';
import { splitScopes, valueAtPath, type TokenResponse } from '../../providers/oauth-client.js';
import type { ProviderMetadata } from '../../schemas/connections.js';

/**
 * Reading a provider's token response by the catalog's `tokenMetadataFields`: where it puts the
 * granted scopes, the consumer and workspace refs, and other facts kept as provider metadata.
 */

/** What a token response tells about a connection: times, granted scopes and provider facts. */
export interface TokenFacts {
  scopes: string[];
  accessTokenIssuedAt: Date;
  accessTokenExpiresAt?: Date;
  /** Only when the response carries a refresh token. */
  refreshTokenIssuedAt?: Date;
  refreshTokenExpiresAt?: Date;
  providerConsumerRef?: string;
  providerWorkspaceRef?: string;
  providerMetadata: ProviderMetadata;
}

export function tokenFacts(
  provider: Provider,
  tokens: TokenResponse,
  requestedScopes: string[],
  now = new Date(),
): TokenFacts {
  const fields = provider.oauth2Opts?.tokenMetadataFields ?? {};
  const asText = (value: unknown) =>
    typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  const scopeValue = fields.scopesField ? valueAtPath(tokens.raw, fields.scopesField) : tokens.scope;
  const scopes = Array.isArray(scopeValue)
    ? scopeValue.filter((scope): scope is string => typeof scope === 'string')
    : typeof scopeValue === 'string'
      ? splitScopes(scopeValue)
      : requestedScopes;
  const providerMetadata: ProviderMetadata = {};
  for (const field of fields.otherFields ?? []) {
    const value = asText(valueAtPath(tokens.raw, field.path));
    if (value !== undefined) providerMetadata[field.name] = { value, source: 'token' };
  }
  return {
    scopes,
    accessTokenIssuedAt: now,
    accessTokenExpiresAt: tokens.expiresIn ? new Date(now.getTime() + tokens.expiresIn * 1000) : undefined,
    ...(tokens.refreshToken && {
      refreshTokenIssuedAt: now,
      refreshTokenExpiresAt: tokens.refreshExpiresIn
        ? new Date(now.getTime() + tokens.refreshExpiresIn * 1000)
        : undefined,
    }),
    providerConsumerRef: fields.consumerRefField
      ? asText(valueAtPath(tokens.raw, fields.consumerRefField))
      : undefined,
    providerWorkspaceRef: fields.workspaceRefField
      ? asText(valueAtPath(tokens.raw, fields.workspaceRefField))
      : undefined,
    providerMetadata,
  };
}
