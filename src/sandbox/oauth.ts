import Router from '@koa/router';
import type { SandboxContext } from './context.js';
import { oauthError } from './errors.js';
import { authorizeRoutes } from './oauth-authorize.js';
import { isHttpUrl } from './oauth-params.js';
import { tokenRoutes } from './oauth-token.js';
import { allScopes } from './tokens.js';

/** The OAuth 2.0 authorization server: consent, code + PKCE, rotating refresh tokens, revocation. */
export function oauthRouter(sandbox: SandboxContext): Router {
  const router = new Router();
  const { oauth } = sandbox;

  router.get('/.well-known/oauth-authorization-server', (ctx) => {
    const base = sandbox.publicUrl();
    ctx.body = {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      registration_endpoint: `${base}/oauth/clients`,
      scopes_supported: allScopes,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256', 'plain'],
    };
  });

  router.post('/oauth/clients', (ctx) => {
    const body = (ctx.request.body ?? {}) as { redirectUris?: unknown; name?: unknown };
    const { redirectUris, name } = body;
    if (
      redirectUris !== undefined &&
      !(Array.isArray(redirectUris) && redirectUris.every((uri) => typeof uri === 'string' && isHttpUrl(uri)))
    ) {
      throw oauthError(
        400,
        'invalid_redirect_uri',
        'redirectUris must be absolute http(s) URLs without fragments.',
      );
    }
    if (name !== undefined && (typeof name !== 'string' || !name.trim())) {
      throw oauthError(400, 'invalid_client_metadata', 'name must be a non-empty string.');
    }
    const client = oauth.registerClient({
      redirectUris: redirectUris as string[] | undefined,
      name: name as string | undefined,
    });
    ctx.status = 201;
    ctx.body = {
      client_id: client.clientId,
      client_secret: client.clientSecret,
      client_name: client.name,
      redirect_uris: client.redirectUris,
    };
  });

  authorizeRoutes(router, sandbox);
  tokenRoutes(router, sandbox);
  return router;
}
