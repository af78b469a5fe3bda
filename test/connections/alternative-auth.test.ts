import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { connectionTarget } from '../../src/domain/credentials.js';
import { getProvider } from '../../src/providers/catalog/index.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ProviderError } from '../../src/providers/errors.js';
import { ProviderHttpClient, type RequestLogEntry } from '../../src/providers/http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * A customer connected with any method its provider documents, not only the catalog's main one:
 * `connections:generate` takes the alternative's credentials, the connection records the method as
 * its `authScheme`, and the provider's own connector reads through it, credentials presented exactly
 * as the provider documents that method. A local server stands in for each provider and answers 401
 * to anything but the one header it expects.
 */

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

interface LocalProvider {
  url: string;
  /** Calls to the API, whatever their credentials. */
  api: Seen[];
  /** Calls to the token endpoint (none may come for a connection without a token to refresh). */
  token: Seen[];
  /** The one header (lower-case name and exact value) the API accepts. */
  expected: { name: string; value: string };
  close(): Promise<void>;
}

const updated = '2026-01-02T03:04:05Z';

/** One record of each object the tests read, in each provider's list shape. */
const lists: Record<string, unknown> = {
  // Pipedrive API v2
  '/api/v2/persons': {
    success: true,
    data: [{ id: 7, name: 'Ada Lovelace', update_time: updated }],
    additional_data: { next_cursor: null },
  },
  // Zendesk Support, cursor pagination
  '/api/v2/organizations.json': {
    organizations: [{ id: 9, name: 'Acme', updated_at: updated }],
    meta: { has_more: false, after_cursor: null },
  },
  // HubSpot CRM v3 list
  '/crm/v3/objects/contacts': {
    results: [{ id: '11', properties: { email: 'ada@example.com' }, updatedAt: updated, archived: false }],
  },
  // HubSpot asks which properties there are when a read names none.
  '/crm/v3/properties/contacts': {
    results: [{ name: 'email', label: 'Email', type: 'string', fieldType: 'text' }],
  },
  '/me': { id: 'me' },
  '/v2': { data: { me: { id: 'me' } } },
};

async function startLocalProvider(): Promise<LocalProvider> {
  const local: Omit<LocalProvider, 'url' | 'close'> = {
    api: [],
    token: [],
    expected: { name: 'authorization', value: '' },
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const target = new URL(req.url ?? '/', 'http://local');
      const seen = {
        method: req.method ?? '',
        path: target.pathname,
        query: target.searchParams,
        headers: req.headers,
      };
      const answer = (status: number, body: unknown) => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body));
      };
      if (target.pathname === '/token') {
        local.token.push(seen);
        return answer(400, { error: 'invalid_grant' });
      }
      local.api.push(seen);
      if (req.headers[local.expected.name] !== local.expected.value) {
        return answer(401, { error: 'unauthorized', message: 'Credentials are not the expected ones' });
      }
      const body = lists[target.pathname];
      answer(body ? 200 : 404, body ?? { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(local, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

let stack: TestStack;
let local: LocalProvider;
let base: string;

beforeAll(async () => {
  local = await startLocalProvider();
  const here = { baseURL: local.url, tokenURL: `${local.url}/token` };
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({
    pipedrive: here,
    zendeskSupport: here,
    hubspot: here,
    front: here,
    monday: here,
  });
  resetConfig();
  stack = await startTestStack();
  base = `/projects/${stack.project.name}`;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await local?.close();
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
});

beforeEach(() => {
  local.api.length = 0;
  local.token.length = 0;
});

async function generate(body: Record<string, unknown>) {
  return stack.api('POST', `${base}/connections:generate`, { body: { consumerRef: 'admin', ...body } });
}

async function generated(body: Record<string, unknown>): Promise<{ id: string; authScheme: string }> {
  const response = await generate(body);
  expect({ status: response.status, body: response.body }).toMatchObject({
    status: 201,
    body: { id: expect.any(String) },
  });
  return response.body;
}

/** Reads one page of `objectName` through the provider's connector, on the stored connection. */
async function readThrough(connectionId: string, objectName: string, log: RequestLogEntry[] = []) {
  const connector = connectorFor(await connectionTarget(connectionId), {
    retry: { maxAttempts: 1 },
    onRequest: (entry) => log.push(entry),
  });
  return connector.readPage({ objectName, pageSize: 10 });
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('Pipedrive API token', () => {
  it('connects with apiKey and reads persons with the token in x-api-token, as an OAuth connection does with Bearer', async () => {
    const token = 'pd-0123456789abcdef';
    const connection = await generated({ provider: 'pipedrive', groupRef: 'pd-token', apiKey: token });
    expect(connection.authScheme).toBe('apiKey');

    local.expected = { name: 'x-api-token', value: token };
    const log: RequestLogEntry[] = [];
    const page = await readThrough(connection.id, 'persons', log);
    expect(page.records.map((record) => record.id)).toEqual(['7']);
    const [call] = local.api;
    expect(call.path).toBe('/api/v2/persons');
    expect(call.headers.authorization).toBeUndefined();
    expect(call.query.has('api_token')).toBe(false);
    expect(JSON.stringify(log)).not.toContain(token);

    // The same provider, the same connector, over OAuth: only the credential's presentation differs.
    const oauth = await generated({
      provider: 'pipedrive',
      groupRef: 'pd-oauth',
      oauth2AuthorizationCode: { accessToken: 'pd-oauth-access' },
    });
    expect(oauth.authScheme).toBe('oauth2/authorizationCode');
    local.expected = { name: 'authorization', value: 'Bearer pd-oauth-access' };
    expect((await readThrough(oauth.id, 'persons')).records.map((record) => record.id)).toEqual(['7']);
    expect(local.api.at(-1)!.headers['x-api-token']).toBeUndefined();
  });

  it('shows the method in the connection view, the token only with includeCreds', async () => {
    const { id } = await generated({ provider: 'pipedrive', groupRef: 'pd-view', apiKey: 'pd-view-token' });
    const view = await stack.api('GET', `${base}/connections/${id}`);
    expect(view.body).toMatchObject({ provider: 'pipedrive', authScheme: 'apiKey', status: 'working' });
    expect(view.body.apiKey).toBeUndefined();
    const withCreds = await stack.api('GET', `${base}/connections/${id}?includeCreds=true`);
    expect(withCreds.body).toMatchObject({ authScheme: 'apiKey', apiKey: 'pd-view-token' });
  });

  it('refuses a credential kind Pipedrive does not take with a 400 naming the kinds it takes', async () => {
    const refused = await generate({
      provider: 'pipedrive',
      groupRef: 'pd-wrong',
      basicAuth: { username: 'ada@example.com', password: 'secret' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toEqual([
      expect.objectContaining({
        in: 'body',
        name: 'basicAuth',
        detail: expect.stringMatching(
          /pipedrive takes no basicAuth.*oauth2AuthorizationCode.*oauth2ClientCredentials.*apiKey \(API token \(apiKey\)\)/,
        ),
      }),
    ]);
    const nothing = await generate({
      provider: 'activeCampaign',
      groupRef: 'ac-wrong',
      oauth2AuthorizationCode: { accessToken: 'x' },
    });
    expect(nothing.status).toBe(400);
    expect(nothing.body.issues[0]).toMatchObject({
      name: 'oauth2AuthorizationCode',
      detail: expect.stringMatching(/give apiKey \(apiKey\)$/),
    });
  });
});

describe('Zendesk Support API token', () => {
  const token = '6wiIBWbGkBMo1mRDMuVwkw1EPsNkeUj95PIz2akv';

  it('sends Basic {email}/token:{api_token}, whether the username is the email or already ends in /token', async () => {
    local.expected = { name: 'authorization', value: basic('jdoe@example.com/token', token) };
    for (const [groupRef, username] of [
      ['zd-email', 'jdoe@example.com'],
      ['zd-formatted', 'jdoe@example.com/token'],
    ]) {
      const connection = await generated({
        provider: 'zendeskSupport',
        groupRef,
        providerWorkspaceRef: 'acme',
        basicAuth: { username, password: token },
      });
      expect(connection.authScheme).toBe('basic');
      const log: RequestLogEntry[] = [];
      const page = await readThrough(connection.id, 'organizations', log);
      expect(page.records.map((record) => record.id)).toEqual(['9']);
      expect(local.api.at(-1)!.headers.authorization).toBe(local.expected.value);
      const logged = JSON.stringify(log);
      expect(logged).not.toContain(token);
      expect(logged).not.toContain(local.expected.value.slice('Basic '.length));
      // The view keeps the username as given; the token only with includeCreds.
      const view = await stack.api('GET', `${base}/connections/${connection.id}?includeCreds=true`);
      expect(view.body).toMatchObject({ authScheme: 'basic', basicAuth: { username, password: token } });
    }
    expect(local.token).toHaveLength(0);
  });

  it('still connects over OAuth, sent as Bearer', async () => {
    const { id } = await generated({
      provider: 'zendeskSupport',
      groupRef: 'zd-oauth',
      providerWorkspaceRef: 'acme',
      oauth2AuthorizationCode: { accessToken: 'zd-oauth-access' },
    });
    local.expected = { name: 'authorization', value: 'Bearer zd-oauth-access' };
    expect((await readThrough(id, 'organizations')).records).toHaveLength(1);
  });
});

describe('HubSpot private-app token', () => {
  it('connects with apiKey and reads contacts with Authorization: Bearer <token>', async () => {
    const token = 'pat-na1-11111111-2222-3333-4444-555555555555';
    const connection = await generated({ provider: 'hubspot', groupRef: 'hs-token', apiKey: token });
    expect(connection.authScheme).toBe('apiKey');
    local.expected = { name: 'authorization', value: `Bearer ${token}` };
    const page = await readThrough(connection.id, 'contacts');
    expect(page.records.map((record) => record.id)).toEqual(['11']);
    expect(local.api.at(-1)!.path).toBe('/crm/v3/objects/contacts');
  });

  it('never asks the token endpoint to refresh a refused private-app token: it is not an OAuth token', async () => {
    const { id } = await generated({ provider: 'hubspot', groupRef: 'hs-refused', apiKey: 'pat-revoked' });
    local.expected = { name: 'authorization', value: 'Bearer pat-current' };
    const log: RequestLogEntry[] = [];
    const failure = await readThrough(id, 'contacts', log).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).status).toBe(401);
    expect(local.token).toHaveLength(0);
    expect(JSON.stringify(log)).not.toContain('pat-revoked');
    expect((failure as Error).message).not.toContain('pat-revoked');
    const view = await stack.api('GET', `${base}/connections/${id}`);
    expect(view.body).toMatchObject({ authScheme: 'apiKey', status: 'bad_credentials' });
  });
});

describe('OAuth alternatives of API-token providers', () => {
  it('sends an imported Front OAuth token as Bearer, and a monday.com one as its bare Authorization value', async () => {
    const front = await generated({
      provider: 'front',
      groupRef: 'front-oauth',
      oauth2AuthorizationCode: { accessToken: 'front-oauth-access' },
    });
    expect(front.authScheme).toBe('oauth2/authorizationCode');
    local.expected = { name: 'authorization', value: 'Bearer front-oauth-access' };
    const frontClient = new ProviderHttpClient(getProvider('front')!, await connectionTarget(front.id));
    expect((await frontClient.json({ method: 'GET', path: '/me' })).status).toBe(200);

    const monday = await generated({
      provider: 'monday',
      groupRef: 'monday-oauth',
      oauth2AuthorizationCode: { accessToken: 'monday-oauth-access' },
    });
    local.expected = { name: 'authorization', value: 'monday-oauth-access' };
    const mondayClient = new ProviderHttpClient(getProvider('monday')!, await connectionTarget(monday.id));
    expect((await mondayClient.json({ method: 'POST', path: '/v2', json: {} })).status).toBe(200);
  });

  it('takes a provider app for Front, whose OAuth is an alternative, and still refuses one for an API-key-only provider', async () => {
    const front = await stack.api('POST', `${base}/provider-apps`, {
      body: { provider: 'front', clientId: 'front-client', clientSecret: 'front-secret' },
    });
    expect(front.status).toBe(200);
    const activeCampaign = await stack.api('POST', `${base}/provider-apps`, {
      body: { provider: 'activeCampaign', clientId: 'c', clientSecret: 's' },
    });
    expect(activeCampaign.status).toBe(400);
    expect(activeCampaign.body.issues[0].detail).toMatch(/authenticates with apiKey, not OAuth 2.0/);
  });
});

describe('GET /providers', () => {
  it('lists each provider’s alternative methods beside its main one', async () => {
    const response = await stack.api('GET', '/providers');
    expect(response.status).toBe(200);
    expect(response.body.pipedrive).toMatchObject({
      authType: 'oauth2',
      alternativeAuth: [
        { authType: 'apiKey', displayName: 'API token', apiKeyOpts: { header: { name: 'x-api-token' } } },
      ],
    });
    expect(response.body.zendeskSupport.alternativeAuth).toEqual([
      expect.objectContaining({
        authType: 'basic',
        basicOpts: expect.objectContaining({ usernameFormat: '%s/token' }),
      }),
    ]);
    expect(response.body.activeCampaign.alternativeAuth).toBeUndefined();
  });
});
