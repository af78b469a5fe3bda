import { generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { createTestProject, request } from '../support/stack.js';
import { hashToken } from '../../src/crypto/secrets.js';
import { PublicApi } from '../support/public-api.js';
import {
  connectByHttp,
  consent,
  createSandboxApp,
  eventsOf,
  oauthConnect,
  pageResult,
  componentsMessage,
  sql,
  startOAuthStack,
  type OAuthStack,
} from './helpers.js';

let oauth: OAuthStack;
let appId: string;

beforeAll(async () => {
  oauth = await startOAuthStack();
  appId = (await createSandboxApp(oauth.stack)).id;
});
afterAll(async () => oauth.close());
afterEach(() => oauth.sandbox.reset());

const countRows = async (table: string) =>
  Number(
    (
      await sql<{ n: string }>(`select count(*) as n from ${table} where project_id = $1`, [
        oauth.stack.project.id,
      ])
    )[0].n,
  );

describe('POST /oauth-connect', () => {
  it('returns the sandbox authorization URL with client, callback, default scopes, state and PKCE S256', async () => {
    const response = await oauthConnect(oauth.stack, { groupRef: 'url-shape' });
    expect(response.status).toBe(200);
    expect(typeof response.body).toBe('string');
    const url = new URL(response.body);
    expect(`${url.origin}${url.pathname}`).toBe(`${oauth.sandbox.url}/oauth/authorize`);
    const params = Object.fromEntries(url.searchParams);
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: 'sandbox-client',
      redirect_uri: `${oauth.stack.urls.api}/oauth-callback`,
      scope: 'contacts.read contacts.write companies.read companies.write deals.read deals.write webhooks',
      code_challenge_method: 'S256',
    });
    expect(params.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only the hash of the state is stored, and the PKCE verifier is sealed.
    const [state] = await sql<Record<string, string>>('select * from oauth_states where state_hash = $1', [
      hashToken(params.state),
    ]);
    expect(state).toMatchObject({ group_ref: 'url-shape', consumer_ref: 'alice', provider: 'sandbox' });
    expect(JSON.stringify(state)).not.toContain(params.state);
    expect(state.code_verifier_encrypted).toMatch(/^v1\./);
    const expiresInMs = new Date(state.expire_time).getTime() - Date.now();
    expect(expiresInMs).toBeGreaterThan(9 * 60_000);
    expect(expiresInMs).toBeLessThanOrEqual(10 * 60_000);
  });

  it('asks for the provider app’s scopes and its extra authorization parameters', async () => {
    const app = await createSandboxApp(oauth.stack, {
      scopes: [['contacts.read'], ['deals.read']],
      metadata: { authQueryParams: { optional_scope: ['webhooks', 'deals.write'] } },
    });
    const response = await oauthConnect(oauth.stack, { providerAppId: app.id });
    const url = new URL(response.body);
    expect(url.searchParams.get('scope')).toBe('contacts.read deals.read');
    expect(url.searchParams.get('optional_scope')).toBe('webhooks deals.write');
    expect((await oauth.stack.api('DELETE', `${oauth.base}/provider-apps/${app.id}`)).status).toBe(204);
  });

  it('names every missing required field', async () => {
    const response = await oauth.stack.api('POST', '/oauth-connect', { body: {} });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(response.body.issues.map((issue: { name: string }) => issue.name).sort()).toEqual([
      'consumerRef',
      'groupRef',
      'projectIdOrName',
      'provider',
    ]);
  });

  it('refuses a provider that is not in the catalog', async () => {
    const response = await oauthConnect(oauth.stack, { provider: 'noSuchProvider' });
    expect(response.status).toBe(400);
    expect(response.body.issues).toMatchObject([
      expect.objectContaining({
        in: 'body',
        name: 'provider',
        detail: expect.stringMatching(/not a provider/),
      }),
    ]);
  });

  it('refuses a provider that does not authenticate with OAuth 2.0', async () => {
    const response = await oauthConnect(oauth.stack, { provider: 'sandboxApiKey' });
    expect(response.status).toBe(400);
    expect(response.body.issues[0]).toMatchObject({
      name: 'provider',
      detail: expect.stringMatching(/apiKey, not OAuth/),
    });
  });

  it('refuses a client-credentials provider, which has no browser flow', async () => {
    const response = await oauthConnect(oauth.stack, {
      provider: 'marketo',
      providerWorkspaceRef: '123-ABC-456',
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0].detail).toMatch(/clientCredentials grant.*connections:generate/);
  });

  it('refuses when the project has no provider app for the provider', async () => {
    const response = await oauthConnect(oauth.stack, { provider: 'hubspot' });
    expect(response.status).toBe(400);
    expect(response.body.issues[0]).toMatchObject({
      name: 'provider',
      detail: expect.stringMatching(/no provider app for hubspot/),
    });
  });

  it('refuses a providerAppId of another provider or of no app of this project', async () => {
    const hubspotApp = await oauth.stack.api('POST', `${oauth.base}/provider-apps`, {
      body: { provider: 'hubspot', clientId: 'hs-id', clientSecret: 'hs-secret' },
    });
    const otherProvider = await oauthConnect(oauth.stack, { providerAppId: hubspotApp.body.id });
    expect(otherProvider.status).toBe(400);
    expect(otherProvider.body.issues[0]).toMatchObject({
      name: 'providerAppId',
      detail: expect.stringMatching(/for hubspot/),
    });
    const unknown = await oauthConnect(oauth.stack, {
      providerAppId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].name).toBe('providerAppId');
  });

  it('needs a workspace where the provider’s URLs do, and refuses values that would change the host', async () => {
    await oauth.stack.api('POST', `${oauth.base}/provider-apps`, {
      body: { provider: 'salesforce', clientId: 'sf-id', clientSecret: 'sf-secret' },
    });
    const missing = await oauthConnect(oauth.stack, { provider: 'salesforce' });
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].name).toBe('providerWorkspaceRef');
    const hostile = await oauthConnect(oauth.stack, {
      provider: 'salesforce',
      providerWorkspaceRef: 'evil.example/x',
    });
    expect(hostile.status).toBe(400);
    expect(hostile.body.issues[0].name).toBe('providerWorkspaceRef');
    const ok = await oauthConnect(oauth.stack, { provider: 'salesforce', providerWorkspaceRef: 'acme-corp' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatch(/^https:\/\/acme-corp\.my\.salesforce\.com\/services\/oauth2\/authorize\?/);
  });

  it('hides another project behind a 404 and needs an API key', async () => {
    const otherProject = await createTestProject();
    for (const projectIdOrName of [otherProject.name, otherProject.id, 'no-such-project']) {
      const other = await oauthConnect(oauth.stack, { projectIdOrName });
      expect(other.status).toBe(404);
    }
    const anonymous = await request('POST', `${oauth.stack.urls.api}/oauth-connect`, {
      body: {
        projectIdOrName: oauth.stack.project.name,
        provider: 'sandbox',
        groupRef: 'g',
        consumerRef: 'c',
      },
    });
    expect(anonymous.status).toBe(401);
  });
});

describe('POST /oauth-connect from a browser, with a project JWT', () => {
  it('starts the flow for the group the token names, and refuses another group or a token naming none', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const key = await oauth.stack.api('POST', `/projects/${oauth.stack.project.name}/jwt-keys`, {
      body: {
        label: 'browser',
        algorithm: 'RSA',
        publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      },
    });
    expect(key.status).toBe(201);
    const mint = (claims: Record<string, unknown>) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.body.id })
        .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
        .sign(privateKey);
    const connect = async (token: string, groupRef: string) =>
      request<any>('POST', `${oauth.stack.urls.api}/oauth-connect`, {
        bearer: token,
        body: {
          projectIdOrName: oauth.stack.project.name,
          provider: 'sandbox',
          groupRef,
          consumerRef: 'alice',
        },
      });

    const forAcme = await mint({ groupRef: 'browser-acme' });
    const started = await connect(forAcme, 'browser-acme');
    expect(started.status).toBe(200);
    expect(new URL(started.body).searchParams.get('state')).toBeTruthy();

    const elsewhere = await connect(forAcme, 'someone-else');
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.detail).toBe('This token acts for group "browser-acme", not "someone-else".');
    const unscoped = await connect(await mint({}), 'browser-acme');
    expect(unscoped.status).toBe(403);
    expect(unscoped.body.detail).toContain('"groupRef" claim');
  });
});

describe('GET /oauth-callback', () => {
  it('creates group, consumer and a working connection, and tells the opener', async () => {
    const { page } = await connectByHttp(oauth, {
      groupRef: 'acme-1',
      consumerRef: 'alice-1',
      groupName: 'Acme Inc.',
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-/);
    expect(page.body).toContain('window.opener.postMessage(result');
    const result = pageResult(page.body);
    expect(result).toMatchObject({
      type: 'ferry:oauth',
      status: 'success',
      connectionId: expect.any(String),
    });

    const connection = await oauth.stack.api('GET', `${oauth.base}/connections/${result.connectionId}`);
    expect(connection.status).toBe(200);
    expect(connection.body).toMatchObject({
      id: result.connectionId,
      projectId: oauth.stack.project.id,
      provider: 'sandbox',
      authScheme: 'oauth2/authorizationCode',
      status: 'working',
      group: { groupRef: 'acme-1', groupName: 'Acme Inc.' },
      consumer: { consumerRef: 'alice-1', consumerName: 'alice-1' },
      providerApp: { id: appId, clientId: 'sandbox-client' },
      oauth2AuthorizationCode: { scopes: expect.arrayContaining(['contacts.read', 'webhooks']) },
    });
    expect(connection.body.oauth2AuthorizationCode.accessToken).toBeUndefined();
    expect(connection.body.providerApp.clientSecret).toBeUndefined();
    // The React components' message carries the connection as the API shows it, no credentials.
    expect(page.body).toContain('window.opener.postMessage(components');
    const forComponents = componentsMessage(page.body);
    expect(forComponents).toEqual({
      eventType: 'AUTHORIZATION_SUCCEEDED',
      data: { connection: connection.body },
    });

    const withCreds = await oauth.stack.api(
      'GET',
      `${oauth.base}/connections/${result.connectionId}?includeCreds=true&includeRefreshToken=true`,
    );
    const { accessToken, refreshToken } = withCreds.body.oauth2AuthorizationCode;
    expect(accessToken.token).toMatch(/^sat_/);
    expect(new Date(accessToken.expiresAt).getTime() - new Date(accessToken.issuedAt).getTime()).toBe(
      3600_000,
    );
    expect(refreshToken.token).toMatch(/^srt_/);
    // The sandbox's refresh tokens last 30 days, and say so (refresh_token_expires_in).
    expect(new Date(refreshToken.expiresAt).getTime() - new Date(refreshToken.issuedAt).getTime()).toBe(
      30 * 86_400_000,
    );
    const me = await request('GET', `${oauth.sandbox.url}/api/v1/me`, { bearer: accessToken.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ authType: 'oauth', clientId: 'sandbox-client' });

    const created = await eventsOf(oauth.stack.project.id, 'connection.created');
    expect(created).toContainEqual(
      expect.objectContaining({
        connectionId: result.connectionId,
        provider: 'sandbox',
        groupRef: 'acme-1',
        groupName: 'Acme Inc.',
        consumerRef: 'alice-1',
        consumerName: 'alice-1',
      }),
    );
  });

  it('connecting a group again renews its one connection and writes connection.updated', async () => {
    const first = pageResult((await connectByHttp(oauth, { groupRef: 'acme-2' })).page.body);
    const second = pageResult(
      (await connectByHttp(oauth, { groupRef: 'acme-2', consumerRef: 'bob' })).page.body,
    );
    expect(second.connectionId).toBe(first.connectionId);
    const listed = await oauth.stack.api('GET', `${oauth.base}/connections?groupRef=acme-2`);
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0].consumer.consumerRef).toBe('bob');
    const updated = await eventsOf(oauth.stack.project.id, 'connection.updated');
    expect(updated.filter((event) => event.connectionId === first.connectionId)).toHaveLength(1);
  });

  it('denied consent creates nothing and says why, with a 400 page', async () => {
    const groupsBefore = await countRows('groups');
    const connectionsBefore = await countRows('connections');
    const started = await oauthConnect(oauth.stack, { groupRef: 'denied-group' });
    const callback = await consent(oauth.sandbox, started.body, 'deny');
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied');
    const page = await request<string>('GET', callback);
    expect(page.status).toBe(400);
    expect(page.body).toMatch(/Access was denied at sandbox/);
    expect(pageResult(page.body)).toMatchObject({
      status: 'failure',
      error: expect.stringMatching(/denied/),
    });
    expect(componentsMessage(page.body)).toEqual({
      eventType: 'AUTHORIZATION_FAILED',
      data: { error: expect.stringMatching(/denied/) },
      message: expect.stringMatching(/denied/),
    });
    expect(await countRows('groups')).toBe(groupsBefore);
    expect(await countRows('connections')).toBe(connectionsBefore);
    // The state was consumed: the same callback cannot be replayed.
    const replay = await request<string>('GET', callback);
    expect(replay.status).toBe(400);
    expect(replay.body).toMatch(/already used/);
  });

  it('a state used once cannot complete a second time', async () => {
    const { callback, page } = await connectByHttp(oauth, { groupRef: 'reuse' });
    expect(page.status).toBe(200);
    const again = await request<string>('GET', callback);
    expect(again.status).toBe(400);
    expect(pageResult(again.body)).toMatchObject({
      status: 'failure',
      error: expect.stringMatching(/already used/),
    });
  });

  it('a forged state or none at all is refused', async () => {
    const forged = await request<string>(
      'GET',
      `${oauth.stack.urls.api}/oauth-callback?code=abc&state=forged-state-value`,
    );
    expect(forged.status).toBe(400);
    expect(forged.body).toMatch(/not one Ferry issued/);
    const none = await request<string>('GET', `${oauth.stack.urls.api}/oauth-callback?code=abc`);
    expect(none.status).toBe(400);
    expect(none.body).toMatch(/no state/);
  });

  it('an expired state is refused and creates nothing', async () => {
    const started = await oauthConnect(oauth.stack, { groupRef: 'expired-group' });
    const state = new URL(started.body).searchParams.get('state')!;
    await sql(`update oauth_states set expire_time = now() - interval '1 second' where state_hash = $1`, [
      hashToken(state),
    ]);
    const callback = await consent(oauth.sandbox, started.body, 'approve');
    const page = await request<string>('GET', callback);
    expect(page.status).toBe(400);
    expect(page.body).toMatch(/expired/);
    expect(await sql('select 1 from groups where group_ref = $1', ['expired-group'])).toHaveLength(0);
  });

  it('a failing token endpoint creates nothing and says why', async () => {
    const started = await oauthConnect(oauth.stack, { groupRef: 'token-down' });
    const callback = await consent(oauth.sandbox, started.body, 'approve');
    oauth.sandbox.faults.set({ failTokenEndpoint: true });
    const page = await request<string>('GET', callback);
    expect(page.status).toBe(400);
    expect(page.body).toMatch(
      /Could not exchange the authorization code at sandbox.*temporarily_unavailable/s,
    );
    expect(await sql('select 1 from groups where group_ref = $1', ['token-down'])).toHaveLength(0);
    oauth.sandbox.faults.set({ failTokenEndpoint: false });
    expect((await request<string>('GET', callback)).status).toBe(400); // consumed
  });

  it('escapes what the provider sends back', async () => {
    const started = await oauthConnect(oauth.stack, { groupRef: 'xss' });
    const state = new URL(started.body).searchParams.get('state')!;
    const page = await request<string>(
      'GET',
      `${oauth.stack.urls.api}/oauth-callback?${new URLSearchParams({
        state,
        error: 'server_error',
        error_description: '</script><script>alert(1)</script>',
      })}`,
    );
    expect(page.status).toBe(400);
    expect(page.body).not.toContain('<script>alert(1)');
    expect(page.body).toContain('&#60;/script&#62;&#60;script&#62;alert(1)');
    expect(pageResult(page.body).error).toContain('</script><script>alert(1)</script>');
  });

  it('redirects to the redirectUrl the flow was started with', async () => {
    const { page } = await connectByHttp(oauth, {
      groupRef: 'redirected',
      redirectUrl: 'https://app.example/done?x=1',
    });
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example/done');
    expect(location.searchParams.get('x')).toBe('1');
    expect(location.searchParams.get('status')).toBe('success');
    const connection = await oauth.stack.api(
      'GET',
      `${oauth.base}/connections/${location.searchParams.get('connectionId')}`,
    );
    expect(connection.body.group.groupRef).toBe('redirected');

    const started = await oauthConnect(oauth.stack, {
      groupRef: 'redirected-denied',
      redirectUrl: 'https://app.example/done',
    });
    const denied = await request('GET', await consent(oauth.sandbox, started.body, 'deny'));
    expect(denied.status).toBe(302);
    const deniedLocation = new URL(denied.headers.get('location')!);
    expect(deniedLocation.searchParams.get('status')).toBe('failure');
    expect(deniedLocation.searchParams.get('error')).toMatch(/denied/);
  });
});

describe('the authorization URL’s media type', () => {
  const publicApi = new PublicApi();
  const connectBody = {
    projectIdOrName: '',
    provider: 'sandbox',
    groupRef: 'media-type',
    consumerRef: 'alice',
  };

  it('is text/plain, the bare URL, as the public document declares, unless JSON is asked for', async () => {
    const body = { ...connectBody, projectIdOrName: oauth.stack.project.name };
    const plain = await oauth.stack.api('POST', '/oauth-connect', { body });
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(plain.body).toMatch(/^http:\/\/.+\/oauth\/authorize\?/);
    expect(publicApi.checkResponse('api', 'POST', '/oauth-connect', plain)).toEqual([]);
    const json = await oauth.stack.api('POST', '/oauth-connect', {
      body,
      headers: { accept: 'application/json' },
    });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(new URL(json.body).pathname).toBe('/oauth/authorize');
  });

  it('is the same for :oauth-update', async () => {
    const { connectionId } = pageResult((await connectByHttp(oauth, { groupRef: 'media-update' })).page.body);
    const path = `${oauth.base}/connections/${connectionId}:oauth-update`;
    const plain = await oauth.stack.api('PATCH', path);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(new URL(plain.body).pathname).toBe('/oauth/authorize');
    expect(publicApi.checkResponse('api', 'PATCH', path, plain)).toEqual([]);
    const json = await oauth.stack.api('PATCH', path, { headers: { accept: 'application/json' } });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('PATCH /connections/{id}:oauth-update', () => {
  it('returns a URL that renews that connection', async () => {
    const first = pageResult((await connectByHttp(oauth, { groupRef: 'renew' })).page.body);
    const before = await oauth.stack.api(
      'GET',
      `${oauth.base}/connections/${first.connectionId}?includeCreds=true`,
    );
    oauth.sandbox.faults.set({ revokeAllTokens: true });
    const url = await oauth.stack.api<string>(
      'PATCH',
      `${oauth.base}/connections/${first.connectionId}:oauth-update`,
    );
    expect(url.status).toBe(200);
    expect(new URL(url.body).searchParams.get('client_id')).toBe('sandbox-client');
    const page = await request<string>('GET', await consent(oauth.sandbox, url.body, 'approve'));
    expect(pageResult(page.body)).toMatchObject({ status: 'success', connectionId: first.connectionId });
    const after = await oauth.stack.api(
      'GET',
      `${oauth.base}/connections/${first.connectionId}?includeCreds=true`,
    );
    expect(after.body.status).toBe('working');
    expect(after.body.oauth2AuthorizationCode.accessToken.token).not.toBe(
      before.body.oauth2AuthorizationCode.accessToken.token,
    );
    const me = await request('GET', `${oauth.sandbox.url}/api/v1/me`, {
      bearer: after.body.oauth2AuthorizationCode.accessToken.token,
    });
    expect(me.status).toBe(200);
  });

  it('404s for a connection of another project or none, and refuses non-OAuth connections', async () => {
    const missing = await oauth.stack.api(
      'PATCH',
      `${oauth.base}/connections/00000000-0000-4000-8000-000000000000:oauth-update`,
    );
    expect(missing.status).toBe(404);
    const apiKeyConnection = await oauth.stack.api('POST', `${oauth.base}/connections:generate`, {
      body: { provider: 'sandboxApiKey', groupRef: 'keyed', consumerRef: 'k', apiKey: 'sandbox-demo-key' },
    });
    expect(apiKeyConnection.status).toBe(201);
    const refused = await oauth.stack.api(
      'PATCH',
      `${oauth.base}/connections/${apiKeyConnection.body.id}:oauth-update`,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/apiKey/);
  });
});
