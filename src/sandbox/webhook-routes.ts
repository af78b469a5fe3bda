import type Router from '@koa/router';
import { requireScope } from './api-auth.js';
import type { SandboxContext } from './context.js';
import { notFound } from './errors.js';

/** CRUD for webhook subscriptions under /webhooks; needs the "webhooks" scope. */
export function webhookRoutes(router: Router, sandbox: SandboxContext): void {
  const { webhooks } = sandbox;
  const missing = (id: string) => notFound(`No webhook subscription has id "${id}".`);

  router.post('/webhooks', (ctx) => {
    requireScope(ctx, 'webhooks');
    const subscription = webhooks.create(ctx.request.body);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/webhooks/${subscription.id}`);
    ctx.body = subscription;
  });

  router.get('/webhooks', (ctx) => {
    requireScope(ctx, 'webhooks');
    ctx.body = { results: webhooks.list() };
  });

  router.get('/webhooks/:id', (ctx) => {
    requireScope(ctx, 'webhooks');
    const subscription = webhooks.get(ctx.params.id);
    if (!subscription) throw missing(ctx.params.id);
    ctx.body = subscription;
  });

  router.patch('/webhooks/:id', (ctx) => {
    requireScope(ctx, 'webhooks');
    const subscription = webhooks.update(ctx.params.id, ctx.request.body);
    if (!subscription) throw missing(ctx.params.id);
    ctx.body = subscription;
  });

  router.delete('/webhooks/:id', (ctx) => {
    requireScope(ctx, 'webhooks');
    if (!webhooks.delete(ctx.params.id)) throw missing(ctx.params.id);
    ctx.status = 204;
  });
}
