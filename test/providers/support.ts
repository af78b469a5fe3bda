import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthMaterial, ConnectionTarget } from '../../src/providers/auth-material.js';
import type { Sandbox } from '../../src/sandbox/index.js';

/** A sandbox target authenticated with an API key; `keys` are handed out in turn, the last one repeated. */
export function sandboxApiKeyTarget(
  sandbox: Sandbox,
  keys: string[] = ['sandbox-demo-key'],
): ConnectionTarget & {
  authCalls: { forceRefresh?: boolean }[];
} {
  const authCalls: { forceRefresh?: boolean }[] = [];
  return {
    provider: 'sandboxApiKey',
    templateVars: { sandboxURL: sandbox.url },
    authCalls,
    async auth(options = {}): Promise<AuthMaterial> {
      authCalls.push(options);
      return { type: 'apiKey', apiKey: keys[Math.min(authCalls.length - 1, keys.length - 1)] };
    },
  };
}

/** An access token from the sandbox's own token endpoint (client credentials grant). */
export async function sandboxAccessToken(sandbox: Sandbox): Promise<string> {
  const client = sandbox.registerClient({ name: 'connector tests' });
  const response = await fetch(`${sandbox.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      scope: 'contacts.read contacts.write companies.read companies.write deals.read deals.write webhooks',
    }),
  });
  const body = (await response.json()) as { access_token: string };
  return body.access_token;
}

/**
 * A sandbox target over OAuth 2: `auth()` returns the current token; `auth({forceRefresh})` fetches a
 * new one from the sandbox, as the credentials layer would refresh it.
 */
export async function sandboxOAuthTarget(
  sandbox: Sandbox,
): Promise<ConnectionTarget & { refreshes: number; tokens: string[] }> {
  const tokens = [await sandboxAccessToken(sandbox)];
  const target = {
    provider: 'sandbox',
    templateVars: { sandboxURL: sandbox.url },
    refreshes: 0,
    tokens,
    async auth(options: { forceRefresh?: boolean } = {}): Promise<AuthMaterial> {
      if (options.forceRefresh) {
        target.refreshes++;
        tokens.push(await sandboxAccessToken(sandbox));
      }
      return { type: 'oauth2', accessToken: tokens[tokens.length - 1] };
    },
  };
  return target;
}

export interface EchoRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server that records each request and answers `status` (default 200) with a JSON echo. */
export async function startEchoServer(): Promise<{
  url: string;
  received: EchoRequest[];
  statuses: number[];
  close(): Promise<void>;
}> {
  const received: EchoRequest[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      res.statusCode = statuses.shift() ?? 200;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: entry.method, url: entry.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    statuses,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
