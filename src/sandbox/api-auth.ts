import type { Context, Next } from 'koa';
import type { SandboxContext } from './context.js';
import { apiError } from './errors.js';
import { apiFaultsMiddleware } from './faults.js';
import { allScopes } from './tokens.js';

/** The development API key, always accepted (provider `sandboxApiKey`). */
export const demoApiKey = 'sandbox-demo-key';

export type Principal =
  | { kind: 'apiKey'; scopes: readonly string[] }
  | { kind: 'oauth'; clientId: string; scopes: readonly string[] };

function unauthorized(message: string, bearerError?: string): Error {
  const challenge = bearerError ? `Bearer realm="sandbox", error="${bearerError}"` : 'Bearer realm="sandbox"';
  return apiError(401, 'unauthorized', message, {}, { 'WWW-Authenticate': challenge });
}

function authenticate(ctx: Context, sandbox: SandboxContext): Principal {
  const apiKey = ctx.get('x-api-key');
  if (apiKey) {
    if (!sandbox.apiKeys.has(apiKey)) throw unauthorized('The API key is not valid.');
    return { kind: 'apiKey', scopes: allScopes };
  }
  const match = /^bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
  if (!match) throw unauthorized('Send Authorization: Bearer <access token> or X-Api-Key: <key>.');
  const token = sandbox.oauth.accessToken(match[1]);
  if (!token) throw unauthorized('The access token is invalid, expired or revoked.', 'invalid_token');
  return { kind: 'oauth', clientId: token.clientId, scopes: token.scope };
}

/** Everything under /api passes here: gateway faults first (rate limit, injected errors), then credentials. */
export function apiGate(sandbox: SandboxContext) {
  const faults = apiFaultsMiddleware(sandbox.faults);
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.path.startsWith('/api/')) return next();
    await faults(ctx, async () => {
      ctx.state.principal = authenticate(ctx, sandbox);
      await next();
    });
  };
}

/** API keys carry every scope; tokens only what the user granted. */
export function requireScope(ctx: Context, scope: string): void {
  const principal = ctx.state.principal as Principal;
  if (!principal.scopes.includes(scope)) {
    throw apiError(
      403,
      'insufficient_scope',
      `This request needs the "${scope}" scope.`,
      { requiredScope: scope },
      {
        'WWW-Authenticate': `Bearer realm="sandbox", error="insufficient_scope", scope="${scope}"`,
      },
    );
  }
}
