import type Router from '@koa/router';
import type { Context } from 'koa';
import { consentPage, errorPage } from './consent.js';
import type { SandboxContext } from './context.js';
import { htmlError } from './errors.js';
import { isHttpUrl, parseScope, pkceValue, single } from './oauth-params.js';
import { allScopes, type PendingAuthorization } from './tokens.js';

function badAuthorizeRequest(message: string): Error {
  return htmlError(400, errorPage('Invalid authorization request', message));
}

function redirectTo(ctx: Context, redirectUri: string, params: Record<string, string | undefined>): void {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  ctx.redirect(url.toString());
}

function approve(ctx: Context, sandbox: SandboxContext, pending: PendingAuthorization): void {
  sandbox.faults.stats.authorizationCodesIssued++;
  redirectTo(ctx, pending.redirectUri, { code: sandbox.oauth.issueCode(pending), state: pending.state });
}

/** GET /oauth/authorize (consent page or, with autoApprove, a redirect) and the consent form's target. */
export function authorizeRoutes(router: Router, sandbox: SandboxContext): void {
  const { oauth, faults } = sandbox;

  router.get('/oauth/authorize', (ctx) => {
    const query = ctx.query as Record<string, unknown>;
    const param = (name: string) => single(query, name, badAuthorizeRequest);
    // Until client and redirect URI are known good, errors are shown here, never redirected (RFC 6749 4.1.2.1).
    const clientId = param('client_id');
    const client = clientId ? oauth.client(clientId) : undefined;
    if (!client) {
      throw badAuthorizeRequest(clientId ? `Unknown client_id "${clientId}".` : 'client_id is required.');
    }
    const requested = param('redirect_uri');
    const redirectUri = requested ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
    if (!redirectUri) throw badAuthorizeRequest('redirect_uri is required.');
    if (!isHttpUrl(redirectUri)) throw badAuthorizeRequest('redirect_uri must be an absolute http(s) URL.');
    if (client.redirectUris.length && !client.redirectUris.includes(redirectUri)) {
      throw badAuthorizeRequest('redirect_uri is not registered for this client.');
    }
    if (param('response_type') !== 'code') throw badAuthorizeRequest('response_type must be "code".');
    const scope = parseScope(param('scope'));
    if (!scope) {
      throw badAuthorizeRequest(`scope must be a space-separated subset of: ${allScopes.join(' ')}.`);
    }
    const codeChallenge = param('code_challenge');
    const method = param('code_challenge_method');
    if (method !== undefined && !codeChallenge) {
      throw badAuthorizeRequest('code_challenge_method without code_challenge.');
    }
    if (method !== undefined && method !== 'S256' && method !== 'plain') {
      throw badAuthorizeRequest('code_challenge_method must be S256 or plain.');
    }
    if (codeChallenge !== undefined && !pkceValue.test(codeChallenge)) {
      throw badAuthorizeRequest('code_challenge must be 43 to 128 unreserved characters.');
    }
    const pending = oauth.startAuthorization({
      clientId: client.clientId,
      redirectUri,
      redirectUriGiven: requested !== undefined,
      scope,
      state: param('state'),
      codeChallenge,
      codeChallengeMethod: codeChallenge ? ((method ?? 'plain') as 'S256' | 'plain') : undefined,
    });
    if (faults.settings.autoApprove) {
      oauth.takeAuthorization(pending.id);
      approve(ctx, sandbox, pending);
      return;
    }
    ctx.type = 'text/html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = consentPage(client, pending);
  });

  router.post('/oauth/authorize/decision', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const id = single(body, 'request_id', badAuthorizeRequest);
    const decision = single(body, 'decision', badAuthorizeRequest);
    if (decision !== 'approve' && decision !== 'deny') {
      throw badAuthorizeRequest('decision must be approve or deny.');
    }
    const pending = id ? oauth.takeAuthorization(id) : undefined;
    if (!pending) {
      throw badAuthorizeRequest('This authorization request is unknown, used or expired. Start again.');
    }
    if (decision === 'approve') return approve(ctx, sandbox, pending);
    redirectTo(ctx, pending.redirectUri, {
      error: 'access_denied',
      error_description: 'The user denied the authorization request.',
      state: pending.state,
    });
  });
}
