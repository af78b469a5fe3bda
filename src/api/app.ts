import { appendFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import Koa from 'koa';
import Router from '@koa/router';
import cors from '@koa/cors';
import { config, type Config } from '../config.js';
import { em as newEntityManager } from '../db/orm.js';
import { authenticate, registerBearerVerifier } from './auth.js';
import { resolveProject } from '../domain/project-access.js';
import { verifyBuilderToken } from '../domain/builder-tokens.js';
import { verifyProjectJwt } from '../domain/project-jwt.js';
import {
  accessLog,
  answerCutShort,
  boundedInput,
  problems,
  refuseUnknownMethods,
  requestId,
  requestMetrics,
  requireJsonBody,
  requestTracing,
} from './middleware.js';
import { buildOpenApiDocument } from './openapi.js';
import { mountDocs } from './docs.js';
import { jsonBodyReader, rawBodyReader } from './request-body.js';
import type { ListenerPorts } from './listener-origins.js';
import { ProblemError } from '../core/problem.js';
import {
  requestSettings,
  toKoaPath,
  type AnyRoute,
  type HandlerContext,
  type HandlerResult,
  type Host,
} from './route.js';
import { allRoutes } from './routes.js';
import { BatchedList, jsonListText } from './batched-list.js';
import { mountConsole } from './console.js';
import { parseStringParams, parseWith, schemaIssues } from '../core/validation.js';
import type { Project } from '../db/entities/project.js';
import type { TSchema } from 'typebox';

function hostsOf(route: AnyRoute): Host[] {
  return route.hosts ?? ['api'];
}

function mount(router: Router, route: AnyRoute, settings: Config): void {
  const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  router[method](toKoaPath(route.path), async (ctx) => {
    const em = await newEntityManager();
    const principal = await authenticate(ctx, route.auth, em);
    const params = route.params ? parseStringParams(route.params, ctx.params, 'path') : ctx.params;
    const query = route.query ? parseStringParams(route.query, ctx.query, 'query') : {};
    const rawBody = (ctx.request as { body?: unknown }).body;
    if (route.body && rawBody === undefined)
      throw ProblemError.badRequest('A JSON request body is required.');
    const body = route.body ? parseWith(route.body, rawBody, 'body') : undefined;
    const projectIdOrName = (params as Record<string, string>).projectIdOrName;
    const project = projectIdOrName
      ? await resolveProject(principal, projectIdOrName, em, { plain: route.method === 'GET' }).catch(
          (error: unknown) => {
            throw withNotFoundRemedy(route, error);
          },
        )
      : (undefined as unknown as Project);
    const handlerContext: HandlerContext<unknown, unknown, unknown> = {
      params,
      query,
      body,
      principal,
      project,
      em,
      requestId: ctx.state.requestId as string,
      koa: ctx,
      settings: requestSettings(ctx),
    };
    const result = await route.handler(handlerContext as never);
    const declared = route.responses[result.status];
    const answer: unknown = result.body;
    const listText =
      answer instanceof BatchedList
        ? await jsonListText(answer, {
            check: settings.checkResponses
              ? declaredItemCheck(route, result.status, settings.dataDir)
              : undefined,
            // A client that left while its list waited for a turn: its turn is not spent reading.
            abandoned: () => ctx.req.destroyed,
          })
        : undefined;
    if (settings.checkResponses && !listText) assertDeclaredAnswer(route, result, settings.dataDir);
    ctx.status = result.status;
    for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
    if (listText) {
      ctx.body = Readable.from(listText);
      ctx.type = 'application/json';
      ctx.length = listText.reduce((bytes, chunk) => bytes + chunk.length, 0);
    } else if (result.body !== undefined) {
      const type = result.contentType ?? declared?.contentType ?? 'application/json';
      // A JSON string answer (an authorization URL) is sent as JSON, not as plain text.
      ctx.body =
        typeof result.body === 'string' && /json/.test(type) ? JSON.stringify(result.body) : result.body;
      ctx.type = type;
    }
  });
}

/** A 404 of a route that declares a remedy for its 404s, with that remedy. */
function withNotFoundRemedy(route: AnyRoute, error: unknown): unknown {
  if (!route.notFoundRemedy || !(error instanceof ProblemError) || error.status !== 404 || error.remedy) {
    return error;
  }
  return ProblemError.notFound(error.detail ?? 'Not found.', route.notFoundRemedy);
}

/** In tests: an answer the route does not declare, or of another shape than declared, fails the request. */
function assertDeclaredAnswer(route: AnyRoute, result: HandlerResult, dataDir: string): void {
  const declared = route.responses[result.status];
  if (!declared) {
    throw new Error(`${route.operationId} answered ${result.status}, which its declaration does not list`);
  }
  const issues = declared.schema ? schemaIssues(declared.schema, result.body, 'body') : [];
  if (issues.length) {
    throw new Error(
      `${route.operationId} answered ${result.status} with a body its schema refuses: ${issues
        .map((issue) => issue.detail)
        .join('; ')}`,
    );
  }
  noteCheckedAnswer(route.operationId, result.status, dataDir);
}

/** In tests: a batched list must be a declared array, and each item is checked as it is written. */
function declaredItemCheck(route: AnyRoute, status: number, dataDir: string): (item: unknown) => void {
  const items = (route.responses[status]?.schema as { items?: TSchema } | undefined)?.items;
  if (!items)
    throw new Error(
      `${route.operationId} answered ${status} with a list, which it does not declare an array`,
    );
  noteCheckedAnswer(route.operationId, status, dataDir);
  return (item) => {
    const issues = schemaIssues(items, item, 'body');
    if (issues.length) {
      throw new Error(
        `${route.operationId} listed an item its schema refuses: ${issues.map((issue) => issue.detail).join('; ')}`,
      );
    }
  };
}

const checkedAnswers = new Set<string>();

/**
 * Lists each checked (operation, status) once per process in `answers.log` of the data directory,
 * so the test run can tell which routes never had an answer checked.
 */
function noteCheckedAnswer(operationId: string, status: number, dataDir: string): void {
  const key = `${operationId} ${status}`;
  if (checkedAnswers.has(key)) return;
  checkedAnswers.add(key);
  appendFileSync(join(dataDir, 'answers.log'), `${key}\n`);
}

/**
 * Builds the Koa application for one host (api, read, write or search) from the route declarations.
 * `ports` are the listeners' bound ports, for the API reference's try-it (filled in once they listen).
 * `settings` shape the app itself; each request reads the settings afresh where it enters and hands
 * them on (`HandlerContext.settings`), so handlers and what they call never read the environment.
 */
export function createApp(
  host: Host,
  routes: AnyRoute[] = allRoutes(),
  ports: ListenerPorts = {},
  settings: Config = config(),
): Koa {
  // Bearer tokens are either a builder's (issued by Ferry) or signed with a project JWT key.
  registerBearerVerifier(verifyBuilderToken);
  registerBearerVerifier(verifyProjectJwt);
  const app = new Koa({ proxy: settings.env === 'production' });
  const hostRoutes = routes.filter((route) => hostsOf(route).includes(host));
  const rawBodyPaths = hostRoutes
    .filter((route) => route.rawBody)
    .map((route) => new RegExp(`^${toKoaPath(route.path).replace(/\\:/g, ':').replace(/:\w+/g, '[^/]+')}$`));
  // The console (served by the api host) calls the other hosts from the api host's public origin.
  const origins = [...new Set([...settings.corsOrigins, new URL(settings.publicApiUrl).origin])];
  const router = new Router();
  for (const route of hostRoutes) mount(router, route, settings);
  const document = buildOpenApiDocument(host, hostRoutes);
  router.get('/v1/openapi.json', (ctx) => {
    ctx.body = document;
  });
  mountDocs(router, host, routes, ports);
  router.get('/v1/health', (ctx) => {
    ctx.body = { status: 'ok', host };
  });
  if (host === 'api') mountConsole(router, ports);

  app.on('error', answerCutShort);
  app.use((ctx, next) => {
    ctx.state.settings = config();
    return next();
  });
  app.use(requestMetrics(host));
  app.use(requestTracing(host));
  app.use(requestId);
  app.use(problems);
  app.use(accessLog);
  app.use(refuseUnknownMethods);
  if (origins.length) {
    app.use(
      cors({
        origin: (ctx) =>
          origins.includes('*') ? '*' : origins.includes(ctx.get('origin')) ? ctx.get('origin') : '',
        exposeHeaders: ['X-Request-Id', 'Retry-After', 'Location'],
        // The public React components name themselves on every request (X-Amp-Client[-Version]).
        allowHeaders: [
          'Content-Type',
          'X-Api-Key',
          'Authorization',
          'X-Request-Id',
          'X-Amp-Client',
          'X-Amp-Client-Version',
        ],
        maxAge: 600,
      }),
    );
  }
  app.use(async (ctx, next) => {
    ctx.state.rawBodyRoute = rawBodyPaths.some((pattern) => pattern.test(ctx.path));
    await next();
  });
  app.use(requireJsonBody);
  const readJsonBody = jsonBodyReader(settings.bodyLimitBytes);
  // A raw-body route (provider webhooks) gets the exact bytes it was sent, whatever their type:
  // signatures are computed over them.
  const readRawBody = rawBodyReader(settings.bodyLimitBytes);
  app.use((ctx, next) => (ctx.state.rawBodyRoute ? readRawBody(ctx, next) : readJsonBody(ctx, next)));
  app.use(boundedInput);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
