import { expect } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { startSandbox, devClient, type Sandbox } from '../../src/sandbox/index.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

export interface OAuthStack {
  stack: TestStack;
  sandbox: Sandbox;
  /** Base of the project's paths: `/projects/<name>`. */
  base: string;
  close(): Promise<void>;
}

/**
 * The sandbox provider on a free port, Ferry's hosts pointing at it (FERRY_SANDBOX_URL), and the
 * public api URL set to the test api host so the provider's redirect reaches the real callback.
 */
export async function startOAuthStack(
  options: { autoApprove?: boolean; accessTokenTtlSeconds?: number } = {},
) {
  const sandbox = await startSandbox({
    port: 0,
    contacts: 20,
    companies: 5,
    deals: 5,
    autoApprove: options.autoApprove ?? false,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds,
  });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  const stack = await startTestStack();
  process.env.FERRY_PUBLIC_API_URL = stack.urls.api.replace(/\/v1$/, '');
  resetConfig();
  return {
    stack,
    sandbox,
    base: `/projects/${stack.project.name}`,
    async close() {
      await stack.close();
      await sandbox.close();
    },
  } satisfies OAuthStack;
}

export async function createSandboxApp(
  stack: TestStack,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; [key: string]: unknown }> {
  const response = await stack.api('POST', `/projects/${stack.project.name}/provider-apps`, {
    body: {
      provider: 'sandbox',
      clientId: devClient.clientId,
      clientSecret: devClient.clientSecret,
      ...overrides,
    },
  });
  expect(response.status).toBe(200);
  return response.body;
}

export async function oauthConnect(stack: TestStack, body: Record<string, unknown> = {}) {
  // A JSON string (the URL) on success, a problem object otherwise.
  return stack.api<any>('POST', '/oauth-connect', {
    body: {
      projectIdOrName: stack.project.name,
      provider: 'sandbox',
      groupRef: 'acme',
      consumerRef: 'alice',
      ...body,
    },
  });
}

/**
 * Walks the sandbox's consent page as a browser would (GET the page, submit its form) and returns
 * where the provider sends the browser back: Ferry's callback URL with code (or error) and state.
 */
export async function consent(
  sandbox: Sandbox,
  authorizationUrl: string,
  decision: 'approve' | 'deny',
): Promise<string> {
  const page = await request<string>('GET', authorizationUrl);
  expect(page.status).toBe(200);
  const requestId = /name="request_id" value="([^"]+)"/.exec(page.body)?.[1];
  expect(requestId).toBeDefined();
  const response = await fetch(`${sandbox.url}/oauth/authorize/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request_id: requestId!, decision }).toString(),
    redirect: 'manual',
  });
  expect(response.status).toBe(302);
  return response.headers.get('location')!;
}

/** The whole flow by HTTP: connect, approve, follow the redirect to Ferry's callback. */
export async function connectByHttp(oauth: OAuthStack, body: Record<string, unknown> = {}) {
  const started = await oauthConnect(oauth.stack, body);
  expect(started.status).toBe(200);
  const callback = await consent(oauth.sandbox, started.body, 'approve');
  const page = await request<string>('GET', callback);
  return { authorizationUrl: started.body, callback, page };
}

/** The `postMessage` payload the callback page would send to its opener. */
export function pageResult(html: string): Record<string, unknown> {
  const json = /var result = (\{.*?\});/s.exec(html)?.[1];
  expect(json).toBeDefined();
  return JSON.parse(json!) as Record<string, unknown>;
}

/** The message for the public React components (`@amp-labs/react`) the callback page would post. */
export function componentsMessage(html: string): Record<string, any> {
  const json = /var components = (\{.*?\});\n/s.exec(html)?.[1];
  expect(json).toBeDefined();
  return JSON.parse(json!) as Record<string, any>;
}

/** Straight SQL against the test database, to check what was (not) written. */
export async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

export async function eventsOf(projectId: string, type: string): Promise<Record<string, any>[]> {
  const rows = await sql<{ data: Record<string, any> }>(
    'select data from events where project_id = $1 and type = $2 order by create_time',
    [projectId, type],
  );
  return rows.map((row) => row.data);
}
