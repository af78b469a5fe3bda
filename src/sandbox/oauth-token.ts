import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { SandboxContext } from './context.js';
import { oauthError } from './errors.js';
import { parseScope, pkceValue, single } from './oauth-params.js';
import { allScopes, type OAuthClient } from './tokens.js';

/** Client authentication at the token and revocation endpoints: client_secret_basic or client_secret_post. */
function authenticateClient(
  ctx: Context,
  sandbox: SandboxContext,
  body: Record<string, unknown>,
): OAuthClient {
  const header = ctx.get('authorization');
  const postedId = single(body, 'client_id', (m) => oauthError(400, 'invalid_request', m));
  const postedSecret = single(body, 'client_secret', (m) => oauthError(400, 'invalid_request', m));
  if (/^basic /i.test(header)) {
    if (postedSecret) {
      throw oauthError(400, 'invalid_request', 'Use one client authentication method, not two.');
    }
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // RFC 6749 2.3.1: both parts are form-urlencoded before being joined.
    const formDecode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    let client: OAuthClient | undefined;
    try {
      if (colon > 0)
        client = sandbox.oauth.authenticateClient(
          formDecode(decoded.slice(0, colon)),
          formDecode(decoded.slice(colon + 1)),
        );
    } catch {
      client = undefined; // malformed percent-encoding
    }
    if (!client || (postedId && postedId !== client.clientId)) {
      throw oauthError(401, 'invalid_client', 'Client authentication failed.', {
        'WWW-Authenticate': 'Basic realm="sandbox"',
      });
    }
    return client;
  }
  const client =
    postedId && postedSecret ? sandbox.oauth.authenticateClient(postedId, postedSecret) : undefined;
  if (!client) throw oauthError(401, 'invalid_client', 'Client authentication failed.');
  return client;
}

function formBody(ctx: Context): Record<string, unknown> {
  if (!ctx.request.is('application/x-www-form-urlencoded')) {
    throw oauthError(400, 'invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  return (ctx.request.body ?? {}) as Record<string, unknown>;
}

function verifyPkce(challenge: string, method: 'S256' | 'plain', verifier: string | undefined): boolean {
  if (!verifier || !pkceValue.test(verifier)) return false;
  const derived = method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  return derived === challenge;
}

/** POST /oauth/token (authorization_code, rotating refresh_token, client_credentials) and POST /oauth/revoke. */
export function tokenRoutes(router: Router, sandbox: SandboxContext): void {
  const { oauth, faults } = sandbox;

  router.post('/oauth/token', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    if (faults.settings.failTokenEndpoint) {
      throw oauthError(503, 'temporarily_unavailable', 'Injected fault: the token endpoint is down.', {
        'Retry-After': '1',
      });
    }
    const body = formBody(ctx);
    const client = authenticateClient(ctx, sandbox, body);
    const param = (name: string) => single(body, name, (m) => oauthError(400, 'invalid_request', m));
    const grantType = param('grant_type');
    switch (grantType) {
      case 'authorization_code': {
        const code = param('code');
        if (!code) throw oauthError(400, 'invalid_request', 'code is required.');
        const redirectUri = param('redirect_uri');
        const verifier = param('code_verifier');
        const entry = oauth.redeemCode(code);
        if (!entry || entry.clientId !== client.clientId) {
          throw oauthError(
            400,
            'invalid_grant',
            'The authorization code is invalid, expired or already used.',
          );
        }
        if ((entry.redirectUriGiven || redirectUri !== undefined) && redirectUri !== entry.redirectUri) {
          throw oauthError(400, 'invalid_grant', 'redirect_uri does not match the authorization request.');
        }
        if (entry.codeChallenge && !verifyPkce(entry.codeChallenge, entry.codeChallengeMethod!, verifier)) {
          throw oauthError(400, 'invalid_grant', 'PKCE verification failed: code_verifier does not match.');
        }
        faults.stats.tokensIssued++;
        ctx.body = oauth.issueTokens(client.clientId, entry.scope, entry.grantId, true);
        return;
      }
      case 'refresh_token': {
        const token = param('refresh_token');
        if (!token) throw oauthError(400, 'invalid_request', 'refresh_token is required.');
        const current = oauth.refreshToken(token);
        if (!current || current.clientId !== client.clientId || current.expiresAt <= Date.now()) {
          throw oauthError(
            400,
            'invalid_grant',
            'The refresh token is invalid, expired, revoked or already used.',
          );
        }
        const requestedScope = param('scope');
        const scope = requestedScope === undefined ? current.scope : parseScope(requestedScope);
        if (!scope || !scope.every((s) => current.scope.includes(s))) {
          throw oauthError(400, 'invalid_scope', 'The requested scope exceeds the scope originally granted.');
        }
        oauth.takeRefreshToken(token);
        faults.stats.tokensIssued++;
        faults.stats.tokensRefreshed++;
        ctx.body = oauth.issueTokens(client.clientId, scope, current.grantId, true);
        return;
      }
      case 'client_credentials': {
        const scope = parseScope(param('scope'));
        if (!scope) {
          throw oauthError(400, 'invalid_scope', `scope must be a subset of: ${allScopes.join(' ')}.`);
        }
        faults.stats.tokensIssued++;
        ctx.body = oauth.issueTokens(client.clientId, scope, `cc:${client.clientId}`, false);
        return;
      }
      case undefined:
        throw oauthError(400, 'invalid_request', 'grant_type is required.');
      default:
        throw oauthError(400, 'unsupported_grant_type', `grant_type "${grantType}" is not supported.`);
    }
  });

  router.post('/oauth/revoke', (ctx) => {
    const body = formBody(ctx);
    const client = authenticateClient(ctx, sandbox, body);
    const token = single(body, 'token', (m) => oauthError(400, 'invalid_request', m));
    if (!token) throw oauthError(400, 'invalid_request', 'token is required.');
    // RFC 7009: unknown tokens are not an error; the answer is 200 either way.
    if (oauth.revoke(token, client.clientId)) faults.stats.tokensRevoked++;
    ctx.status = 200;
    ctx.body = {};
  });
}
