import Router from '@koa/router';
import type { SandboxContext } from './context.js';
import { validationError } from './errors.js';
import type { FaultPatch } from './faults.js';

export interface ResetOptions {
  /** Also drop API changes to records, custom fields and webhook subscriptions. */
  data?: boolean;
}

/** Back to the start-up faults with zeroed counters; with data, also to the generated dataset. */
export function resetSandbox(sandbox: SandboxContext, options: ResetOptions = {}): void {
  sandbox.faults.reset();
  if (options.data) {
    sandbox.store.reset();
    sandbox.idempotentCreates.reset();
    sandbox.schemas.reset();
    sandbox.webhooks.reset();
  }
}

/** Test hooks under /_control: no authentication, it is a sandbox. */
export function controlRouter(sandbox: SandboxContext): Router {
  const router = new Router({ prefix: '/_control' });
  const { faults } = sandbox;

  router.get('/faults', (ctx) => {
    ctx.body = faults.settings;
  });

  router.post('/faults', (ctx) => {
    ctx.body = faults.set((ctx.request.body ?? {}) as FaultPatch);
  });

  router.post('/reset', (ctx) => {
    const body = (ctx.request.body ?? {}) as ResetOptions;
    if (body.data !== undefined && typeof body.data !== 'boolean') {
      throw validationError('Invalid reset options.', [{ name: 'data', message: 'true or false.' }]);
    }
    resetSandbox(sandbox, body);
    ctx.body = faults.settings;
  });

  router.get('/stats', (ctx) => {
    ctx.body = faults.stats;
  });

  router.post('/api-keys', (ctx) => {
    const key = (ctx.request.body as { key?: unknown } | undefined)?.key;
    if (typeof key !== 'string' || key.length < 8) {
      throw validationError('Invalid API key.', [
        { name: 'key', message: 'A string of at least 8 characters.' },
      ]);
    }
    sandbox.apiKeys.add(key);
    ctx.status = 201;
    ctx.body = { key };
  });

  return router;
}
