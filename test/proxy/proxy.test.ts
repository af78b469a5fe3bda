import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createTestProject, startTestStack, type TestProject, type TestStack } from '../support/stack.js';
import {
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  install,
  type InstallationFixture,
} from '../installations/support.js';

let stack: TestStack;
let sandbox: Sandbox;
let fixture: InstallationFixture;
let groupRef: string;
let installationId: string;
let disabledInstallationId: string;
let evil: Server;
let evilHits = 0;
let evilPort: number;

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/**
 * A request sent as written: `fetch` would normalise `%2e%2e` and refuse absolute-form targets,
 * which are exactly what these tests send.
 */
function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const url = new URL(stack.urls.proxy);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, ...(body !== undefined && { 'content-length': Buffer.byteLength(body) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function proxyHeaders(extra: Record<string, string> = {}, project: TestProject = stack.project) {
  return {
    'x-amp-proxy-version': '1',
    'x-amp-project-id': project.id,
    'x-api-key': project.apiKey,
    'x-amp-installation-id': installationId,
    ...extra,
  };
}

function expectProblem(response: RawResponse, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json');
  expect(response.json).toMatchObject({ status, title: expect.any(String) });
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 20, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  evil = createServer((req, res) => {
    evilHits++;
    res.end('evil');
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  evilPort = (evil.address() as AddressInfo).port;
  stack = await startTestStack();
  await createDestination(stack);
  fixture = await createIntegration(stack);
  ({ groupRef } = await connectGroup(stack));
  installationId = (await install(stack, fixture, groupRef)).id;
  const other = await connectGroup(stack);
  disabledInstallationId = (
    await install(stack, fixture, other.groupRef, { ...configContent(), proxy: { enabled: false } })
  ).id;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  await new Promise((resolve) => evil?.close(resolve));
  delete process.env.FERRY_SANDBOX_URL;
});

describe('proxy listener', () => {
  it('forwards a GET with its query to the provider, credentials injected, and passes the answer back', async () => {
    const response = await raw('GET', '/contacts?limit=3', proxyHeaders({ 'x-request-id': 'proxy-test-1' }));
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['x-request-id']).toBe('proxy-test-1');
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.text));
    expect(response.headers['transfer-encoding']).toBeUndefined();
    // The sandbox answers only with its own key: Ferry's key was replaced by the connection's.
    const me = await raw('GET', '/me', proxyHeaders());
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ authType: 'apiKey' });
    expect(response.json.results).toHaveLength(3);
    expect(response.json.nextCursor).toEqual(expect.any(String));
  });

  it('names the installation by integration name and group ref', async () => {
    const response = await raw('GET', '/me', {
      'x-amp-proxy-version': '1',
      'x-amp-project-id': stack.project.id,
      'x-api-key': stack.project.apiKey,
      'x-amp-integration-name': fixture.integrationName,
      'x-amp-group-ref': groupRef,
    });
    expect(response.status).toBe(200);
  });

  it('forwards a POST body and passes back the status, headers and body of the provider', async () => {
    const email = `proxy-${randomUUID().slice(0, 8)}@example.com`;
    const created = await raw(
      'POST',
      '/contacts',
      proxyHeaders({ 'content-type': 'application/json' }),
      JSON.stringify({ email, firstName: 'Pro', lastName: 'Xy' }),
    );
    expect(created.status).toBe(201);
    expect(created.headers.location).toMatch(/^\/api\/v1\/contacts\//);
    expect(created.json).toMatchObject({ email });
    const fetched = await raw('GET', `/contacts/${encodeURIComponent(created.json.id)}`, proxyHeaders());
    expect(fetched.status).toBe(200);
    expect(fetched.json).toMatchObject({ id: created.json.id, email });
  });

  it("passes the provider's own errors through unchanged", async () => {
    const response = await raw('GET', '/contacts/no-such-contact', proxyHeaders());
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).not.toBe('application/problem+json');
  });

  it('refuses an installation whose config does not enable the proxy', async () => {
    const response = await raw(
      'GET',
      '/me',
      proxyHeaders({ 'x-amp-installation-id': disabledInstallationId }),
    );
    expectProblem(response, 403);
    expect(response.json.detail).toMatch(/not enabled/);
  });

  it('answers each header error with a problem', async () => {
    const { 'x-amp-proxy-version': _version, ...noVersion } = proxyHeaders();
    expectProblem(await raw('GET', '/me', noVersion), 400);
    expectProblem(await raw('GET', '/me', proxyHeaders({ 'x-amp-proxy-version': '2' })), 400);

    const { 'x-amp-project-id': _project, ...noProject } = proxyHeaders();
    const missingProject = await raw('GET', '/me', noProject);
    expectProblem(missingProject, 400);
    expect(missingProject.json.issues).toMatchObject([expect.objectContaining({ name: 'x-amp-project-id' })]);
    expectProblem(await raw('GET', '/me', proxyHeaders({ 'x-amp-project-id': stack.project.name })), 400);

    const { 'x-api-key': _key, ...noKey } = proxyHeaders();
    expectProblem(await raw('GET', '/me', noKey), 400);
    const badKey = await raw('GET', '/me', proxyHeaders({ 'x-api-key': 'not-a-key' }));
    expectProblem(badKey, 401);

    const { 'x-amp-installation-id': _installation, ...noInstallation } = proxyHeaders();
    expectProblem(await raw('GET', '/me', noInstallation), 400);
    const groupOnly = await raw('GET', '/me', { ...noInstallation, 'x-amp-group-ref': groupRef });
    expectProblem(groupOnly, 400);
    expect(groupOnly.json.issues).toMatchObject([
      expect.objectContaining({ name: 'x-amp-integration-name' }),
    ]);
    expectProblem(await raw('GET', '/me', proxyHeaders({ 'x-amp-installation-id': 'nope' })), 400);
  });

  it("refuses a key of another project (403) and another project's installation", async () => {
    const other = await createTestProject();
    // The other project's valid key, naming this project: forbidden.
    const crossed = await raw('GET', '/me', {
      ...proxyHeaders(),
      'x-api-key': other.apiKey,
    });
    expectProblem(crossed, 403);
    // The other project naming itself cannot see this project's installation.
    expectProblem(await raw('GET', '/me', proxyHeaders({}, other)), 404);
  });

  it('answers 404 for an unknown installation or group', async () => {
    expectProblem(await raw('GET', '/me', proxyHeaders({ 'x-amp-installation-id': randomUUID() })), 404);
    const { 'x-amp-installation-id': _installation, ...byName } = proxyHeaders();
    expectProblem(
      await raw('GET', '/me', {
        ...byName,
        'x-amp-integration-name': fixture.integrationName,
        'x-amp-group-ref': 'no-such-group',
      }),
      404,
    );
  });

  it('refuses paths that would leave the provider, and sends nothing anywhere', async () => {
    const before = evilHits;
    for (const target of [
      `//127.0.0.1:${evilPort}/steal`,
      `http://127.0.0.1:${evilPort}/steal`,
      '/%2e%2e/%2e%2e/steal',
      '/%2E%2E/steal',
      '/contacts/..%2fsteal',
      '/contacts/%2f%2f127.0.0.1/steal',
      '/contacts/%5c%5cevil',
      '/contacts\\..\\steal',
      '/a/../../steal',
      '/./me',
    ]) {
      const response = await raw('GET', target, proxyHeaders());
      expect({ target, status: response.status }).toEqual({ target, status: 400 });
      expect(response.headers['content-type']).toBe('application/problem+json');
    }
    expect(evilHits).toBe(before);
  });

  it('answers 502 when the provider cannot be reached', async () => {
    const url = sandbox.url;
    await sandbox.close();
    try {
      const response = await raw(
        'POST',
        '/contacts',
        proxyHeaders({ 'content-type': 'application/json' }),
        '{}',
      );
      expectProblem(response, 502);
    } finally {
      sandbox = await startSandbox({ port: Number(new URL(url).port), contacts: 5, companies: 1, deals: 1 });
    }
  }, 30_000);

  it('refuses a body larger than the configured limit with 413', async () => {
    process.env.FERRY_BODY_LIMIT = '1kb';
    resetConfig();
    try {
      const response = await raw(
        'POST',
        '/contacts',
        proxyHeaders({ 'content-type': 'application/json' }),
        JSON.stringify({ note: 'x'.repeat(4096) }),
      );
      expectProblem(response, 413);
    } finally {
      delete process.env.FERRY_BODY_LIMIT;
      resetConfig();
    }
  });
});

describe('proxy streaming', () => {
  const size = 100 * 1024 * 1024;
  let big: Server;
  let bigUrl: string;
  let keysSeen: (string | undefined)[] = [];
  let headersSeen: Record<string, unknown>[] = [];
  let flakyCalls = 0;
  // Bytes the provider has handed to its socket so far.
  let sent = 0;

  /** Resolves with the provider's sent bytes once they have not grown for half a second. */
  async function waitForStall(): Promise<number> {
    let last = -1;
    for (let waited = 0; waited < 20_000; waited += 500) {
      if (sent === last) return sent;
      last = sent;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(`the provider never stalled (${sent} bytes sent)`);
  }

  beforeAll(async () => {
    // A provider with a 100 MB answer, generated as it is sent, standing in for the sandbox.
    const chunk = Buffer.alloc(64 * 1024, 'x');
    big = createServer((req, res) => {
      keysSeen.push(req.headers['x-api-key'] as string | undefined);
      headersSeen.push(req.headers);
      if (req.url === '/api/v1/flaky') {
        // Rate-limited once, then fine: the proxy waits as Retry-After says and tries again.
        flakyCalls++;
        if (flakyCalls === 1) res.writeHead(429, { 'retry-after': '0' }).end('slow down');
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
      sent = 0;
      const write = () => {
        while (sent < size) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    });
    await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
    bigUrl = `http://127.0.0.1:${(big.address() as AddressInfo).port}`;
    process.env.FERRY_SANDBOX_URL = bigUrl;
    resetConfig();
  });

  afterAll(async () => {
    process.env.FERRY_SANDBOX_URL = sandbox.url;
    resetConfig();
    await new Promise((resolve) => big?.close(resolve));
  });

  it('streams a 100 MB answer, reading the provider no faster than the caller reads', async () => {
    keysSeen = [];
    headersSeen = [];
    const url = new URL(stack.urls.proxy);
    const { status, received, length, sentWhilePaused } = await new Promise<{
      status: number;
      received: number;
      length: string | undefined;
      sentWhilePaused: number;
    }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: 'GET',
          path: '/big',
          headers: proxyHeaders({
            authorization: 'Bearer caller-secret',
            cookie: 'session=caller',
            'x-custom': 'kept',
          }),
        },
        (res) => {
          let received = 0;
          let sentWhilePaused = -1;
          res.once('data', () => {
            // The caller stops reading: a proxy that streams stops reading the provider too, so
            // the provider stalls once the buffers between them are full.
            res.pause();
            void waitForStall().then((sent) => {
              sentWhilePaused = sent;
              res.resume();
            }, reject);
          });
          res.on('data', (data: Buffer) => {
            received += data.length;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              received,
              length: res.headers['content-length'],
              sentWhilePaused,
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(length).toBe(String(size));
    expect(received).toBe(size);
    // A proxy holding the body would have drawn all 100 MB from the provider while the caller
    // read nothing; streaming leaves only what the sockets and streams between them buffer.
    expect(sentWhilePaused).toBeGreaterThan(0);
    expect(sentWhilePaused).toBeLessThan(size / 4);
    // The connection's key was attached, the caller's Ferry key was not.
    expect(keysSeen).toEqual(['sandbox-demo-key']);
    // Ferry's own headers and the caller's credentials stay behind; other headers pass.
    const seen = headersSeen[0];
    expect(seen['x-custom']).toBe('kept');
    expect(seen.authorization).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(Object.keys(seen).filter((name) => name.startsWith('x-amp-'))).toEqual([]);
  }, 60_000);

  it("retries after a provider's 429 as Retry-After says", async () => {
    flakyCalls = 0;
    const response = await raw('GET', '/flaky', proxyHeaders());
    expect(response.status).toBe(200);
    expect(response.text).toBe('ok');
    expect(flakyCalls).toBe(2);
  });
});
