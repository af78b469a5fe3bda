import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { resetConfig } from '../../src/config.js';
import { devClient, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { consent, oauthConnect, pageResult, sql } from '../oauth/helpers.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

/**
 * Every auth type end to end, through Ferry's public API only: a connection made the way a builder
 * makes it (OAuth flow, or `connections:generate`), an installation with the proxy on, and one call
 * through the proxy listener to a local server standing in for the provider (FERRY_PROVIDER_OVERRIDES),
 * which records the exact credential it received. OAuth's authorization server is the sandbox's.
 */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  form: URLSearchParams;
}

interface LocalProvider {
  url: string;
  /** Calls to the API (anything but /token). */
  api: Seen[];
  /** Calls to the token endpoint. */
  token: Seen[];
  /** Verified claims of each JWT bearer assertion, with its protected header. */
  assertions: { claims: Record<string, unknown>; header: Record<string, unknown> }[];
  /** Statuses the API answers next (200 once empty). */
  statuses: number[];
  /** Access tokens issued, in order. */
  issued: string[];
  /** Refresh tokens the token endpoint still honours (password grant). */
  refreshTokens: Set<string>;
  close(): Promise<void>;
}

const ccClient = { clientId: 'paypal-client', clientSecret: 'paypal-secret:with+odd&chars' };
const sugarUser = { username: 'sally', password: 'sugar pass&word' };

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** Client authentication by HTTP Basic: each part form-urlencoded first (RFC 6749 section 2.3.1). */
const clientBasic = basic(
  encodeURIComponent(ccClient.clientId).replace(/%20/g, '+'),
  encodeURIComponent(ccClient.clientSecret).replace(/%20/g, '+'),
);

/**
 * A provider on a free port: an API that records each call and answers JSON, and a token endpoint
 * for the client-credentials grant (Basic client auth, as PayPal's) and the JWT bearer grant
 * (RFC 7523: the assertion must verify with `publicKey`, be for this endpoint and live at most an hour).
 */
async function startLocalProvider(publicKey: KeyObject): Promise<LocalProvider> {
  const provider: Omit<LocalProvider, 'url' | 'close'> = {
    api: [],
    token: [],
    assertions: [],
    statuses: [],
    issued: [],
    refreshTokens: new Set(),
  };
  let url = '';
  const issue = (prefix: string) => {
    const token = `${prefix}-${provider.issued.length + 1}-${randomUUID().slice(0, 8)}`;
    provider.issued.push(token);
    return { access_token: token, token_type: 'Bearer', expires_in: 3600 };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const target = new URL(req.url ?? '/', 'http://local');
        const seen: Seen = {
          method: req.method ?? '',
          path: target.pathname,
          query: target.searchParams,
          headers: req.headers,
          form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
        };
        const answer = (status: number, body: unknown) => {
          res.statusCode = status;
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(body));
        };
        if (target.pathname !== '/token') {
          provider.api.push(seen);
          const status = provider.statuses.shift() ?? 200;
          answer(status, status === 200 ? { ok: true, path: target.pathname } : { error: 'unauthorized' });
          return;
        }
        provider.token.push(seen);
        const grant = seen.form.get('grant_type');
        if (grant === 'client_credentials') {
          if (req.headers.authorization !== clientBasic) return answer(401, { error: 'invalid_client' });
          return answer(200, issue('cc-token'));
        }
        // SugarCRM: its public client `sugar` with an empty secret, and a platform.
        if (grant === 'password' || grant === 'refresh_token') {
          const form = Object.fromEntries(seen.form);
          if (form.client_id !== 'sugar' || form.client_secret !== '' || !form.platform)
            return answer(401, { error: 'invalid_client' });
          const valid =
            grant === 'password'
              ? form.username === sugarUser.username && form.password === sugarUser.password
              : provider.refreshTokens.delete(form.refresh_token);
          if (!valid) return answer(400, { error: 'invalid_grant' });
          const refreshToken = `pw-refresh-${randomUUID().slice(0, 8)}`;
          provider.refreshTokens.add(refreshToken);
          return answer(200, { ...issue('pw-token'), refresh_token: refreshToken });
        }
        if (grant === JWT_BEARER) {
          try {
            const assertion = seen.form.get('assertion') ?? '';
            const { payload } = await jwtVerify(assertion, publicKey, {
              algorithms: ['RS256'],
              audience: `${url}/token`,
              maxTokenAge: '1h',
            });
            if ((payload.exp ?? 0) - (payload.iat ?? 0) > 3600) throw new Error('lives too long');
            provider.assertions.push({ claims: payload, header: decodeProtectedHeader(assertion) });
          } catch (error) {
            return answer(400, { error: 'invalid_grant', error_description: (error as Error).message });
          }
          return answer(200, issue('jwt-token'));
        }
        answer(400, { error: 'unsupported_grant_type' });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...provider,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function rsaKeyPair(bits = 2048) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return { privateKey, publicKey, pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

const serviceAccount = rsaKeyPair();
/** The base64 body of the service account's PEM: what must never show up anywhere. */
const keyBody = serviceAccount.pem.split('\n')[5];

let stack: TestStack;
let sandbox: Sandbox;
let local: LocalProvider;
let base: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 5, companies: 1, deals: 1, autoApprove: false });
  local = await startLocalProvider(serviceAccount.publicKey);
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({
    sandbox: { baseURL: local.url },
    aWeber: {
      baseURL: local.url,
      authURL: `${sandbox.url}/oauth/authorize`,
      tokenURL: `${sandbox.url}/oauth/token`,
    },
    payPal: { baseURL: local.url, tokenURL: `${local.url}/token` },
    apollo: { baseURL: local.url },
    hunter: { baseURL: local.url },
    nutshell: { baseURL: local.url },
    clariCopilot: { baseURL: local.url },
    trello: { baseURL: local.url },
    googleServiceAccount: { baseURL: local.url, tokenURL: `${local.url}/token` },
    docusignJWT: { baseURL: local.url, tokenURL: `${local.url}/token` },
    hackerNews: { baseURL: local.url },
    sugarCRM: { baseURL: local.url, tokenURL: `${local.url}/token` },
  });
  stack = await startTestStack();
  process.env.FERRY_PUBLIC_API_URL = stack.urls.api.replace(/\/v1$/, '');
  resetConfig();
  base = `/projects/${stack.project.name}`;
  for (const provider of ['sandbox', 'aWeber']) {
    const app = await stack.api('POST', `${base}/provider-apps`, {
      body: { provider, clientId: devClient.clientId, clientSecret: devClient.clientSecret },
    });
    expect(app.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  await local?.close();
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  delete process.env.FERRY_PUBLIC_API_URL;
  resetConfig();
});

async function generate(body: Record<string, unknown>) {
  return stack.api('POST', `${base}/connections:generate`, { body: { consumerRef: 'admin', ...body } });
}

async function generated(body: Record<string, unknown>): Promise<string> {
  const response = await generate(body);
  expect(response.body).toMatchObject({ id: expect.any(String) });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** The OAuth flow as a browser walks it; returns the authorization URL and the new connection's id. */
async function authorize(provider: string, groupRef: string): Promise<{ url: URL; connectionId: string }> {
  const started = await oauthConnect(stack, { provider, groupRef });
  expect(started.status).toBe(200);
  const callback = await consent(sandbox, started.body, 'approve');
  const page = await request<string>('GET', callback);
  expect(page.status).toBe(200);
  const result = pageResult(page.body);
  expect(result).toMatchObject({ connectionId: expect.any(String) });
  return { url: new URL(started.body), connectionId: result.connectionId as string };
}

async function credentialsOf(connectionId: string) {
  const response = await stack.api('GET', `${base}/connections/${connectionId}?includeCreds=true`);
  expect(response.status).toBe(200);
  return response.body;
}

/** An integration of `provider` that offers only the proxy, installed for the group. */
async function installProxy(provider: string, groupRef: string): Promise<string> {
  const name = `proxy-${provider}-${randomUUID().slice(0, 6)}`;
  const integration = await stack.api('POST', `${base}/integrations`, {
    body: {
      name,
      provider,
      latestRevision: { specVersion: '1.0.0', content: { name, provider, proxy: { enabled: true } } },
    },
  });
  expect(integration.status).toBe(201);
  const installation = await stack.api('POST', `${base}/integrations/${integration.body.id}/installations`, {
    body: { groupRef, config: { content: { provider, proxy: { enabled: true } } } },
  });
  expect(installation.status).toBe(201);
  return installation.body.id;
}

/** One GET through the proxy listener; returns what the provider received. */
async function proxyGet(installationId: string, path = '/v1/ping?page=2'): Promise<Seen> {
  const before = local.api.length;
  const response = await fetch(`${stack.urls.proxy}${path}`, {
    headers: {
      'x-amp-proxy-version': '1',
      'x-amp-project-id': stack.project.id,
      'x-api-key': stack.project.apiKey,
      'x-amp-installation-id': installationId,
    },
  });
  expect({ status: response.status, body: await response.json() }).toMatchObject({
    status: 200,
    body: { ok: true, path: '/v1/ping' },
  });
  expect(local.api.length).toBeGreaterThan(before);
  return local.api[local.api.length - 1];
}

interface Credential {
  /** Headers the provider must have received, exactly. */
  headers?: Record<string, string>;
  /** Query parameters the provider must have received besides the caller's `page=2`. */
  query?: Record<string, string>;
}

interface AuthCase {
  title: string;
  provider: string;
  /** Makes the group's connection; returns the credential the provider must see. */
  connect(groupRef: string): Promise<Credential>;
}

const cases: AuthCase[] = [
  {
    title: 'OAuth 2.0 authorization code with PKCE (sandbox)',
    provider: 'sandbox',
    async connect(groupRef) {
      const { url, connectionId } = await authorize('sandbox', groupRef);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const token = (await credentialsOf(connectionId)).oauth2AuthorizationCode.accessToken.token;
      return { headers: { authorization: `Bearer ${token}` } };
    },
  },
  {
    title: 'OAuth 2.0 authorization code without PKCE (aWeber)',
    provider: 'aWeber',
    async connect(groupRef) {
      const { url, connectionId } = await authorize('aWeber', groupRef);
      expect(url.searchParams.has('code_challenge')).toBe(false);
      expect(url.searchParams.has('code_challenge_method')).toBe(false);
      const token = (await credentialsOf(connectionId)).oauth2AuthorizationCode.accessToken.token;
      return { headers: { authorization: `Bearer ${token}` } };
    },
  },
  {
    title: 'OAuth 2.0 client credentials (PayPal, Basic client auth)',
    provider: 'payPal',
    async connect(groupRef) {
      const tokenCalls = local.token.length;
      await generated({ provider: 'payPal', groupRef, oauth2ClientCredentials: ccClient });
      const call = local.token[tokenCalls];
      expect(call.headers.authorization).toBe(clientBasic);
      expect(Object.fromEntries(call.form)).toEqual({ grant_type: 'client_credentials' });
      return { headers: { authorization: `Bearer ${local.issued[local.issued.length - 1]}` } };
    },
  },
  {
    title: 'OAuth 2.0 password grant (SugarCRM, token in its OAuth-Token header)',
    provider: 'sugarCRM',
    async connect(groupRef) {
      const tokenCalls = local.token.length;
      await generated({ provider: 'sugarCRM', groupRef, oauth2Password: sugarUser });
      expect(Object.fromEntries(local.token[tokenCalls].form)).toEqual({
        grant_type: 'password',
        client_id: 'sugar',
        client_secret: '',
        platform: 'base',
        ...sugarUser,
      });
      return { headers: { 'oauth-token': local.issued[local.issued.length - 1] } };
    },
  },
  {
    title: 'API key in a header (Apollo X-Api-Key)',
    provider: 'apollo',
    async connect(groupRef) {
      await generated({ provider: 'apollo', groupRef, apiKey: 'apollo-key-123' });
      return { headers: { 'x-api-key': 'apollo-key-123' } };
    },
  },
  {
    title: 'API key in the query (Hunter api_key)',
    provider: 'hunter',
    async connect(groupRef) {
      await generated({ provider: 'hunter', groupRef, apiKey: 'hunter key&=/' });
      return { query: { api_key: 'hunter key&=/' } };
    },
  },
  {
    title: 'HTTP Basic (Nutshell)',
    provider: 'nutshell',
    async connect(groupRef) {
      await generated({
        provider: 'nutshell',
        groupRef,
        basicAuth: { username: 'ops@example.com', password: 'p:ss wörd' },
      });
      return { headers: { authorization: basic('ops@example.com', 'p:ss wörd') } };
    },
  },
  {
    title: 'custom headers from connection inputs (Clari Copilot)',
    provider: 'clariCopilot',
    async connect(groupRef) {
      await generated({
        provider: 'clariCopilot',
        groupRef,
        customAuth: { apiKey: 'clari-key', apiPassword: 'clari-password' },
      });
      return { headers: { 'x-api-key': 'clari-key', 'x-api-password': 'clari-password' } };
    },
  },
  {
    title: 'custom query parameters from connection inputs (Trello key and token)',
    provider: 'trello',
    async connect(groupRef) {
      await generated({
        provider: 'trello',
        groupRef,
        customAuth: { apiKey: 'trello-key', apiToken: 'trello-token' },
      });
      return { query: { key: 'trello-key', token: 'trello-token' } };
    },
  },
  {
    title: 'JWT bearer grant (Google service account)',
    provider: 'googleServiceAccount',
    async connect(groupRef) {
      const assertions = local.assertions.length;
      await generated({
        provider: 'googleServiceAccount',
        groupRef,
        jwt: {
          privateKey: serviceAccount.pem,
          issuer: 'ferry@project.iam.gserviceaccount.com',
          keyId: 'key-1',
          scopes: ['https://www.googleapis.com/auth/drive.readonly'],
        },
      });
      expect(local.assertions[assertions].claims).toMatchObject({
        iss: 'ferry@project.iam.gserviceaccount.com',
        scope: 'https://www.googleapis.com/auth/drive.readonly',
      });
      return { headers: { authorization: `Bearer ${local.issued[local.issued.length - 1]}` } };
    },
  },
  {
    title: 'none (Hacker News)',
    provider: 'hackerNews',
    async connect(groupRef) {
      const id = await generated({ provider: 'hackerNews', groupRef });
      expect((await credentialsOf(id)).authScheme).toBe('none');
      return {};
    },
  },
];

describe('every auth type, through the proxy to a local provider', () => {
  it.each(cases.map((authCase) => [authCase.title, authCase] as const))('%s', async (_title, authCase) => {
    const groupRef = `g-${authCase.provider}-${randomUUID().slice(0, 6)}`;
    const expected = await authCase.connect(groupRef);
    const installationId = await installProxy(authCase.provider, groupRef);
    const seen = await proxyGet(installationId);

    expect(seen.path).toBe('/v1/ping');
    expect(Object.fromEntries(seen.query)).toEqual({ page: '2', ...expected.query });
    for (const [name, value] of Object.entries(expected.headers ?? {})) {
      expect({ [name]: seen.headers[name] }).toEqual({ [name]: value });
    }
    // Nothing else that looks like a credential reached the provider, least of all Ferry's own key.
    const credentialHeaders = Object.keys(seen.headers).filter((name) =>
      /authorization|api-key|api-password|token|cookie/i.test(name),
    );
    expect(credentialHeaders.sort()).toEqual(Object.keys(expected.headers ?? {}).sort());
    expect(JSON.stringify(seen.headers)).not.toContain(stack.project.apiKey);
  });
});

describe('JWT bearer connections', () => {
  const identity = { privateKey: serviceAccount.pem, issuer: 'svc@project.iam.gserviceaccount.com' };

  it('signs RS256 assertions with iss, scope, aud, iat and exp, and sub and kid when given', async () => {
    const before = local.assertions.length;
    await generated({
      provider: 'googleServiceAccount',
      groupRef: `jwt-claims-${randomUUID().slice(0, 6)}`,
      jwt: {
        ...identity,
        subject: 'admin@example.com',
        keyId: 'kid-7',
        scopes: ['https://www.googleapis.com/auth/admin.directory.user.readonly', 'openid'],
      },
    });
    const call = local.token[local.token.length - 1];
    expect([...call.form.keys()].sort()).toEqual(['assertion', 'grant_type']);
    expect(call.form.get('grant_type')).toBe(JWT_BEARER);
    expect(call.headers.authorization).toBeUndefined();
    const { claims, header } = local.assertions[before];
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-7' });
    expect(claims).toEqual({
      iss: 'svc@project.iam.gserviceaccount.com',
      sub: 'admin@example.com',
      aud: `${local.url}/token`,
      scope: 'https://www.googleapis.com/auth/admin.directory.user.readonly openid',
      iat: expect.any(Number),
      exp: (claims.iat as number) + 3600,
    });
    expect(Math.abs((claims.iat as number) - Date.now() / 1000)).toBeLessThan(60);
  });

  it('keeps the token until it expires, and signs a new assertion after a 401, once', async () => {
    const groupRef = `jwt-cache-${randomUUID().slice(0, 6)}`;
    const connectionId = await generated({
      provider: 'googleServiceAccount',
      groupRef,
      jwt: { ...identity, scopes: ['https://www.googleapis.com/auth/drive'] },
    });
    const first = local.issued[local.issued.length - 1];
    const installationId = await installProxy('googleServiceAccount', groupRef);
    const tokenCalls = local.token.length;

    expect((await proxyGet(installationId)).headers.authorization).toBe(`Bearer ${first}`);
    expect((await proxyGet(installationId)).headers.authorization).toBe(`Bearer ${first}`);
    expect(local.token.length).toBe(tokenCalls); // cached: no new grant

    local.statuses.push(401);
    const apiCalls = local.api.length;
    const retried = await proxyGet(installationId);
    const second = local.issued[local.issued.length - 1];
    expect(second).not.toBe(first);
    expect(local.token.length).toBe(tokenCalls + 1);
    expect(local.api.slice(apiCalls).map((call) => call.headers.authorization)).toEqual([
      `Bearer ${first}`,
      `Bearer ${second}`,
    ]);
    expect(retried.headers.authorization).toBe(`Bearer ${second}`);
    expect(local.token[local.token.length - 1].form.get('grant_type')).toBe(JWT_BEARER);

    // Near expiry, a new assertion is signed before the call.
    await sql(
      `update connections set access_token_issued_at = now() - interval '59 minutes',
         access_token_expires_at = now() + interval '1 minute' where id = $1`,
      [connectionId],
    );
    const renewed = await proxyGet(installationId);
    const third = local.issued[local.issued.length - 1];
    expect(third).not.toBe(second);
    expect(renewed.headers.authorization).toBe(`Bearer ${third}`);
    expect(local.token.length).toBe(tokenCalls + 2);

    const view = await credentialsOf(connectionId);
    expect(view).toMatchObject({
      authScheme: 'jwt',
      status: 'working',
      jwt: {
        issuer: identity.issuer,
        scopes: ['https://www.googleapis.com/auth/drive'],
        accessToken: { token: third, expiresAt: expect.any(String) },
      },
    });
  });

  it('never returns or stores the private key in the clear', async () => {
    const connectionId = await generated({
      provider: 'googleServiceAccount',
      groupRef: `jwt-secret-${randomUUID().slice(0, 6)}`,
      jwt: { ...identity, scopes: ['openid'] },
    });
    const withCreds = await stack.api('GET', `${base}/connections/${connectionId}?includeCreds=true`);
    const list = await stack.api('GET', `${base}/connections?provider=googleServiceAccount`);
    for (const body of [withCreds.body, list.body]) {
      const text = JSON.stringify(body);
      expect(text).not.toContain(keyBody);
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain('privateKey');
    }
    expect(list.body.find((row: { id: string }) => row.id === connectionId).jwt).toEqual({
      scopes: ['openid'],
    });
    const rows = await sql<{ row: string }>('select c::text as row from connections c where id = $1', [
      connectionId,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].row).not.toContain(keyBody);
    expect(rows[0].row).not.toContain('PRIVATE KEY');
  });

  it('needs a subject where the provider does (DocuSign), and signs for its audience', async () => {
    const missing = await generate({
      provider: 'docusignJWT',
      groupRef: 'docusign-1',
      providerMetadata: { server: 'na4' },
      jwt: identity,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.issues).toMatchObject([
      expect.objectContaining({ name: 'jwt.subject', detail: expect.stringMatching(/required/) }),
    ]);
    // DocuSign's audience is its account host, not the token URL: the local endpoint refuses it.
    const refused = await generate({
      provider: 'docusignJWT',
      groupRef: 'docusign-1',
      providerMetadata: { server: 'na4' },
      jwt: { ...identity, subject: 'user-guid' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0]).toMatchObject({
      name: 'jwt',
      detail: expect.stringMatching(/invalid_grant/),
    });
    expect(JSON.stringify(refused.body)).not.toContain(keyBody);
  });

  it('answers clear 400s for bad keys, a missing issuer and the wrong credentials, saving nothing', async () => {
    const groupRef = `jwt-bad-${randomUUID().slice(0, 6)}`;
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const small = rsaKeyPair(1024).pem;
    const encrypted = serviceAccount.privateKey
      .export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' })
      .toString();
    const truncated = serviceAccount.pem.slice(0, 400) + '\n-----END PRIVATE KEY-----\n';
    const badKeys: [string, RegExp][] = [
      ['not a key at all', /not a PEM private key/],
      [serviceAccount.publicKey.export({ type: 'spki', format: 'pem' }).toString(), /not a PEM private key/],
      [truncated, /could not be read/],
      [ec, /RSA/],
      [small, /1024-bit/],
      [encrypted, /encrypted/],
    ];
    for (const [privateKey, detail] of badKeys) {
      const response = await generate({
        provider: 'googleServiceAccount',
        groupRef,
        jwt: { privateKey, issuer: 'a@b.c' },
      });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.body.issues).toMatchObject([
        expect.objectContaining({ name: 'jwt.privateKey', detail: expect.stringMatching(detail) }),
      ]);
      expect(JSON.stringify(response.body)).not.toContain(privateKey.split('\n')[1] || privateKey);
    }

    const noIssuer = await generate({
      provider: 'googleServiceAccount',
      groupRef,
      jwt: { privateKey: serviceAccount.pem },
    });
    expect(noIssuer.status).toBe(400);
    expect(noIssuer.body.issues).toMatchObject([
      expect.objectContaining({ name: 'jwt.issuer', detail: 'jwt.issuer is required' }),
    ]);

    // A key the provider does not know: the provider's invalid_grant, as a 400 on jwt.
    const stranger = await generate({
      provider: 'googleServiceAccount',
      groupRef,
      jwt: { privateKey: rsaKeyPair().pem, issuer: 'a@b.c' },
    });
    expect(stranger.status).toBe(400);
    expect(stranger.body.issues[0]).toMatchObject({
      name: 'jwt',
      detail: expect.stringMatching(/refused the signed assertion.*invalid_grant/),
    });

    const apiKeyForJwt = await generate({ provider: 'googleServiceAccount', groupRef, apiKey: 'k' });
    expect(apiKeyForJwt.status).toBe(400);
    expect(apiKeyForJwt.body.issues[0]).toMatchObject({
      name: 'apiKey',
      detail: expect.stringMatching(/give jwt/),
    });
    const jwtForApiKey = await generate({ provider: 'apollo', groupRef, jwt: identity });
    expect(jwtForApiKey.status).toBe(400);
    expect(jwtForApiKey.body.issues[0]).toMatchObject({ name: 'jwt' });

    const listed = await stack.api('GET', `${base}/connections?groupRef=${groupRef}`);
    expect(listed.body).toEqual([]);
  });
});

describe('password grant connections (SugarCRM)', () => {
  it('refresh after a 401, and log in again when the refresh token is refused', async () => {
    const groupRef = `sugar-${randomUUID().slice(0, 6)}`;
    const id = await generated({
      provider: 'sugarCRM',
      groupRef,
      providerMetadata: { platform: 'ferry' },
      oauth2Password: sugarUser,
    });
    expect(local.token[local.token.length - 1].form.get('platform')).toBe('ferry');
    const installationId = await installProxy('sugarCRM', groupRef);
    const tokenCalls = local.token.length;

    local.statuses.push(401);
    const refreshed = await proxyGet(installationId);
    expect(local.token.length).toBe(tokenCalls + 1);
    expect(Object.fromEntries(local.token[tokenCalls].form)).toMatchObject({
      grant_type: 'refresh_token',
      client_id: 'sugar',
      platform: 'ferry',
    });
    expect(refreshed.headers['oauth-token']).toBe(local.issued[local.issued.length - 1]);

    // Sugar keeps one refresh token per platform: another login can void Ferry's.
    local.refreshTokens.clear();
    local.statuses.push(401);
    const relogged = await proxyGet(installationId);
    expect(local.token.slice(tokenCalls + 1).map((call) => call.form.get('grant_type'))).toEqual([
      'refresh_token',
      'password',
    ]);
    expect(relogged.headers['oauth-token']).toBe(local.issued[local.issued.length - 1]);
    expect((await credentialsOf(id)).status).toBe('working');

    const wrong = await generate({
      provider: 'sugarCRM',
      groupRef,
      oauth2Password: { username: 'sally', password: 'nope' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.issues[0]).toMatchObject({
      name: 'oauth2Password',
      detail: expect.stringMatching(/invalid_grant/),
    });
    expect(JSON.stringify(wrong.body)).not.toContain('nope');
  });
});

describe('custom and none connections', () => {
  it('need every custom input, refuse unknown ones and line breaks, and show values only with includeCreds', async () => {
    const groupRef = `custom-${randomUUID().slice(0, 6)}`;
    const missing = await generate({ provider: 'clariCopilot', groupRef, customAuth: { apiKey: 'k' } });
    expect(missing.status).toBe(400);
    expect(missing.body.issues).toMatchObject([expect.objectContaining({ name: 'customAuth.apiPassword' })]);
    const unknown = await generate({
      provider: 'clariCopilot',
      groupRef,
      customAuth: { apiKey: 'k', apiPassword: 'p', extra: 'x' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues).toMatchObject([expect.objectContaining({ name: 'customAuth.extra' })]);
    const split = await generate({
      provider: 'clariCopilot',
      groupRef,
      customAuth: { apiKey: 'k\r\nX-Evil: 1', apiPassword: 'p' },
    });
    expect(split.status).toBe(400);
    expect(split.body.issues).toMatchObject([expect.objectContaining({ name: 'customAuth.apiKey' })]);
    const emoji = await generate({
      provider: 'clariCopilot',
      groupRef,
      customAuth: { apiKey: 'k', apiPassword: 'pass🔑' },
    });
    expect(emoji.status).toBe(400);
    expect(emoji.body.issues).toMatchObject([
      expect.objectContaining({ name: 'customAuth.apiPassword', detail: expect.stringMatching(/header/) }),
    ]);
    const none = await generate({ provider: 'clariCopilot', groupRef });
    expect(none.status).toBe(400);
    expect(none.body.issues[0].detail).toMatch(/customAuth/);

    const id = await generated({
      provider: 'clariCopilot',
      groupRef,
      customAuth: { apiKey: 'custom-key-at-rest', apiPassword: 'custom-password-at-rest' },
    });
    const plain = await stack.api('GET', `${base}/connections/${id}`);
    expect(plain.body).toMatchObject({ authScheme: 'custom' });
    expect(plain.body.customAuth).toBeUndefined();
    expect((await credentialsOf(id)).customAuth).toEqual({
      apiKey: 'custom-key-at-rest',
      apiPassword: 'custom-password-at-rest',
    });
    const rows = await sql<{ row: string }>('select c::text as row from connections c where id = $1', [id]);
    expect(rows[0].row).not.toMatch(/custom-(key|password)-at-rest/);
  });

  it('take no credentials for a provider that needs none, and refuse any given', async () => {
    const refused = await generate({ provider: 'hackerNews', groupRef: 'hn-1', apiKey: 'k' });
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toMatchObject([
      expect.objectContaining({ name: 'apiKey', detail: expect.stringMatching(/needs no credentials/) }),
    ]);
    const id = await generated({ provider: 'hackerNews', groupRef: 'hn-1' });
    const view = await credentialsOf(id);
    expect(view).toMatchObject({ authScheme: 'none', status: 'working', provider: 'hackerNews' });
    for (const field of [
      'apiKey',
      'basicAuth',
      'oauth2ClientCredentials',
      'oauth2AuthorizationCode',
      'jwt',
    ]) {
      expect(view[field]).toBeUndefined();
    }
  });
});
