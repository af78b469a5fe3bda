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

/** When a lifetime the provider gave in seconds ends; undefined when it gave none. */
function secondsAfter(now: Date, seconds: number | undefined): Date | undefined {
  return seconds ? new Date(now.getTime() + seconds * 1000) : undefined;
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
    accessTokenExpiresAt: secondsAfter(now, tokens.expiresIn),
    ...(tokens.refreshToken && {
      refreshTokenIssuedAt: now,
      refreshTokenExpiresAt: secondsAfter(now, tokens.refreshExpiresIn),
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
