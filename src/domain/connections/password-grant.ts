import { renderProviderTemplate, type Provider } from '../../providers/catalog/index.js';
import {
  passwordToken,
  refreshAccessToken,
  TokenEndpointError,
  type TokenEndpoint,
  type TokenResponse,
} from '../../providers/oauth-client.js';
import { renderProviderUrl } from './provider-metadata.js';

/**
 * The OAuth 2.0 password grant (RFC 6749 section 4.3) as SugarCRM uses it: the user's own username
 * and password, sent with the provider's public client (`oauth2Opts.tokenParams`) unless the
 * connection names a client of its own. Its refresh token is tried first; when the provider refuses
 * it (SugarCRM's expire after two weeks), the stored password buys a new grant.
 */

/** The catalog's extra token parameters, `{{.name}}` placeholders filled (SugarCRM's `platform`). */
function tokenParams(
  provider: Provider,
  vars: Record<string, string>,
  identity: PasswordIdentity,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(provider.oauth2Opts?.tokenParams ?? {})
      // A connection's own client replaces the provider's public one.
      .filter(([name]) => !(identity.clientId && (name === 'client_id' || name === 'client_secret')))
      .map(([name, value]) => [name, renderProviderTemplate(value, vars)]),
  );
}

export interface PasswordIdentity {
  username: string;
  password: string;
  clientId?: string;
  clientSecret?: string;
}

function endpointOf(
  provider: Provider,
  vars: Record<string, string>,
  identity: PasswordIdentity,
): TokenEndpoint {
  const opts = provider.oauth2Opts!;
  return {
    tokenUrl: renderProviderUrl(opts.tokenURL, vars),
    client: identity.clientId
      ? { clientId: identity.clientId, clientSecret: identity.clientSecret ?? '' }
      : undefined,
    authMethod: opts.clientAuthMethod,
  };
}

export function requestPasswordToken(
  provider: Provider,
  vars: Record<string, string>,
  identity: PasswordIdentity,
  scopes: string[],
): Promise<TokenResponse> {
  const opts = provider.oauth2Opts!;
  return passwordToken(
    endpointOf(provider, vars, identity),
    {
      username: identity.username,
      password: identity.password,
      scope: scopes.length ? scopes.join(opts.scopeSeparator ?? ' ') : undefined,
    },
    tokenParams(provider, vars, identity),
  );
}

export async function renewPasswordToken(
  provider: Provider,
  vars: Record<string, string>,
  identity: PasswordIdentity & { refreshToken?: string },
  scopes: string[],
): Promise<TokenResponse> {
  if (identity.refreshToken) {
    try {
      return await refreshAccessToken(
        endpointOf(provider, vars, identity),
        identity.refreshToken,
        tokenParams(provider, vars, identity),
      );
    } catch (error) {
      if (!(error instanceof TokenEndpointError) || error.kind !== 'rejected') throw error;
    }
  }
  return requestPasswordToken(provider, vars, identity, scopes);
}
