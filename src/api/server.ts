import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { statusGuide } from './problem.js';
import { config, type Config } from '../config.js';
import { logger } from '../logger.js';
import { startTracing } from '../tracing.js';
import { createApp } from './app.js';
import type { ListenerPorts } from './listener-origins.js';
import { allRoutes } from './routes.js';
import { proxyHandler } from './proxy/forward.js';
import type { Host } from './route.js';
import { createMcpListener, MCP_PATH, type McpListener } from '../mcp/http.js';

/**
 * The Koa hosts, the proxy listener (a plain request handler: its paths are the provider's) and the
 * MCP listener for AI agents (the MCP SDK's transport answers there).
 */
export type Listener = Host | 'proxy' | 'mcp';

export interface RunningServers {
  /** Koa hosts end in `/v1`; the proxy's URL is its origin, as any path is forwarded; MCP's is its endpoint. */
  urls: Record<Listener, string>;
  close(): Promise<void>;
}

/** Headers larger than this are refused with 431 (Node's default, stated so it is one decision). */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * What Node answers before Koa sees a request (headers too large, a stalled or malformed request)
 * is a problem-details body too, not an empty reply.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, title, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          `The request's headers are larger than ${MAX_HEADER_BYTES / 1024} KB.`,
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request did not arrive in time.']
        : [400, 'Bad Request', 'The request is not valid HTTP.'];
  endWithProblem(socket, status, title, detail);
}

/** A problem-details answer written straight to the socket, which then closes. */
function endWithProblem(socket: Duplex, status: number, title: string, detail: string): void {
  const body = JSON.stringify({ type: 'about:blank', href: statusGuide(status), title, status, detail });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function listen(
  listener: Listener,
  port: number,
  bind: string,
  bound: ListenerPorts,
  mcp: McpListener,
  settings: Config,
): Promise<Server> {
  return new Promise((resolve, reject) => {
    const handler: RequestListener =
      listener === 'proxy'
        ? proxyHandler
        : listener === 'mcp'
          ? mcp.handle
          : (createApp(listener, allRoutes(), bound, settings).callback() as RequestListener);
    const server = createServer(
      { maxHeaderSize: MAX_HEADER_BYTES, requestTimeout: settings.requestTimeoutMs },
      handler,
    );
    server.headersTimeout = Math.min(settings.requestTimeoutMs, 20_000);
    // Longer than clients' and load balancers' idle timeouts (60 s is common), so a client never
    // reuses a socket the server is closing at that moment (ECONNRESET on a busy machine).
    server.keepAliveTimeout = 65_000;
    server.on('clientError', answerClientError);
    // Node hands CONNECT to this event, not to the app: without it the socket just closes.
    server.on('connect', (_request: IncomingMessage, socket: Duplex) =>
      endWithProblem(
        socket,
        405,
        'Method Not Allowed',
        'CONNECT is not allowed: Ferry is not a tunnelling proxy.',
      ),
    );
    server.listen(port, bind, () => resolve(server));
    server.once('error', reject);
  });
}

/**
 * Starts the api, read, write, search, proxy and MCP listeners (port 0 picks a free port, for tests;
 * a caller that names no MCP port gets a free one). The entry point of the listeners: the settings
 * are read here and handed to each app and listener.
 */
export async function startServers(
  portsGiven?: Omit<Config['ports'], 'mcp'> & { mcp?: number },
  bindGiven?: string,
  settings: Config = config(),
): Promise<RunningServers> {
  const ports = portsGiven ?? settings.ports;
  const bind = bindGiven ?? settings.host;
  // Before any listener answers, so the first request is traced too (a no-op unless tracing is on).
  await startTracing('api');
  const hosts: Listener[] = ['api', 'read', 'write', 'search', 'proxy', 'mcp'];
  const portOf = (host: Listener) => (host === 'mcp' ? (ports.mcp ?? 0) : ports[host]);
  // Each app's API reference sends try-it requests to the other listeners, at the ports they bound.
  const bound: ListenerPorts = {};
  const mcp = createMcpListener(settings);
  const servers = await Promise.all(
    hosts.map((host) => listen(host, portOf(host), bind, bound, mcp, settings)),
  );
  const urls = Object.fromEntries(
    hosts.map((host, index) => {
      const address = servers[index].address();
      const port = typeof address === 'object' && address ? address.port : portOf(host);
      if (host !== 'mcp') bound[host] = port;
      const origin = `http://${bind === '0.0.0.0' ? 'localhost' : bind}:${port}`;
      return [host, host === 'proxy' ? origin : host === 'mcp' ? `${origin}${MCP_PATH}` : `${origin}/v1`];
    }),
  ) as Record<Listener, string>;
  logger.info(urls, 'listening');
  return {
    urls,
    async close() {
      await mcp.close();
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}
