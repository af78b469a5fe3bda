import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox } from '../../src/sandbox/index.js';

export const apiKeyHeaders = { 'X-Api-Key': 'sandbox-demo-key' };

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch + JSON, never following redirects so tests can inspect Location. */
export async function request<T = Record<string, unknown>>(
  sandbox: Sandbox,
  path: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    json?: unknown;
    form?: Record<string, string>;
  } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const response = await fetch(`${sandbox.url}${path}`, {
    method: init.method ?? (body ? 'POST' : 'GET'),
    headers,
    body,
    redirect: 'manual',
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // HTML pages stay text
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** Shorthand for API-key calls to the REST API. */
export function api<T = Record<string, unknown>>(
  sandbox: Sandbox,
  path: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  return request<T>(sandbox, `/api/v1${path}`, { ...init, headers: { ...apiKeyHeaders, ...init.headers } });
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function basicAuth(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
}

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  rawBody: string;
}

/** A local webhook receiver: records every POST; `status` decides what it answers next. */
export async function startReceiver(): Promise<{
  url: string;
  received: ReceivedRequest[];
  statuses: number[];
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}> {
  const received: ReceivedRequest[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    statuses,
    async waitFor(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`expected ${count} webhook requests, got ${received.length}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
