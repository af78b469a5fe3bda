import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.js';
import { ProblemError } from '../core/problem.js';
import { em as newEntityManager } from '../db/orm.js';
import { logger } from '../logger.js';
import { problemBody } from '../api/problem.js';
import type { McpSession } from './calls.js';
import { CallLimiter } from './rate-limit.js';
import { confirmScope, openScope, type SessionCredentials, type SessionTarget } from './scope.js';
import { createMcpServer } from './server.js';

/**
 * The MCP listener (FERRY_MCP_PORT, path /v1/mcp): Streamable HTTP, one session per agent, each
 * bound to the project, integration and group its first request named and to the credential that
 * opened it. Sessions live in this process's memory; one left unused past FERRY_MCP_SESSION_IDLE_SECONDS
 * is closed (its client gets 404 and opens another, as the protocol says).
 */

export const MCP_PATH = '/v1/mcp';

interface OpenSession {
  session: McpSession;
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
}

export interface McpListener {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Sessions open now (tests and the banner's curious operator). */
  sessionCount(): number;
  close(): Promise<void>;
}

function single(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text?.trim() || undefined;
}

function credentialsOf(req: IncomingMessage, query: URLSearchParams): SessionCredentials {
  const bearer = /^Bearer\s+(.+)$/i.exec(single(req.headers.authorization) ?? '')?.[1]?.trim();
  const apiKey = single(req.headers['x-api-key']) ?? (query.get('apiKey')?.trim() || undefined);
  return { ...(apiKey && { apiKey }), ...(bearer && { bearer }) };
}

function targetOf(req: IncomingMessage, query: URLSearchParams): SessionTarget {
  const pick = (param: string, header: string) =>
    query.get(param)?.trim() || single(req.headers[header]) || undefined;
  return {
    project: pick('project', 'x-ferry-project'),
    integration: pick('integration', 'x-ferry-integration'),
    groupRef: pick('groupRef', 'x-ferry-group-ref'),
  };
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      throw new ProblemError({ status: 413, detail: `The request body is larger than ${limit} bytes.` });
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw ProblemError.badRequest('The request body is not JSON: send a JSON-RPC message.');
  }
}

function sendProblem(res: ServerResponse, problem: ProblemError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const requestId = randomUUID();
  const body = JSON.stringify(problemBody(problem, requestId));
  for (const [name, value] of Object.entries(problem.headers ?? {})) res.setHeader(name, value);
  res.writeHead(problem.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  res.end(body);
}

/**
 * CORS as the Koa hosts answer it (FERRY_CORS_ORIGINS and the api host's origin), so an agent in a
 * browser, holding a project JWT minted for its group, can reach the listener; and a preflight
 * (OPTIONS) answered here. True when the request was a preflight, now answered.
 */
function answerCors(req: IncomingMessage, res: ServerResponse, origins: readonly string[]): boolean {
  const origin = single(req.headers.origin);
  const allowed = origin && (origins.includes('*') ? '*' : origins.includes(origin) ? origin : undefined);
  if (allowed) {
    res.setHeader('access-control-allow-origin', allowed);
    res.setHeader('vary', 'Origin');
    res.setHeader(
      'access-control-expose-headers',
      'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, X-Request-Id',
    );
  }
  if (req.method !== 'OPTIONS') return false;
  if (allowed) {
    res.setHeader('access-control-allow-methods', 'GET, POST, DELETE');
    res.setHeader(
      'access-control-allow-headers',
      'Content-Type, Accept, Authorization, X-Api-Key, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-Id, X-Ferry-Project, X-Ferry-Integration, X-Ferry-Group-Ref',
    );
    res.setHeader('access-control-max-age', '600');
  }
  res.writeHead(204).end();
  return true;
}

/** `given`: the deployment's settings, handed in by `startServers` and on to each session's tools. */
export function createMcpListener(given: Config): McpListener {
  const sessions = new Map<string, OpenSession>();
  const settings = given.mcp;
  const origins = [...new Set([...given.corsOrigins, new URL(given.publicApiUrl).origin])];

  const closeSession = async (id: string) => {
    const open = sessions.get(id);
    sessions.delete(id);
    await open?.server.close().catch(() => undefined);
  };

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, open] of sessions) {
        if (now - open.lastUsed > settings.sessionIdleMs) void closeSession(id);
      }
    },
    Math.min(60_000, settings.sessionIdleMs),
  );
  sweep.unref();

  async function openSession(req: IncomingMessage, res: ServerResponse, query: URLSearchParams) {
    if (req.method !== 'POST') {
      throw ProblemError.badRequest(
        'No MCP session: start one with a POST of `initialize`, then send its Mcp-Session-Id header.',
      );
    }
    const body = await readJson(req, given.bodyLimitBytes);
    if (!isInitializeRequest(body)) {
      throw ProblemError.badRequest(
        'No MCP session: the first message must be `initialize`; later ones carry the Mcp-Session-Id header.',
      );
    }
    if (sessions.size >= settings.maxSessions) {
      throw ProblemError.unavailable('Too many MCP sessions are open on this listener; try again later.', 30);
    }
    const scope = await openScope(
      await newEntityManager(),
      targetOf(req, query),
      credentialsOf(req, query),
      given,
    );
    const id = randomUUID();
    const session: McpSession = {
      id,
      transport: 'http',
      scope,
      limiter: new CallLimiter(settings.callsPerMinute),
      settings: given,
    };
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    const server = createMcpServer(session);
    transport.onclose = () => sessions.delete(id);
    await server.connect(transport);
    sessions.set(id, { session, server, transport, lastUsed: Date.now() });
    logger.info(
      {
        sessionId: id,
        projectId: scope.projectId,
        integrationId: scope.integrationId,
        groupRef: scope.groupRef,
      },
      'MCP session opened',
    );
    await transport.handleRequest(req, res, body);
  }

  async function continueSession(
    req: IncomingMessage,
    res: ServerResponse,
    query: URLSearchParams,
    id: string,
  ) {
    const open = sessions.get(id);
    if (!open) {
      throw ProblemError.notFound(
        `MCP session "${id}" is not open (it ended, or this listener restarted); start a new one with initialize.`,
      );
    }
    await confirmScope(await newEntityManager(), open.session.scope, credentialsOf(req, query), given);
    open.lastUsed = Date.now();
    const body = req.method === 'POST' ? await readJson(req, given.bodyLimitBytes) : undefined;
    await open.transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://mcp.invalid');
    if (url.pathname !== MCP_PATH) {
      throw ProblemError.notFound(`Nothing here: the MCP endpoint is ${MCP_PATH}.`);
    }
    const sessionId = single(req.headers['mcp-session-id']);
    if (sessionId) await continueSession(req, res, url.searchParams, sessionId);
    else await openSession(req, res, url.searchParams);
  }

  return {
    handle(req, res) {
      if (answerCors(req, res, origins)) return;
      handle(req, res).catch((error: unknown) => {
        if (error instanceof ProblemError) {
          sendProblem(res, error);
          return;
        }
        logger.error({ err: error }, 'MCP request failed');
        sendProblem(
          res,
          new ProblemError({
            status: 500,
            detail: 'An unexpected error occurred; the request id identifies it.',
          }),
        );
      });
    },
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.keys()].map(closeSession));
    },
  };
}
