import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { config, type Config } from '../../config.js';
import { ProblemError } from '../../core/problem.js';
import { transaction } from '../../db/orm.js';
import { connectionTarget } from '../../domain/credentials.js';
import { logger } from '../../logger.js';
import { failSpan, inServerSpan, tracingOn } from '../../tracing.js';
import type { ProxyStreamResponse } from '../../providers/connector.js';
import { connectorFor } from '../../providers/connectors/index.js';
import { toProblem } from '../../providers/errors.js';
import { problemBody } from '../problem.js';
import { isProxyHeader, parseProxyHeaders } from './headers.js';
import { resolveProxyInstallation } from './resolve.js';

/**
 * The proxy listener (FERRY_PROXY_PORT): any method and path, sent as-is to the provider of the
 * installation's connection with its credentials attached, and the provider's answer passed back.
 * Not a Koa app: the path is the provider's, so Ferry routes nothing here.
 */

/** Hop-by-hop headers (RFC 9110 §7.6.1) and lengths/encodings recomputed for the hop they describe. */
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
]);

/** Request headers that only describe the hop to Ferry, besides the hop-by-hop ones. */
const notForwarded = new Set([...hopByHop, 'host', 'accept-encoding', 'expect', 'x-request-id']);

const requestIdPattern = /^[\w.-]{8,128}$/;

function pathProblem(detail: string): ProblemError {
  return ProblemError.invalid(
    [{ in: 'path', name: 'path', detail }],
    'The proxied path must be a path under the provider’s base URL.',
  );
}

/**
 * The request target, checked so that no spelling of it leaves the provider's base URL: no absolute
 * URL or `//host`, no dot segments, and none hidden behind percent-encoding (`%2e%2e`, `%2f`, `%5c`)
 * or backslashes, which some servers read as slashes.
 */
export function checkedProxyPath(target: string): string {
  if (!target.startsWith('/')) throw pathProblem('An absolute URL cannot be proxied; send a path.');
  if (target.startsWith('//')) throw pathProblem('A path may not start with "//".');
  const queryAt = target.indexOf('?');
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  if (path.includes('\\')) throw pathProblem('A path may not contain backslashes.');
  if (/%(2f|5c|00)/i.test(path))
    throw pathProblem('A path may not contain encoded slashes, backslashes or NUL.');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(target)) throw pathProblem('A path may not contain control characters.');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw pathProblem('The path is not valid percent-encoding.');
  }
  if (decoded.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw pathProblem('A path may not contain "." or ".." segments, encoded or not.');
  }
  if (decoded.startsWith('//')) throw pathProblem('A path may not start with "//".');
  return target;
}

/** The request body, at most the configured body limit (413 beyond it). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    throw new ProblemError({ status: 413, detail: `The request body is larger than ${limit} bytes.` });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      throw new ProblemError({ status: 413, detail: `The request body is larger than ${limit} bytes.` });
    }
    chunks.push(chunk as Buffer);
  }
  return size === 0 ? undefined : Buffer.concat(chunks);
}

function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || notForwarded.has(name) || isProxyHeader(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function sendProblem(res: ServerResponse, problem: ProblemError, requestId: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(problemBody(problem, requestId));
  for (const [name, value] of Object.entries(problem.headers ?? {})) res.setHeader(name, value);
  if (problem.retryAfter !== undefined) res.setHeader('Retry-After', String(problem.retryAfter));
  res.writeHead(problem.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  res.end(body);
}

async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  settings: Config,
): Promise<string> {
  const proxyHeaders = parseProxyHeaders(req.headers);
  const path = checkedProxyPath(req.url ?? '');
  const installation = await transaction((em) => resolveProxyInstallation(em, proxyHeaders));
  const body = await readBody(req, settings.bodyLimitBytes);
  let answer: ProxyStreamResponse;
  try {
    const connector = connectorFor(await connectionTarget(installation.connectionId));
    const request = { method: req.method ?? 'GET', path, headers: forwardedHeaders(req), body };
    answer = connector.proxyStream
      ? await connector.proxyStream(request)
      : await connector.proxy(request).then((held) => ({ ...held, body: Readable.from([held.body]) }));
  } catch (error) {
    const problem = toProblem(error);
    if (problem instanceof ProblemError) throw problem;
    throw error;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (!hopByHop.has(name.toLowerCase())) headers[name] = value;
  }
  // The body passes through unchanged, so the provider's length (and encoding) still describe it;
  // without one, Node sends it chunked.
  if (answer.headers['content-length'] !== undefined)
    headers['content-length'] = answer.headers['content-length'];
  headers['x-request-id'] = requestId;
  res.writeHead(answer.status, headers);
  if (req.method === 'HEAD') {
    answer.body.resume();
    res.end();
  } else {
    // Streamed: a 100 MB answer never sits in memory whole. A provider failing midway cuts the response.
    await pipeline(answer.body, res).catch((error: unknown) => {
      logger.warn({ err: error, requestId }, 'proxy response cut short');
      res.destroy();
    });
  }
  return installation.id;
}

/** The proxy listener's request handler: every answer is the provider's, or a problem+json of Ferry's. */
/**
 * The proxy's server span (tracing on): named `<method> proxy`, never by the provider path it
 * forwards, which is the caller's and may hold anything. The provider call is its child.
 */
function tracedForward(
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  settings: Config,
): Promise<string> {
  const method = req.method ?? 'GET';
  const attributes = { 'http.request.method': method, 'ferry.listener': 'proxy' };
  return inServerSpan(req.headers, attributes, async (span) => {
    span.updateName(`${method} proxy`);
    try {
      return await forward(req, res, requestId, settings);
    } finally {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) failSpan(span, `HTTP ${res.statusCode}`);
    }
  });
}

/** The proxy listener's entry point: each request reads the settings here and hands them on. */
export function proxyHandler(req: IncomingMessage, res: ServerResponse): void {
  const settings = config();
  const started = performance.now();
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
  const done = (installationId?: string) =>
    logger.info(
      {
        method: req.method,
        // The query may carry the caller's own secrets; the path alone is logged.
        path: (req.url ?? '').split('?')[0].slice(0, 500),
        status: res.statusCode,
        ms: Math.round(performance.now() - started),
        requestId,
        ...(installationId && { installationId }),
      },
      'proxy',
    );
  const forwarded = tracingOn()
    ? tracedForward(req, res, requestId, settings)
    : forward(req, res, requestId, settings);
  forwarded.then(done, (error: unknown) => {
    let problem = error instanceof ProblemError ? error : undefined;
    if (!problem) {
      logger.error({ err: error, requestId }, 'proxy failed');
      problem = new ProblemError({
        status: 500,
        detail: 'An unexpected error occurred; the request id identifies it.',
      });
    }
    // An unread body would otherwise keep the connection busy; the answer closes it.
    if (!req.complete) res.setHeader('connection', 'close');
    sendProblem(res, problem, requestId);
    done();
  });
}
