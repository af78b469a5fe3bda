import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Config } from '../config.js';
import { em as newEntityManager } from '../db/orm.js';
import { logger } from '../logger.js';
import type { McpSession } from './calls.js';
import { CallLimiter } from './rate-limit.js';
import { openScope, type SessionCredentials, type SessionTarget } from './scope.js';
import { createMcpServer } from './server.js';

/**
 * One MCP session over stdin and stdout, for desktop clients that start Ferry as a subprocess
 * (`ferry mcp`): the same scope, checks, tools and operations as the HTTP listener. It runs until
 * the client closes stdin. Logs go to stderr, as all of Ferry's do: stdout carries only the protocol.
 */
export async function serveStdio(
  target: SessionTarget,
  credentials: SessionCredentials,
  settings: Config,
): Promise<void> {
  const scope = await openScope(await newEntityManager(), target, credentials, settings);
  const session: McpSession = {
    id: randomUUID(),
    transport: 'stdio',
    scope,
    limiter: new CallLimiter(settings.mcp.callsPerMinute),
    settings,
  };
  const server = createMcpServer(session);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  await server.connect(transport);
  process.stdin.once('end', () => void server.close());
  logger.info(
    { sessionId: session.id, projectId: scope.projectId, groupRef: scope.groupRef },
    'MCP stdio session opened',
  );
  await closed;
}
