import Router from '@koa/router';
import type { Context } from 'koa';
import { requireScope, type Principal } from './api-auth.js';
import type { SandboxContext } from './context.js';
import { notFound, validationError } from './errors.js';
import { parseListQuery, parseWindow, project } from './list-query.js';
import { requireObjectName, type ObjectName } from './schema.js';
import { validateRecordInput } from './validation.js';
import { webhookRoutes } from './webhook-routes.js';
import { metadataRoutes } from './metadata.js';

function fieldsParam(ctx: Context, sandbox: SandboxContext, object: ObjectName): string[] | undefined {
  return parseListQuery({ fields: ctx.query.fields }, object, sandbox.schemas, sandbox.cursors).fields;
}

/** A deal's companyId must name a company that exists, as a CRM would enforce. */
function checkReferences(sandbox: SandboxContext, object: ObjectName, values: Record<string, unknown>): void {
  if (
    object === 'deals' &&
    typeof values.companyId === 'string' &&
    !sandbox.store.get('companies', values.companyId)
  ) {
    throw validationError('The deals record is invalid.', [
      { name: 'companyId', message: 'No company has this id.' },
    ]);
  }
}

/** The REST API under /api/v1 (authentication happens before, in apiGate). */
export function apiRouter(sandbox: SandboxContext): Router {
  const router = new Router({ prefix: '/api/v1' });
  const { store, schemas, cursors, webhooks } = sandbox;

  router.get('/me', (ctx) => {
    const principal = ctx.state.principal as Principal;
    ctx.body = {
      account: { id: 'acct_sandbox', name: 'Sandbox CRM Demo' },
      authType: principal.kind,
      clientId: principal.kind === 'oauth' ? principal.clientId : null,
      scopes: principal.scopes,
    };
  });

  // Fixed segments first: they would otherwise be taken for an object name or a record id.
  metadataRoutes(router, sandbox);
  webhookRoutes(router, sandbox);

  router.get('/:object/count', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.read`);
    const { since, until } = parseWindow(ctx.query);
    ctx.body = { count: store.count(object, since, until) };
  });

  router.get('/:object', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.read`);
    const query = parseListQuery(ctx.query, object, schemas, cursors);
    const items = store.list(object, query);
    const page = items.slice(0, query.limit);
    const last = page[page.length - 1];
    ctx.body = {
      results: page.map((item) => project(item.value, query.fields)),
      nextCursor:
        items.length > query.limit
          ? cursors.encode({
              object,
              after: last.key,
              since: query.since,
              until: query.until,
              includeDeleted: query.includeDeleted,
              where: query.where,
            })
          : null,
    };
  });

  router.post('/:object', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.write`);
    const key = ctx.get('idempotency-key') || undefined;
    const answer = sandbox.idempotentCreates.run(key, object, ctx.request.body, () => {
      const values = validateRecordInput(schemas, object, ctx.request.body, 'create');
      checkReferences(sandbox, object, values);
      const record = store.create(object, values);
      webhooks.emit(object, 'created', record.id, record);
      return { status: 201, body: record, location: `/api/v1/${object}/${record.id}` };
    });
    if (answer.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = answer.status;
    ctx.set('Location', answer.location);
    ctx.body = answer.body;
  });

  router.get('/:object/:id', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.read`);
    const fields = fieldsParam(ctx, sandbox, object);
    const record = store.get(object, ctx.params.id);
    if (!record) throw notFound(`No ${object} record has id "${ctx.params.id}".`);
    ctx.body = project(record, fields);
  });

  router.patch('/:object/:id', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.write`);
    if (!store.get(object, ctx.params.id)) throw notFound(`No ${object} record has id "${ctx.params.id}".`);
    const values = validateRecordInput(schemas, object, ctx.request.body, 'update');
    checkReferences(sandbox, object, values);
    const { record, changedFields } = store.update(object, ctx.params.id, values)!;
    webhooks.emit(object, 'updated', record.id, record, changedFields);
    ctx.body = record;
  });

  router.delete('/:object/:id', (ctx) => {
    const object = requireObjectName(ctx.params.object);
    requireScope(ctx, `${object}.write`);
    if (!store.delete(object, ctx.params.id)) {
      throw notFound(`No ${object} record has id "${ctx.params.id}".`);
    }
    webhooks.emit(object, 'deleted', ctx.params.id);
    ctx.status = 204;
  });

  return router;
}
