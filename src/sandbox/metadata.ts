import type Router from '@koa/router';
import { requireScope } from './api-auth.js';
import type { SandboxContext } from './context.js';
import { requireObjectName } from './schema.js';

/** GET /metadata/{object} describes the fields; PUT /metadata/{object}/custom-fields upserts custom ones. */
export function metadataRoutes(router: Router, sandbox: SandboxContext): void {
  router.get('/metadata/:object', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.read`);
    ctx.body = {
      object,
      displayName: sandbox.schemas.displayName(object),
      fields: sandbox.schemas.fields(object),
    };
  });

  router.put('/metadata/:object/custom-fields', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.write`);
    ctx.body = { fields: sandbox.schemas.upsertCustomFields(object, ctx.request.body) };
  });
}
