import type { Provider } from '../../providers/catalog/index.js';
import { parseRsaPrivateKey, signAssertion } from '../../providers/jwt-assertion.js';
import { jwtBearerToken, type TokenResponse } from '../../providers/oauth-client.js';
import { renderProviderUrl } from './provider-metadata.js';

/**
 * The JWT bearer grant as a provider's `jwtOpts` describe it: one fresh assertion per token
 * request, signed with the connection's key, sent to the token URL (RFC 7523 section 2.1).
 */

export interface JwtBearerIdentity {
  privateKey: string;
  issuer: string;
  subject?: string;
  keyId?: string;
}

/** Seconds an assertion lives when the catalog does not say: Google's maximum. */
const DEFAULT_LIFETIME_SECONDS = 3600;

export async function requestJwtBearerToken(
  provider: Provider,
  vars: Record<string, string>,
  identity: JwtBearerIdentity,
  scopes: string[],
): Promise<TokenResponse> {
  const opts = provider.jwtOpts!;
  const tokenUrl = renderProviderUrl(opts.tokenURL, vars);
  const audience = opts.audience ? renderProviderUrl(opts.audience, vars) : tokenUrl;
  const scope = scopes.length ? scopes.join(' ') : undefined;
  const assertion = await signAssertion(parseRsaPrivateKey(identity.privateKey), {
    issuer: identity.issuer,
    subject: identity.subject,
    keyId: identity.keyId,
    audience,
    scope: opts.scopeClaim ? scope : undefined,
    lifetimeSeconds: opts.assertionLifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS,
  });
  return jwtBearerToken(tokenUrl, assertion, opts.scopeClaim ? undefined : scope);
}
