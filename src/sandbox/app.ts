import Koa, { type Context, type Next } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { apiGate } from './api-auth.js';
import { apiRouter } from './api.js';
import { errorPage } from './consent.js';
import type { SandboxContext } from './context.js';
import { controlRouter } from './control.js';
import { apiError, htmlError, notFound, oauthError, SandboxHttpError } from './errors.js';
import { latencyMiddleware } from './faults.js';
import { oauthRouter } from './oauth.js';

/** Maps errors from Koa's own stack (body parsing) into the dialect of the path they happened on. */
function fromHttpError(error: { status?: number }, path: string): SandboxHttpError {
  const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 400;
  const message = status === 413 ? 'The request body is too large.' : 'The request body could not be parsed.';
  if (path === '/oauth/token' || path === '/oauth/revoke') {
    return oauthError(status, 'invalid_request', message);
  }
  if (path.startsWith('/oauth/authorize')) return htmlError(status, errorPage('Bad request', message));
  return apiError(status, status === 400 ? 'validation_error' : 'bad_request', message);
}

/** Turns anything thrown into a response; only sandbox bugs are reported, as a 500. */
function errors(sandbox: SandboxContext) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw notFound(`No route matches ${ctx.method} ${ctx.path}.`);
      }
    } catch (thrown) {
      const status = (thrown as { status?: number }).status;
      let failure: SandboxHttpError;
      if (thrown instanceof SandboxHttpError) {
        failure = thrown;
      } else if (status && status < 500) {
        failure = fromHttpError({ status }, ctx.path);
      } else {
        sandbox.reportError(thrown);
        failure = apiError(500, 'internal_error', 'The sandbox hit an unexpected error.');
      }
      ctx.status = failure.status;
      for (const [name, value] of Object.entries(failure.options.headers ?? {})) ctx.set(name, value);
      ctx.type = failure.options.html ? 'text/html' : 'application/json';
      ctx.body = failure.body;
    }
  };
}

function countRequests(sandbox: SandboxContext) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.path.startsWith('/_control')) sandbox.faults.stats.requestsServed++;
    await next();
  };
}

/** The sandbox's Koa application: control hooks, OAuth server and REST API on one port. */
export function createSandboxApp(sandbox: SandboxContext): Koa {
  const app = new Koa();
  app.silent = true; // errors are answered above; a sandbox should not write to the test output
  const routers = [controlRouter(sandbox), oauthRouter(sandbox), apiRouter(sandbox)];
  app.use(errors(sandbox));
  app.use(countRequests(sandbox));
  app.use(latencyMiddleware(sandbox.faults));
  app.use(bodyParser({ enableTypes: ['json', 'form'], jsonLimit: '1mb', formLimit: '64kb' }));
  app.use(apiGate(sandbox));
  app.use(async (ctx, next) => {
    if (ctx.path !== '/') return next();
    ctx.body = {
      name: 'Sandbox CRM',
      description: 'A fake CRM for Ferry: OAuth 2.0 authorization server and REST API, with fault injection.',
      authorizationServer: `${sandbox.publicUrl()}/.well-known/oauth-authorization-server`,
      api: `${sandbox.publicUrl()}/api/v1`,
      objects: ['contacts', 'companies', 'deals'],
      counts: sandbox.generator.counts,
    };
  });
  for (const router of routers) app.use(router.routes());
  return app;
}
