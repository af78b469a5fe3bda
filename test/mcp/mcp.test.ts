import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { config, resetConfig } from '../../src/config.js';
import { transaction } from '../../src/db/orm.js';
import { InstallationConfigEntity } from '../../src/db/entities/installation.js';
import { createMcpListener, MCP_PATH } from '../../src/mcp/http.js';
import { registry } from '../../src/metrics.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createReadFixture, type ReadFixture } from '../reads/fixtures.js';
import { projectJwtMinter } from '../support/project-jwt.js';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';

/**
 * The MCP server driven by the official SDK's client, over Streamable HTTP and over stdio (`ferry
 * mcp` as a subprocess), against the real stack and the sandbox provider: what an agent can do with
 * one installation, what it is refused, and that each call is an operation with logs.
 */

let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;
let other: ReadFixture;
let mint: (claims?: { groupRef?: string }) => Promise<string>;
/**
 * The MCP Inspector's command line (`npx @modelcontextprotocol/inspector --cli`), a dev dependency:
 * v1, the last that runs on Node 20 (v2 needs Node 22.19).
 */
const INSPECTOR = 'node_modules/@modelcontextprotocol/inspector/cli/build/cli.js';
/** The MCP endpoint agents connect to; one test points it at a listener of its own. */
let mcpUrl: string;
const surname = `Hopper-${randomUUID().slice(0, 8)}`;
const email = `grace-${randomUUID().slice(0, 8)}@example.com`;

type Kind = 'http' | 'stdio';
interface Credential {
  apiKey?: string;
  jwt?: string;
}

interface Target {
  integrationId: string;
  groupRef: string;
}

/**
 * The README's client configs ("AI agents (MCP)"): Claude Desktop's (stdio) and Cursor's (HTTP), as
 * written. Every session below is opened from them, with only the project, integration, group,
 * credential, paths and address swapped for the test's.
 */
function readmeConfigs(): { claude: any; cursor: any } {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.indexOf('\n## AI agents (MCP)');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const [claude, cursor] = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map(
    (match) => JSON.parse(match[1]).mcpServers['acme-crm'],
  );
  return { claude, cursor };
}

function transportFor(kind: Kind, target: Target, credential: Credential, env: Record<string, string> = {}) {
  const { claude, cursor } = readmeConfigs();
  const swaps: Record<string, string> = {
    development: stack.project.name,
    crm: target.integrationId,
    acme: target.groupRef,
    'ferry_sk_…': credential.apiKey ?? '',
    '/path/to/ferry/bin/ferry.js': 'bin/ferry.js',
  };
  const swap = (value: string) => swaps[value] ?? value;
  if (kind === 'http') {
    const written = new URL(cursor.url);
    const url = new URL(`${new URL(mcpUrl).origin}${written.pathname}`);
    for (const [name, value] of written.searchParams) url.searchParams.set(name, swap(value));
    const headers: Record<string, string> = credential.apiKey
      ? Object.fromEntries(
          Object.entries(cursor.headers as Record<string, string>).map(([n, v]) => [n, swap(v)]),
        )
      : { authorization: `Bearer ${credential.jwt}` };
    return new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  }
  expect(claude.command).toBe('node');
  const { FERRY_API_KEY: key, DATABASE_URL: _database, ...written } = claude.env as Record<string, string>;
  return new StdioClientTransport({
    command: process.execPath,
    args: (claude.args as string[]).map(swap),
    env: {
      ...(process.env as Record<string, string>),
      ...written,
      ...(credential.apiKey ? { FERRY_API_KEY: swap(key) } : { FERRY_PROJECT_JWT: credential.jwt! }),
      ...env,
    },
    stderr: 'pipe',
  });
}

async function connect(
  kind: Kind,
  options: { target?: Target; credential?: Credential; env?: Record<string, string> } = {},
): Promise<Client> {
  const client = new Client({ name: 'ferry-test', version: '1.0.0' });
  const transport: Transport = transportFor(
    kind,
    options.target ?? fixture,
    options.credential ?? { apiKey: stack.project.apiKey },
    options.env,
  );
  await client.connect(transport);
  return client;
}

/** A tool's answer: its JSON on success, its text (the message an agent reads) on a tool error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  const text = result.content.map((part) => part.text).join('\n');
  return result.isError ? { error: text } : { ok: JSON.parse(text) };
}

async function sandboxContact(id: string) {
  return request('GET', `${sandbox.url}/api/v1/contacts/${id}`, {
    headers: { 'x-api-key': 'sandbox-demo-key' },
  });
}

async function setConfig(content: Record<string, unknown>) {
  await transaction(async (em) => {
    const installationConfig = await em.findOneOrFail(InstallationConfigEntity, {
      installationId: fixture.installationId,
    });
    installationConfig.content = { ...installationConfig.content, ...content };
  });
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 30, companies: 2, deals: 2 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack();
  mcpUrl = stack.urls.mcp;
  fixture = await createReadFixture(stack);
  other = await createReadFixture(stack, { receiver: fixture.receiver });
  await setConfig({
    write: { objects: { contacts: { objectName: 'contacts', deletionSettings: { enabled: true } } } },
  });
  mint = await projectJwtMinter(stack);
  const created = await request('POST', `${sandbox.url}/api/v1/contacts`, {
    headers: { 'x-api-key': 'sandbox-demo-key' },
    body: { email, firstName: 'Grace', lastName: surname },
  });
  expect(created.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fixture?.receiver.stop();
  await sandbox?.close();
});

describe.each<[Kind]>([['http'], ['stdio']])('an agent over %s', (kind) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(kind);
  }, 30_000);
  afterAll(async () => client?.close());

  it('lists the tools, with input schemas and writes flagged destructive', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(
      [
        'connection_status',
        'create_record',
        'delete_record',
        'describe_object',
        'list_objects',
        'proxy_request',
        'read_records',
        'search_records',
        'update_record',
      ].sort(),
    );
    expect(byName.get('read_records')!.inputSchema).toMatchObject({
      type: 'object',
      required: ['objectName'],
      properties: { since: { type: 'string', format: 'date-time' } },
    });
    for (const name of ['create_record', 'update_record', 'delete_record']) {
      expect(byName.get(name)!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    }
    expect(byName.get('search_records')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('lists the installation’s objects and describes one from the provider’s metadata', async () => {
    const listed = await call(client, 'list_objects');
    expect(listed.ok.objects).toEqual([
      { name: 'contacts', read: true, search: true, write: true, delete: true },
    ]);
    expect(listed.ok.proxy).toEqual({ enabled: false });
    const described = await call(client, 'describe_object', { objectName: 'contacts' });
    const fields = new Map(described.ok.fields.map((field: any) => [field.name, field]));
    expect(fields.get('email')).toMatchObject({ type: 'string' });
    expect(fields.get('createdAt')).toMatchObject({ readOnly: true });
  });

  it('searches by field value and reads two pages of recent records', async () => {
    const found = await call(client, 'search_records', { objectName: 'contacts', filters: { email } });
    expect(found.ok.records).toHaveLength(1);
    expect(found.ok.records[0].fields).toMatchObject({ email, firstname: 'Grace', surname });

    const since = '2000-01-01T00:00:00Z';
    const first = await call(client, 'read_records', { objectName: 'contacts', since, pageSize: 5 });
    expect(first.ok.records).toHaveLength(5);
    expect(typeof first.ok.nextPageToken).toBe('string');
    const second = await call(client, 'read_records', {
      objectName: 'contacts',
      since,
      pageSize: 5,
      pageToken: first.ok.nextPageToken,
    });
    expect(second.ok.records).toHaveLength(5);
    const ids = [...first.ok.records, ...second.ok.records].map((record: any) => record.id);
    expect(new Set(ids).size).toBe(10);
    // Only what the installation reads reaches the agent: no raw provider record.
    expect(Object.keys(first.ok.records[0].fields).sort()).toEqual(
      expect.arrayContaining(['email', 'firstname', 'surname']),
    );
    expect(first.ok.records[0].fields).not.toHaveProperty('phone');
  });

  it('creates, updates and deletes a contact, as the sandbox then shows', async () => {
    const address = `ada-${kind}-${randomUUID().slice(0, 8)}@example.com`;
    const created = await call(client, 'create_record', {
      objectName: 'contacts',
      fields: { email: address, firstName: 'Ada', lastName: 'Lovelace' },
    });
    const id = created.ok.recordId;
    expect(typeof id).toBe('string');
    expect((await sandboxContact(id)).body).toMatchObject({ email: address, firstName: 'Ada' });

    const updated = await call(client, 'update_record', {
      objectName: 'contacts',
      recordId: id,
      fields: { firstName: 'Augusta' },
    });
    expect(updated.ok.recordId).toBe(id);
    expect((await sandboxContact(id)).body).toMatchObject({ email: address, firstName: 'Augusta' });

    const deleted = await call(client, 'delete_record', { objectName: 'contacts', recordId: id });
    expect(deleted.ok).toMatchObject({ recordId: id });
    expect((await sandboxContact(id)).status).toBe(404);
  });

  it('refuses a read-only field, an object not in the installation, and the proxy while it is off', async () => {
    const address = `refused-${kind}-${randomUUID().slice(0, 8)}@example.com`;
    const readOnly = await call(client, 'create_record', {
      objectName: 'contacts',
      fields: { email: address, createdAt: '2020-01-01T00:00:00Z' },
    });
    expect(readOnly.error).toContain('"createdAt" is read-only');
    expect(readOnly.error).toMatch(/Writable fields of contacts on create: .*email/);
    const searched = await call(client, 'search_records', {
      objectName: 'contacts',
      filters: { email: address },
    });
    expect(searched.ok.records).toEqual([]);

    const object = await call(client, 'describe_object', { objectName: 'deals' });
    expect(object.error).toContain('Object "deals" is not in this installation.');
    expect(object.error).toContain('Use one of: contacts');
    const write = await call(client, 'create_record', { objectName: 'deals', fields: { name: 'x' } });
    expect(write.error).toContain('"deals" is not in this installation');

    const proxied = await call(client, 'proxy_request', { path: '/contacts?limit=1' });
    expect(proxied.error).toContain('The proxy is not enabled');
  });

  it('answers an unknown tool and wrong arguments with tool errors, and the session goes on', async () => {
    expect((await call(client, 'drop_database')).error).toMatch(
      /There is no tool "drop_database"[\s\S]*list_objects/,
    );
    const wrong = await call(client, 'read_records', { objectName: 7, pageSize: 1000 });
    expect(wrong.error).toContain("The arguments do not match read_records's input schema.");
    expect(wrong.error).toContain('objectName');
    expect(wrong.error).toContain('pageSize');
    expect((await call(client, 'list_objects')).ok.objects).toHaveLength(1);
  });
});

describe('the MCP Inspector', () => {
  it('lists the tools in its CLI mode', async () => {
    const url = new URL(mcpUrl);
    url.search = new URLSearchParams({
      project: stack.project.name,
      integration: fixture.integrationId,
      groupRef: fixture.groupRef,
    }).toString();
    // Asynchronously: the listener it calls runs in this process.
    const run = await promisify(execFile)(
      process.execPath,
      [
        INSPECTOR,
        '--cli',
        url.toString(),
        '--transport',
        'http',
        '--header',
        `X-Api-Key: ${stack.project.apiKey}`,
        '--method',
        'tools/list',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    const listed = JSON.parse(run.stdout);
    expect(listed.tools.map((tool: any) => tool.name)).toContain('read_records');
  }, 30_000);
});

describe('tool calls as operations', () => {
  it('records each call with its tool, arguments and outcome, visible through the operations API', async () => {
    const client = await connect('http');
    const done = await call(client, 'connection_status');
    expect(done.ok).toMatchObject({ provider: 'sandboxApiKey', status: 'working' });
    const refused = await call(client, 'describe_object', { objectName: 'deals' });
    await client.close();

    const operation = await stack.api(
      'GET',
      `/projects/${stack.project.id}/operations/${done.ok.operationId}`,
    );
    expect(operation.body).toMatchObject({
      actionType: 'mcp.tool',
      status: 'success',
      installationId: fixture.installationId,
      metadata: { tool: 'connection_status', transport: 'http', caller: { kind: 'apiKey' } },
    });
    const listing = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/operations`,
    );
    const failed = listing.body.results.find(
      (op: any) =>
        op.actionType === 'mcp.tool' && op.metadata.tool === 'describe_object' && op.status === 'failure',
    );
    expect(failed.metadata.arguments).toEqual({ objectName: 'deals' });
    expect(refused.error).toContain(failed.id);
    const logs = await stack.api('GET', `/projects/${stack.project.id}/operations/${failed.id}/logs`);
    expect(logs.body.map((log: any) => log.message.msg)).toEqual([
      'Agent called describe_object',
      'describe_object refused (404)',
    ]);
    const metrics = await registry.getSingleMetricAsString('ferry_mcp_tool_calls_total');
    expect(metrics).toMatch(/ferry_mcp_tool_calls_total\{tool="create_record",outcome="success"\} [1-9]/);
    expect(metrics).toMatch(/ferry_mcp_tool_calls_total\{tool="unknown",outcome="failure"\} [1-9]/);
  });
});

describe('provider failures and bad cursors', () => {
  it('are tool errors that say whether to retry, and the session goes on', async () => {
    const client = await connect('http');
    const junk = await call(client, 'read_records', { objectName: 'contacts', pageToken: 'not-a-token' });
    expect(junk.error).toContain('pass back nextPageToken unchanged');
    sandbox.faults.set({ errorRate: 1 });
    try {
      const failed = await call(client, 'read_records', { objectName: 'contacts', pageSize: 1 });
      expect(failed.error).toContain('Trying again later may succeed');
      expect(failed.error).toMatch(/\(Ferry operation [0-9a-f-]{36}\)$/);
    } finally {
      sandbox.faults.reset();
    }
    expect(
      (await call(client, 'read_records', { objectName: 'contacts', pageSize: 1 })).ok.records,
    ).toHaveLength(1);
    await client.close();
  });
});

describe('proxy through an agent', () => {
  it('sends GET where the installation enables the proxy, and no other method', async () => {
    await setConfig({ proxy: { enabled: true } });
    try {
      const client = await connect('http');
      const answer = await call(client, 'proxy_request', {
        path: '/contacts?limit=2',
        headers: { 'X-Trace': 'agent-side-secret' },
      });
      expect(answer.ok.status).toBe(200);
      expect(JSON.parse(answer.ok.body).results).toHaveLength(2);
      // Recorded without the header's value, with the provider request in its logs.
      const operation = await stack.api(
        'GET',
        `/projects/${stack.project.id}/operations/${answer.ok.operationId}`,
      );
      expect(operation.body.metadata.arguments).toEqual({
        path: '/contacts?limit=2',
        headers: { 'X-Trace': '[redacted]' },
      });
      const logs = await stack.api(
        'GET',
        `/projects/${stack.project.id}/operations/${answer.ok.operationId}/logs`,
      );
      expect(JSON.stringify(logs.body)).not.toContain('agent-side-secret');
      expect(logs.body.map((log: any) => log.message.msg)).toContainEqual(
        expect.stringMatching(/^GET http:\/\/.*\/api\/v1\/contacts\?limit=2 → 200/),
      );
      const post = await call(client, 'proxy_request', {
        method: 'POST',
        path: '/contacts',
        body: '{}',
      });
      expect(post.error).toContain('sends only GET requests here, not POST');
      await client.close();
    } finally {
      await setConfig({ proxy: { enabled: false } });
    }
  });
});

describe('sessions refused', () => {
  const initialize = (query: Record<string, string>, headers: Record<string, string>) => {
    const url = new URL(stack.urls.mcp);
    url.search = new URLSearchParams(query).toString();
    return request('POST', url.toString(), {
      headers: { accept: 'application/json, text/event-stream', ...headers },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
    });
  };
  const target = () => ({
    project: stack.project.id,
    integration: fixture.integrationId,
    groupRef: fixture.groupRef,
  });

  it('a project JWT of another group, over both transports', async () => {
    const token = await mint({ groupRef: other.groupRef });
    const http = await initialize(target(), { authorization: `Bearer ${token}` });
    expect(http.status).toBe(403);
    expect(http.body.detail).toBe(
      `This token acts for group "${other.groupRef}", not "${fixture.groupRef}".`,
    );
    await expect(connect('stdio', { credential: { jwt: token } })).rejects.toThrow();
    // Its own group it may open.
    const own = await connect('http', { target: other, credential: { jwt: token } });
    expect((await call(own, 'list_objects')).ok.objects[0].name).toBe('contacts');
    await own.close();
  }, 30_000);

  it('a frontend key, another project’s key, no key, and a target left out', async () => {
    const frontend = await stack.api('POST', `/projects/${stack.project.id}/api-keys`, {
      body: { label: 'browser', scopes: ['frontend'] },
    });
    expect(frontend.status).toBe(201);
    expect((await initialize(target(), { 'x-api-key': frontend.body.key })).status).toBe(403);
    const stranger = await createTestProject();
    expect((await initialize(target(), { 'x-api-key': stranger.apiKey })).status).toBe(404);
    const none = await initialize(target(), {});
    expect(none.status).toBe(401);
    const partial = await initialize({ project: stack.project.id }, { 'x-api-key': stack.project.apiKey });
    expect(partial.status).toBe(400);
    expect(partial.body.issues.map((issue: any) => issue.name)).toEqual(['integration', 'groupRef']);
  });

  it('a key in the query opens a session; another credential cannot use it', async () => {
    const client = await connect('http');
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const stranger = await createTestProject();
    const hijack = await request('POST', stack.urls.mcp, {
      headers: {
        'mcp-session-id': sessionId,
        'x-api-key': stranger.apiKey,
        accept: 'application/json, text/event-stream',
      },
      body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    });
    expect(hijack.status).toBe(403);
    await client.close();
    const url = new URL(stack.urls.mcp);
    url.search = new URLSearchParams({ ...target(), apiKey: stack.project.apiKey }).toString();
    const byQuery = new Client({ name: 'no-headers', version: '1' });
    await byQuery.connect(new StreamableHTTPClientTransport(url));
    expect((await call(byQuery, 'list_objects')).ok.objects).toHaveLength(1);
    await byQuery.close();
  });

  it('answers a browser’s preflight, so an agent there can send its group’s token', async () => {
    const preflight = await fetch(stack.urls.mcp, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, mcp-session-id',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Mcp-Session-Id/);
    expect(preflight.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
  });

  it('calls past the session’s rate limit, with when to try again', async () => {
    // A listener of its own, started with a limit of 2 calls a minute.
    process.env.FERRY_MCP_CALLS_PER_MINUTE = '2';
    resetConfig();
    const listener = createMcpListener(config());
    const server = createServer(listener.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    delete process.env.FERRY_MCP_CALLS_PER_MINUTE;
    resetConfig();
    mcpUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${MCP_PATH}`;
    try {
      const client = await connect('http');
      expect((await call(client, 'list_objects')).ok).toBeDefined();
      expect((await call(client, 'list_objects')).ok).toBeDefined();
      expect((await call(client, 'list_objects')).error).toMatch(
        /^Rate limit: this session may make 2 tool calls a minute\. Wait \d+ s before the next call\.$/,
      );
      await client.close();
    } finally {
      mcpUrl = stack.urls.mcp;
      await listener.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
