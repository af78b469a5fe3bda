import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { PublicApi } from '../support/public-api.js';
import { createTestProject, request, type TestProject } from '../support/stack.js';
import {
  connectByHttp,
  createSandboxApp,
  eventsOf,
  pageResult,
  sql,
  startOAuthStack,
  type OAuthStack,
} from '../oauth/helpers.js';
import { projectJwtMinter } from '../support/project-jwt.js';

let oauth: OAuthStack;
let other: TestProject;
let base: string;

beforeAll(async () => {
  oauth = await startOAuthStack({ autoApprove: false });
  other = await createTestProject();
  base = `/projects/${oauth.stack.project.name}/connections`;
  await createSandboxApp(oauth.stack);
});
afterAll(async () => oauth.close());
afterEach(() => oauth.sandbox.reset());

const generate = (body: Record<string, unknown>) => oauth.stack.api('POST', `${base}:generate`, { body });

async function sandboxTokens(): Promise<{ access_token: string; refresh_token: string }> {
  const { page } = await connectByHttp(oauth, { groupRef: `donor-${randomUUID()}` });
  const id = pageResult(page.body).connectionId;
  const donor = await oauth.stack.api('GET', `${base}/${id}?includeCreds=true&includeRefreshToken=true`);
  expect((await oauth.stack.api('DELETE', `${base}/${id}`)).status).toBe(204);
  return {
    access_token: donor.body.oauth2AuthorizationCode.accessToken.token,
    refresh_token: donor.body.oauth2AuthorizationCode.refreshToken.token,
  };
}

describe('POST connections:generate', () => {
  it('creates an API-key connection (201) and shows the key only with includeCreds', async () => {
    const created = await generate({
      provider: 'sandboxApiKey',
      groupRef: 'g-apikey',
      groupName: 'Api Key Group',
      consumerRef: 'c-apikey',
      apiKey: 'sandbox-demo-key',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      provider: 'sandboxApiKey',
      projectId: oauth.stack.project.id,
      authScheme: 'apiKey',
      status: 'working',
      group: { groupRef: 'g-apikey', groupName: 'Api Key Group', projectId: oauth.stack.project.id },
      consumer: { consumerRef: 'c-apikey', consumerName: 'c-apikey' },
      providerMetadata: {},
    });
    expect(created.body.apiKey).toBeUndefined();
    const withCreds = await oauth.stack.api('GET', `${base}/${created.body.id}?includeCreds=true`);
    expect(withCreds.body.apiKey).toBe('sandbox-demo-key');
    expect(await eventsOf(oauth.stack.project.id, 'connection.created')).toContainEqual(
      expect.objectContaining({ connectionId: created.body.id, groupRef: 'g-apikey', authScheme: 'apiKey' }),
    );
  });

  it('creates a basic-auth connection, with workspace and metadata', async () => {
    const created = await generate({
      provider: 'ashby',
      groupRef: 'g-basic',
      consumerRef: 'c-basic',
      providerMetadata: { region: { value: 'eu', source: 'input' }, plan: 'pro' },
      basicAuth: { username: 'user-1', password: 'pass-1' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      authScheme: 'basic',
      providerMetadata: { region: { value: 'eu', source: 'input' }, plan: { value: 'pro', source: 'input' } },
    });
    expect(created.body.basicAuth).toBeUndefined();
    const withCreds = await oauth.stack.api('GET', `${base}/${created.body.id}?includeCreds=true`);
    expect(withCreds.body.basicAuth).toEqual({ username: 'user-1', password: 'pass-1' });
  });

  it('fetches a client-credentials token now, and saves the connection only when it works', async () => {
    const created = await generate({
      provider: 'sandbox',
      groupRef: 'g-cc',
      consumerRef: 'c-cc',
      oauth2ClientCredentials: {
        clientId: 'sandbox-client',
        clientSecret: 'sandbox-secret',
        scopes: ['contacts.read'],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      authScheme: 'oauth2/clientCredentials',
      oauth2ClientCredentials: { scopes: ['contacts.read'] },
    });
    expect(created.body.oauth2ClientCredentials.clientSecret).toBeUndefined();
    const withCreds = await oauth.stack.api('GET', `${base}/${created.body.id}?includeCreds=true`);
    const token = withCreds.body.oauth2ClientCredentials.accessToken.token;
    expect((await request('GET', `${oauth.sandbox.url}/api/v1/me`, { bearer: token })).status).toBe(200);

    const refused = await generate({
      provider: 'sandbox',
      groupRef: 'g-cc-bad',
      consumerRef: 'c',
      oauth2ClientCredentials: { clientId: 'sandbox-client', clientSecret: 'wrong' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0]).toMatchObject({
      name: 'oauth2ClientCredentials',
      detail: expect.stringMatching(/refused these client credentials.*invalid_client/),
    });
    oauth.sandbox.faults.set({ failTokenEndpoint: true });
    const down = await generate({
      provider: 'sandbox',
      groupRef: 'g-cc-down',
      consumerRef: 'c',
      oauth2ClientCredentials: { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' },
    });
    expect(down.status).toBe(502);
    expect(down.body.retryable).toBe(true);
    expect(
      await sql('select 1 from groups where group_ref = any($1)', [['g-cc-bad', 'g-cc-down']]),
    ).toHaveLength(0);
  });

  it('imports authorization-code tokens that refresh with the project’s provider app', async () => {
    const tokens = await sandboxTokens();
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const refreshExpiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const created = await generate({
      provider: 'sandbox',
      groupRef: 'g-import',
      consumerRef: 'c-import',
      oauth2AuthorizationCode: {
        accessToken: { token: tokens.access_token, issuedAt: new Date().toISOString(), expiresAt },
        refreshToken: { token: tokens.refresh_token, expiresAt: refreshExpiresAt },
        scopes: ['contacts.read'],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.providerApp.clientId).toBe('sandbox-client');
    const imported = await oauth.stack.api(
      'GET',
      `${base}/${created.body.id}?includeCreds=true&includeRefreshToken=true`,
    );
    expect(imported.body.oauth2AuthorizationCode.refreshToken).toMatchObject({
      token: tokens.refresh_token,
      expiresAt: refreshExpiresAt,
    });
    const refreshed = await oauth.stack.api(
      'GET',
      `${base}/${created.body.id}?refresh=force&includeCreds=true`,
    );
    expect(refreshed.status).toBe(200);
    const renewed = refreshed.body.oauth2AuthorizationCode.accessToken.token;
    expect(renewed).not.toBe(tokens.access_token);
    expect((await request('GET', `${oauth.sandbox.url}/api/v1/me`, { bearer: renewed })).status).toBe(200);
  });

  it('generating again for a group and provider replaces the credentials of its one connection (201 both times, as the public API answers)', async () => {
    const body = {
      provider: 'sandboxApiKey',
      groupRef: 'g-replace',
      consumerRef: 'c',
      apiKey: 'key-one-1234',
    };
    const first = await generate(body);
    const second = await generate({ ...body, apiKey: 'key-two-1234' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    const withCreds = await oauth.stack.api('GET', `${base}/${first.body.id}?includeCreds=true`);
    expect(withCreds.body.apiKey).toBe('key-two-1234');
    expect(await eventsOf(oauth.stack.project.id, 'connection.updated')).toContainEqual(
      expect.objectContaining({ connectionId: first.body.id }),
    );
  });

  it('takes group and consumer refs typed composed or decomposed as one each, kept in NFC, tokens too', async () => {
    const [composed, decomposed] = ['Soci\u00e9t\u00e9', 'Socie\u0301te\u0301'];
    const first = await generate({
      provider: 'sandboxApiKey',
      groupRef: decomposed,
      consumerRef: `${decomposed}-user`,
      apiKey: 'nfc-key-1',
    });
    expect(first.status).toBe(201);
    expect(first.body.group.groupRef).toBe(composed);
    expect(first.body.consumer.consumerRef).toBe(`${composed}-user`);
    const second = await generate({
      provider: 'sandboxApiKey',
      groupRef: composed,
      consumerRef: `${composed}-user`,
      apiKey: 'nfc-key-2',
    });
    expect(second.body.id).toBe(first.body.id);
    for (const ref of [composed, decomposed]) {
      const listed = await oauth.stack.api('GET', `${base}?groupRef=${encodeURIComponent(ref)}`);
      expect(listed.body.map((connection: { id: string }) => connection.id)).toEqual([first.body.id]);
      const byConsumer = await oauth.stack.api(
        'GET',
        `${base}?consumerRef=${encodeURIComponent(`${ref}-user`)}`,
      );
      expect(byConsumer.body.map((connection: { id: string }) => connection.id)).toEqual([first.body.id]);
    }
    // A browser token minted for the decomposed spelling acts for that one group.
    const token = await (await projectJwtMinter(oauth.stack))({ groupRef: decomposed });
    const asGroup = await request('GET', `${oauth.stack.urls.api}${base}`, { bearer: token });
    expect(asGroup.body.map((connection: { id: string }) => connection.id)).toEqual([first.body.id]);
    expect((await oauth.stack.api('DELETE', `${base}/${first.body.id}`)).status).toBe(204);
  });

  it('names missing required fields', async () => {
    const response = await generate({ apiKey: 'k' });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: { name: string }) => issue.name).sort()).toEqual([
      'consumerRef',
      'groupRef',
      'provider',
    ]);
  });

  it('refuses unknown providers, no or several credentials, and credentials the provider does not take', async () => {
    const common = { groupRef: 'g-bad', consumerRef: 'c' };
    const unknown = await generate({ ...common, provider: 'nope', apiKey: 'k' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0]).toMatchObject({
      name: 'provider',
      detail: expect.stringMatching(/not a provider/),
    });
    const none = await generate({ ...common, provider: 'sandboxApiKey' });
    expect(none.status).toBe(400);
    expect(none.body.issues[0]).toMatchObject({
      name: 'credentials',
      detail: expect.stringMatching(/exactly one/),
    });
    const two = await generate({
      ...common,
      provider: 'sandboxApiKey',
      apiKey: 'k',
      basicAuth: { username: 'u', password: 'p' },
    });
    expect(two.status).toBe(400);
    expect(two.body.issues.map((issue: { name: string }) => issue.name)).toEqual(['apiKey', 'basicAuth']);
    const wrongKind = await generate({
      ...common,
      provider: 'sandboxApiKey',
      basicAuth: { username: 'u', password: 'p' },
    });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.issues[0]).toMatchObject({
      name: 'basicAuth',
      detail: expect.stringMatching(/give apiKey/),
    });
    const custom = await generate({ ...common, provider: 'gitlab', apiKey: 'k' });
    expect(custom.status).toBe(400);
    expect(await sql('select 1 from groups where group_ref = $1', ['g-bad'])).toHaveLength(0);
  });

  it('refuses imported tokens that expire before they were issued, naming which, and saves nothing', async () => {
    const issuedAt = new Date().toISOString();
    const before = new Date(Date.now() - 1000).toISOString();
    for (const name of ['accessToken', 'refreshToken'] as const) {
      const groupRef = `g-expired-${name}`;
      const response = await generate({
        provider: 'sandbox',
        groupRef,
        consumerRef: 'c',
        oauth2AuthorizationCode: {
          accessToken: { token: 'a', issuedAt },
          refreshToken: { token: 'r', issuedAt },
          [name]: { token: 't', issuedAt, expiresAt: before },
        },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0]).toMatchObject({ name: `oauth2AuthorizationCode.${name}.expiresAt` });
      expect(await sql('select 1 from groups where group_ref = $1', [groupRef])).toHaveLength(0);
    }
    // Without issuedAt a refresh token is issued now, so one that already expired is refused too.
    const stale = await generate({
      provider: 'sandbox',
      groupRef: 'g-expired-stale',
      consumerRef: 'c',
      oauth2AuthorizationCode: { accessToken: 'a', refreshToken: { token: 'r', expiresAt: before } },
    });
    expect(stale.status).toBe(400);
    const expiredLongAgo = await generate({
      provider: 'sandbox',
      groupRef: 'g-expired-long-ago',
      consumerRef: 'c',
      oauth2AuthorizationCode: {
        accessToken: 'a',
        refreshToken: { token: 'r', issuedAt: '2020-01-01T00:00:00Z', expiresAt: '2021-01-01T00:00:00Z' },
      },
    });
    expect(expiredLongAgo.status).toBe(400);
    expect(expiredLongAgo.body.issues[0].name).toBe('oauth2AuthorizationCode.refreshToken.expiresAt');
    expect(stale.body.issues[0]).toMatchObject({
      name: 'oauth2AuthorizationCode.refreshToken.expiresAt',
      detail: 'expiresAt must be in the future',
    });
  });

  it('refuses metadata that would change a provider’s host', async () => {
    const response = await generate({
      provider: 'zoho',
      groupRef: 'g-zoho',
      consumerRef: 'c',
      providerMetadata: { zoho_api_domain: 'evil.example/steal?' },
      oauth2AuthorizationCode: { accessToken: 'a' },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0].name).toBe('providerMetadata.zoho_api_domain');
  });

  it('accepts only the listed hosts for a value that forms a whole host name', async () => {
    for (const [name, value] of [
      ['zoho_token_domain', 'evil.example'],
      ['zoho_api_domain', '10.0.0.5'],
    ]) {
      const response = await generate({
        provider: 'zoho',
        groupRef: `g-zoho-${name}`,
        consumerRef: 'c',
        providerMetadata: { [name]: value },
        oauth2AuthorizationCode: { accessToken: 'a' },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0]).toMatchObject({ name: `providerMetadata.${name}`, value });
      expect(response.body.issues[0].detail).toMatch(/must be one of: .*zoho/);
    }
  });

  it('takes only an https origin for a self-hosted instance whose URLs start with it (SugarCRM)', async () => {
    const login = { username: 'u', password: 'p' };
    for (const value of [
      'http://acme.example.com',
      'https://acme.example.com/path',
      'https://user@acme.example.com',
      'acme.example.com',
      'https://acme.example.com?x=1',
    ]) {
      const response = await generate({
        provider: 'sugarCRM',
        groupRef: 'g-sugar',
        consumerRef: 'c',
        providerMetadata: { workspace: value },
        oauth2Password: login,
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0]).toMatchObject({ name: 'providerMetadata.workspace', value });
      expect(response.body.issues[0].detail).toMatch(/https:\/\//);
    }
    const noInstance = await generate({
      provider: 'sugarCRM',
      groupRef: 'g-sugar',
      consumerRef: 'c',
      oauth2Password: login,
    });
    expect(noInstance.status).toBe(400);
    expect(noInstance.body.issues[0].name).toBe('providerMetadata.workspace');
    // A workspace ref is a bare name: it cannot be the origin either.
    const viaRef = await generate({
      provider: 'sugarCRM',
      groupRef: 'g-sugar',
      consumerRef: 'c',
      providerWorkspaceRef: 'acme',
      oauth2Password: login,
    });
    expect(viaRef.status).toBe(400);
    expect(viaRef.body.issues[0]).toMatchObject({
      name: 'providerMetadata.workspace',
      detail: expect.stringMatching(/https origin/),
    });
    const listed = await oauth.stack.api('GET', `${base}?groupRef=g-sugar`);
    expect(listed.body).toEqual([]);
  });

  it('takes a value that is only the first label of a host under the provider’s domain', async () => {
    const response = await generate({
      provider: 'activeCampaign',
      groupRef: 'g-activecampaign',
      consumerRef: 'c',
      providerMetadata: { workspace: 'acme' },
      apiKey: 'ac-key',
    });
    expect(response.status).toBe(201);
    const refused = await generate({
      provider: 'activeCampaign',
      groupRef: 'g-activecampaign-2',
      consumerRef: 'c',
      providerMetadata: { workspace: 'evil.example/steal?' },
      apiKey: 'ac-key',
    });
    expect(refused.status).toBe(400);
  });

  it('creates a Shopify connection for a shop name, whose URLs put it before .myshopify.com', async () => {
    const response = await generate({
      provider: 'shopify',
      groupRef: 'g-shopify',
      consumerRef: 'c',
      providerMetadata: { workspace: 'acme' },
      oauth2AuthorizationCode: { accessToken: 'shpat-token' },
    });
    expect(response.status).toBe(201);
    const refused = await generate({
      provider: 'shopify',
      groupRef: 'g-shopify-2',
      consumerRef: 'c',
      providerMetadata: { workspace: 'evil.example/steal?' },
      oauth2AuthorizationCode: { accessToken: 'shpat-token' },
    });
    expect(refused.status).toBe(400);
  });
});

describe('GET connections', () => {
  it('lists without credentials and filters by provider, groupRef and consumerRef', async () => {
    await generate({
      provider: 'sandboxApiKey',
      groupRef: 'list-a',
      consumerRef: 'list-x',
      apiKey: 'list-key-1',
    });
    await generate({ provider: 'ashby', groupRef: 'list-a', consumerRef: 'list-y', apiKey: 'list-key-2' });
    await generate({
      provider: 'sandboxApiKey',
      groupRef: 'list-b',
      consumerRef: 'list-y',
      apiKey: 'list-key-3',
    });
    const all = await oauth.stack.api('GET', base);
    expect(all.status).toBe(200);
    expect(JSON.stringify(all.body)).not.toMatch(/list-key-\d/);
    const refs = (response: { body: { group: { groupRef: string }; provider: string }[] }) =>
      response.body.map((connection) => `${connection.group.groupRef}/${connection.provider}`).sort();
    expect(refs(await oauth.stack.api('GET', `${base}?groupRef=list-a`))).toEqual([
      'list-a/ashby',
      'list-a/sandboxApiKey',
    ]);
    expect(refs(await oauth.stack.api('GET', `${base}?consumerRef=list-y`))).toEqual([
      'list-a/ashby',
      'list-b/sandboxApiKey',
    ]);
    expect(refs(await oauth.stack.api('GET', `${base}?groupRef=list-a&provider=ashby`))).toEqual([
      'list-a/ashby',
    ]);
    expect((await oauth.stack.api('GET', `${base}?groupRef=nobody`)).body).toEqual([]);
  });

  it('refresh=ifExpired leaves a fresh token alone; refresh=force renews it and writes connection.refreshed', async () => {
    const id = pageResult((await connectByHttp(oauth, { groupRef: 'refresh-api' })).page.body).connectionId;
    const before = await oauth.stack.api('GET', `${base}/${id}?includeCreds=true`);
    const ifExpired = await oauth.stack.api('GET', `${base}/${id}?refresh=ifExpired&includeCreds=true`);
    expect(ifExpired.body.oauth2AuthorizationCode.accessToken.token).toBe(
      before.body.oauth2AuthorizationCode.accessToken.token,
    );
    expect(oauth.sandbox.faults.stats.tokensRefreshed).toBe(0);
    const forced = await oauth.stack.api('GET', `${base}/${id}?refresh=force&includeCreds=true`);
    expect(forced.status).toBe(200);
    expect(forced.body.oauth2AuthorizationCode.accessToken.token).not.toBe(
      before.body.oauth2AuthorizationCode.accessToken.token,
    );
    expect(forced.body.oauth2AuthorizationCode.refreshToken).toBeUndefined();
    expect(oauth.sandbox.faults.stats.tokensRefreshed).toBe(1);
    expect(await eventsOf(oauth.stack.project.id, 'connection.refreshed')).toContainEqual(
      expect.objectContaining({ connectionId: id, status: 'working' }),
    );
  });

  it('a refresh the provider refuses marks the connection bad_credentials and writes connection.error', async () => {
    const id = pageResult((await connectByHttp(oauth, { groupRef: 'revoked' })).page.body).connectionId;
    oauth.sandbox.faults.set({ revokeAllTokens: true });
    const refused = await oauth.stack.api('GET', `${base}/${id}?refresh=force`);
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({
      retryable: false,
      detail: expect.stringMatching(/invalid_grant.*oauth-update/),
    });
    const after = await oauth.stack.api('GET', `${base}/${id}`);
    expect(after.body.status).toBe('bad_credentials');
    const errors = await eventsOf(oauth.stack.project.id, 'connection.error');
    const error = errors.find((data) => data.connectionId === id);
    // Why, as the public payload has it: `errors`, and the same list under the deprecated `error`.
    expect(error).toMatchObject({
      status: 'bad_credentials',
      errors: [expect.stringMatching(/invalid_grant/)],
      error: [expect.stringMatching(/invalid_grant/)],
    });
    expect(new PublicApi().checkNotification({ notificationType: 'connection.error', data: error })).toEqual(
      [],
    );
  });

  it('404s for another project’s connection, an unknown id and a malformed id', async () => {
    const theirs = await request(
      'POST',
      `${oauth.stack.urls.api}/projects/${other.name}/connections:generate`,
      {
        apiKey: other.apiKey,
        body: { provider: 'sandboxApiKey', groupRef: 'theirs', consumerRef: 'c', apiKey: 'their-key-123' },
      },
    );
    expect(theirs.status).toBe(201);
    for (const id of [theirs.body.id, randomUUID(), 'not-a-uuid']) {
      const response = await oauth.stack.api('GET', `${base}/${id}?includeCreds=true`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/problem\+json/);
    }
    expect(
      (
        await oauth.stack.api('PATCH', `${base}/${theirs.body.id}`, {
          body: { updateMask: ['providerWorkspaceRef'], connection: { providerWorkspaceRef: 'x' } },
        })
      ).status,
    ).toBe(404);
    expect((await oauth.stack.api('DELETE', `${base}/${theirs.body.id}`)).status).toBe(404);
    expect((await oauth.stack.api('PATCH', `${base}/${theirs.body.id}:oauth-update`)).status).toBe(404);
    const mine = await request(
      'GET',
      `${oauth.stack.urls.api}/projects/${other.name}/connections/${theirs.body.id}`,
      {
        apiKey: oauth.stack.project.apiKey,
      },
    );
    expect(mine.status).toBe(404);
  });
});

describe('PATCH connections/{id}', () => {
  it('updates the workspace and metadata named by updateMask and writes connection.updated', async () => {
    const created = await generate({
      provider: 'freshdesk',
      groupRef: 'g-patch',
      consumerRef: 'c',
      apiKey: 'fd-key-1234',
    });
    const patched = await oauth.stack.api('PATCH', `${base}/${created.body.id}`, {
      body: {
        updateMask: ['providerWorkspaceRef', 'providerMetadata'],
        connection: { providerWorkspaceRef: 'acme', providerMetadata: { tier: 'gold' } },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      providerWorkspaceRef: 'acme',
      providerMetadata: { tier: { value: 'gold', source: 'input' } },
    });
    expect(await eventsOf(oauth.stack.project.id, 'connection.updated')).toContainEqual(
      expect.objectContaining({ connectionId: created.body.id, providerWorkspaceRef: 'acme' }),
    );
  });

  it('rotates credentials named by updateMask, as the React components’ “Update connection” does', async () => {
    const created = await generate({
      provider: 'sandboxApiKey',
      groupRef: 'g-rotate',
      consumerRef: 'c-rotate',
      apiKey: 'old-key',
      providerMetadata: { tier: 'gold' },
    });
    const eventsBefore = (await eventsOf(oauth.stack.project.id, 'connection.updated')).length;
    const rotated = await oauth.stack.api('PATCH', `${base}/${created.body.id}`, {
      body: { updateMask: ['apiKey'], connection: { apiKey: 'sandbox-demo-key' } },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({
      id: created.body.id,
      status: 'working',
      group: { groupRef: 'g-rotate' },
      consumer: { consumerRef: 'c-rotate' },
      providerMetadata: { tier: { value: 'gold', source: 'input' } },
    });
    expect(rotated.body.apiKey).toBeUndefined();
    const withCreds = await oauth.stack.api('GET', `${base}/${created.body.id}?includeCreds=true`);
    expect(withCreds.body.apiKey).toBe('sandbox-demo-key');
    expect((await eventsOf(oauth.stack.project.id, 'connection.updated')).length).toBe(eventsBefore + 1);

    for (const [updateMask, connection, name] of [
      [['basicAuth'], { basicAuth: { username: 'u', password: 'p' } }, 'basicAuth'],
      [['apiKey'], {}, 'connection.apiKey'],
      [
        ['apiKey', 'basicAuth'],
        { apiKey: 'k', basicAuth: { username: 'u', password: 'p' } },
        'connection.apiKey',
      ],
    ] as const) {
      const refused = await oauth.stack.api('PATCH', `${base}/${created.body.id}`, {
        body: { updateMask, connection },
      });
      expect({ updateMask, status: refused.status }).toEqual({ updateMask, status: 400 });
      expect(refused.body.issues.map((issue: any) => issue.name)).toContain(name);
    }
    const unchanged = await oauth.stack.api('GET', `${base}/${created.body.id}?includeCreds=true`);
    expect(unchanged.body.apiKey).toBe('sandbox-demo-key');
  });

  it('refuses fields outside the mask’s list, missing values and unsafe workspaces, changing nothing', async () => {
    const created = await generate({
      provider: 'freshdesk',
      groupRef: 'g-patch-bad',
      consumerRef: 'c',
      apiKey: 'fd-key-5678',
    });
    const path = `${base}/${created.body.id}`;
    const status = await oauth.stack.api('PATCH', path, { body: { updateMask: ['status'], connection: {} } });
    expect(status.status).toBe(400);
    expect(status.body.issues[0]).toMatchObject({ name: 'updateMask', value: 'status' });
    const missing = await oauth.stack.api('PATCH', path, {
      body: { updateMask: ['providerWorkspaceRef'], connection: {} },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].name).toBe('connection.providerWorkspaceRef');
    const unsafe = await oauth.stack.api('PATCH', path, {
      body: { updateMask: ['providerWorkspaceRef'], connection: { providerWorkspaceRef: 'x@evil.example' } },
    });
    expect(unsafe.status).toBe(400);
    expect(unsafe.body.issues[0].name).toBe('connection.providerWorkspaceRef');
    const noBody = await oauth.stack.api('PATCH', path);
    expect(noBody.status).toBe(400);
    expect((await oauth.stack.api('GET', path)).body).toEqual(created.body);
  });
});

describe('DELETE connections/{id}', () => {
  it('deletes (204) and writes connection.deleted', async () => {
    const created = await generate({
      provider: 'sandboxApiKey',
      groupRef: 'g-delete',
      consumerRef: 'c',
      apiKey: 'del-key-1234',
    });
    expect((await oauth.stack.api('DELETE', `${base}/${created.body.id}`)).status).toBe(204);
    expect((await oauth.stack.api('GET', `${base}/${created.body.id}`)).status).toBe(404);
    expect(await eventsOf(oauth.stack.project.id, 'connection.deleted')).toContainEqual(
      expect.objectContaining({ connectionId: created.body.id, groupRef: 'g-delete' }),
    );
  });

  it('refuses (409) while an installation uses the connection', async () => {
    const created = await generate({
      provider: 'sandboxApiKey',
      groupRef: 'g-installed',
      consumerRef: 'c',
      apiKey: 'inst-key-1234',
    });
    const [group] = await sql<{ id: string }>(
      'select id from groups where project_id = $1 and group_ref = $2',
      [oauth.stack.project.id, 'g-installed'],
    );
    const integrationId = randomUUID();
    await sql(
      `insert into integrations (id, project_id, name, provider, latest_revision_id) values ($1, $2, $3, 'sandboxApiKey', $4)`,
      [integrationId, oauth.stack.project.id, `i-${integrationId.slice(0, 8)}`, randomUUID()],
    );
    await sql(
      `insert into installations (id, project_id, integration_id, group_id, connection_id, config_id, created_by)
       values ($1, $2, $3, $4, $5, $6, 'builder:test')`,
      [randomUUID(), oauth.stack.project.id, integrationId, group.id, created.body.id, randomUUID()],
    );
    const refused = await oauth.stack.api('DELETE', `${base}/${created.body.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/used by 1 installation \(.+ of integration ".+"\)/);
    expect((await oauth.stack.api('GET', `${base}/${created.body.id}`)).status).toBe(200);
  });
});

describe('with a project JWT minted for one group (the React components’ getToken)', () => {
  it('connects, lists, updates and deletes that group’s connections only, and reads what the components read', async () => {
    const mint = await projectJwtMinter(oauth.stack);
    const token = await mint({ groupRef: 'g-jwt', sub: 'ada' });
    const project = `/projects/${oauth.stack.project.name}`;
    const asGroup = (method: string, path: string, body?: unknown) =>
      request(method, `${oauth.stack.urls.api}${path}`, { bearer: token, body });
    const theirs = await generate({
      provider: 'sandboxApiKey',
      groupRef: 'g-not-jwt',
      consumerRef: 'c',
      apiKey: 'k',
    });
    const { page } = await connectByHttp(oauth, { groupRef: 'g-jwt-oauth' });
    const theirOAuth = pageResult(page.body).connectionId as string;

    const mine = await asGroup('POST', `${base}:generate`, {
      provider: 'sandboxApiKey',
      groupRef: 'g-jwt',
      consumerRef: 'ada',
      apiKey: 'sandbox-demo-key',
    });
    expect(mine.status).toBe(201);
    const listed = await asGroup('GET', base);
    expect(listed.body.map((connection: any) => connection.id)).toEqual([mine.body.id]);
    const patch = { updateMask: ['providerMetadata'], connection: { providerMetadata: { tier: 'gold' } } };
    expect((await asGroup('PATCH', `${base}/${mine.body.id}`, patch)).status).toBe(200);
    expect((await asGroup('GET', project)).status).toBe(200);
    expect((await asGroup('GET', `${project}/provider-apps`)).status).toBe(200);
    const integration = await oauth.stack.api('POST', `${project}/integrations`, {
      body: {
        name: 'jwt-hydrate',
        provider: 'sandboxApiKey',
        latestRevision: {
          specVersion: '1.0.0',
          content: {
            name: 'jwt-hydrate',
            provider: 'sandboxApiKey',
            write: { objects: [{ objectName: 'contacts' }] },
          },
        },
      },
    });
    const hydrate = (connectionId: string) =>
      asGroup(
        'GET',
        `${project}/integrations/${integration.body.id}/revisions/${integration.body.latestRevision.id}:hydrate?connectionId=${connectionId}`,
      );
    expect((await hydrate(mine.body.id)).status).toBe(200);

    for (const [method, path, body] of [
      ['GET', `${base}?groupRef=g-not-jwt`],
      [
        'POST',
        `${base}:generate`,
        { provider: 'sandboxApiKey', groupRef: 'g-not-jwt', consumerRef: 'c', apiKey: 'k' },
      ],
      ['PATCH', `${base}/${theirs.body.id}`, patch],
      ['DELETE', `${base}/${theirs.body.id}`],
      ['PATCH', `${base}/${theirOAuth}:oauth-update`],
    ] as const) {
      const refused = await asGroup(method, path, body);
      expect({ method, path, status: refused.status }).toEqual({ method, path, status: 403 });
      expect(refused.body.detail).toMatch(/acts for group "g-jwt"/);
    }
    expect((await hydrate(theirs.body.id)).status).toBe(403);
    expect((await oauth.stack.api('GET', `${base}/${theirs.body.id}`)).status).toBe(200);

    expect((await asGroup('DELETE', `${base}/${mine.body.id}`)).status).toBe(204);
  });
});
