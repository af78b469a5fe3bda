import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { logger } from '../logger.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { httpRequestDuration } from '../metrics.js';
import { failSpan, inServerSpan, tracingOn } from '../tracing.js';
import { problemBody } from './problem.js';
import { hasNul, jsonInputProblem } from '../core/input-limits.js';
import { ProblemError } from '../core/problem.js';
import { maskApiKeys } from '../core/api-key-text.js';

const requestIdPattern = /^[\w.-]{8,128}$/;

/** Every response carries `X-Request-Id`; a sane incoming id is kept so callers can correlate. */
export async function requestId(ctx: Context, next: Next): Promise<void> {
  const incoming = ctx.get('x-request-id');
  ctx.state.requestId = requestIdPattern.test(incoming) ? incoming : randomUUID();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
}

interface HttpishError {
  code?: unknown;
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
  headers?: Record<string, string>;
}

/** Errors from Koa's own stack (body parser, router) mapped onto problem details. */
function fromHttpError(error: HttpishError): ProblemError | undefined {
  // zlib's and Brotli's errors: a body whose Content-Encoding does not match its bytes.
  if (typeof error.code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI_)/.test(error.code)) {
    return ProblemError.badRequest('The request body could not be decoded as its Content-Encoding says.');
  }
  const status = error.status ?? error.statusCode;
  if (!status || status < 400 || status >= 500) return undefined;
  if (error.type === 'entity.too.large' || status === 413) {
    return new ProblemError({ status: 413, detail: 'The request body is larger than the configured limit.' });
  }
  if (error.type === 'entity.parse.failed' || error instanceof SyntaxError) {
    return ProblemError.badRequest('The request body is not valid JSON.');
  }
  return new ProblemError({ status, detail: error.expose && error.message ? error.message : undefined });
}

/** The one place where errors become HTTP responses. */
export async function problems(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      throw ProblemError.notFound(`No route matches ${ctx.method} ${maskApiKeys(ctx.path)}.`);
    }
    if (ctx.status === 405 && ctx.body === undefined) {
      throw new ProblemError({
        status: 405,
        detail: `${ctx.method} is not allowed on ${maskApiKeys(ctx.path)}; allowed: ${ctx.response.get('Allow')}.`,
      });
    }
  } catch (thrown) {
    let problem = thrown instanceof ProblemError ? thrown : fromHttpError(thrown as HttpishError);
    // Two requests racing past a "does it exist?" check meet at a unique index: that is a conflict.
    if (thrown instanceof UniqueConstraintViolationException) {
      problem = ProblemError.conflict('A resource with the same unique name or key already exists.');
    }
    // A value PostgreSQL cannot read as its column's type (an id that is no UUID, a time or number
    // out of its range) came from the request.
    if (
      thrown instanceof DriverException &&
      uncheckedInputCodes.has((thrown as { code?: string }).code ?? '')
    ) {
      logger.warn(
        { err: thrown, requestId: ctx.state.requestId, path: ctx.path },
        'unchecked input reached the database',
      );
      problem = ProblemError.badRequest('A value in the request is not of the type it must be.');
    }
    // Every database connection busy for the pool's whole wait: an overload, worth a retry later.
    if ((thrown as Error | undefined)?.name === 'KnexTimeoutError') {
      logger.warn({ requestId: ctx.state.requestId, path: ctx.path }, 'no database connection free in time');
      problem = ProblemError.unavailable('The database is busy; retry shortly.', 5);
    }
    // PostgreSQL unreachable or restarting: an outage, not a bug; the statement that met it did not commit.
    if (!problem && isDatabaseUnavailable(thrown)) {
      logger.warn({ err: thrown, requestId: ctx.state.requestId, path: ctx.path }, 'database unavailable');
      problem = ProblemError.unavailable('The database is unavailable; retry shortly.', 5);
    }
    if (!problem) {
      logger.error({ err: thrown, requestId: ctx.state.requestId, path: ctx.path }, 'unhandled error');
      problem = new ProblemError({
        status: 500,
        detail: 'An unexpected error occurred; the request id identifies it.',
      });
    }
    ctx.status = problem.status;
    for (const [name, value] of Object.entries(problem.headers ?? {})) ctx.set(name, value);
    if (problem.retryAfter !== undefined) ctx.set('Retry-After', String(problem.retryAfter));
    ctx.type = 'application/problem+json';
    ctx.body = problemBody(problem, ctx.state.requestId as string);
  }
}

/** A body is only accepted as JSON; anything else that carries content is refused before parsing. */
/** PostgreSQL's invalid text representation, datetime format, datetime and numeric out of range. */
const uncheckedInputCodes = new Set(['22P02', '22007', '22008', '22003']);

const clientLeft = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

/** Koa reports a body stream's failure twice (the stream's error, then the response's); logged once. */
const reportedCutShort = new WeakSet<Error>();

/**
 * Koa's report of an error after the answer began (sending a list failed halfway, the connection
 * then closed): logged with the request, except a client that went away mid-answer.
 */
export function answerCutShort(error: Error & { code?: string }, ctx?: Context): void {
  if (error?.code && clientLeft.has(error.code)) return;
  if (typeof error === 'object' && error !== null) {
    if (reportedCutShort.has(error)) return;
    reportedCutShort.add(error);
  }
  logger.error({ err: error, requestId: ctx?.state.requestId, path: ctx?.path }, 'answer cut short');
}

export async function requireJsonBody(ctx: Context, next: Next): Promise<void> {
  const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
  if (hasBody && !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(ctx.method) && !ctx.state.rawBodyRoute) {
    if (!ctx.is('application/json', 'application/*+json')) {
      throw new ProblemError({ status: 415, detail: 'Send the request body as application/json.' });
    }
  }
  await next();
}

export async function accessLog(ctx: Context, next: Next): Promise<void> {
  const started = performance.now();
  try {
    await next();
  } finally {
    // Built only when it will be written: this runs for every request.
    if (logger.isLevelEnabled('debug'))
      logger.debug(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          requestId: ctx.state.requestId,
        },
        'request',
      );
  }
}

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Methods no route serves (TRACE, CONNECT, made-up ones) are refused as problems, not plain text. */
export async function refuseUnknownMethods(ctx: Context, next: Next): Promise<void> {
  if (!knownMethods.has(ctx.method)) {
    ctx.set('Allow', [...knownMethods].join(', '));
    throw new ProblemError({ status: 405, detail: `${ctx.method} is not served by Ferry.` });
  }
  await next();
}

/** Every input held to the bounds of `core/input-limits.ts` before any handler (or the database) sees it. */
export async function boundedInput(ctx: Context, next: Next): Promise<void> {
  if (hasNul(ctx.path)) {
    throw ProblemError.badRequest('The path contains a NUL character (%00), which is not allowed.');
  }
  if (hasNul(ctx.querystring)) {
    throw ProblemError.badRequest('The query contains a NUL character (%00), which is not allowed.');
  }
  const body = (ctx.request as { body?: unknown }).body;
  const issue = body === undefined || ctx.state.rawBodyRoute ? undefined : jsonInputProblem(body, 'body');
  if (issue) throw ProblemError.invalid([issue], 'The request body is not allowed.');
  await next();
}

/** The route template the router matched (`/v1/projects/:projectIdOrName/...`); undefined when none did. */
function routeTemplate(ctx: Context): string | undefined {
  const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  // Koa paths escape the colon of custom methods (`connections\\:generate`); metrics and traces show the path.
  return typeof matched === 'string' ? matched.replace(/\\:/g, ':') : undefined;
}

/**
 * One server span per request when tracing is on (src/tracing.ts), named by method and route
 * template, continuing the caller's `traceparent`. Its attributes are the method, the route, the
 * listener and the status: never the path's ids, the query string or any header. Off, it only calls on.
 */
export function requestTracing(host: string) {
  return async function requestTracingMiddleware(ctx: Context, next: Next): Promise<void> {
    if (!tracingOn()) return next();
    const attributes = { 'http.request.method': ctx.method, 'ferry.listener': host };
    await inServerSpan(ctx.headers, attributes, async (span) => {
      try {
        await next();
      } finally {
        const route = routeTemplate(ctx);
        if (route) {
          span.updateName(`${ctx.method} ${route}`);
          span.setAttribute('http.route', route);
        }
        span.setAttribute('http.response.status_code', ctx.status);
        if (ctx.status >= 500) failSpan(span, `HTTP ${ctx.status}`);
      }
    });
  };
}

/**
 * Times every request into `ferry_http_request_duration_seconds`, labelled with the route template
 * the router matched (`/v1/projects/:projectIdOrName/...`), never the raw path: ids and query
 * strings would make a series per request. Runs outermost, so the status is the one sent.
 */
export function requestMetrics(host: string) {
  return async function requestMetricsMiddleware(ctx: Context, next: Next): Promise<void> {
    const end = httpRequestDuration.startTimer();
    try {
      await next();
    } finally {
      end({ host, method: ctx.method, route: routeTemplate(ctx) ?? 'unmatched', status: String(ctx.status) });
    }
  };
}
