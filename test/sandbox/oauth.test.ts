import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { basicAuth, pkcePair, request } from './helpers.js';

const redirectUri = 'http://127.0.0.1:9999/oauth/callback';
const client = { client_id: 'sandbox-client', client_secret: 'sandbox-secret' };
type Tokens = {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope: string;
};

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 100, companies: 10, deals: 10 });
});
afterAll(() => sandbox.close());
afterEach(() => sandbox.reset());

function authorizePath(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'sandbox-client', redirect_uri: redirectUri, ...params })}`;
}

/** Walks the consent page like a browser: GET the page, submit its form. Returns the redirect URL. */
async function consent(params: Record<string, string>, decision: 'approve' | 'deny'): Promise<URL> {
  const page = await request<string>(sandbox, authorizePath(params));
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  const requestId = /name="request_id" value="([^"]+)"/.exec(page.body)![1];
  const answer = await request(sandbox, '/oauth/authorize/decision', {
    form: { request_id: requestId, decision },
  });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location')!);
}

async function codeWithPkce(scope = 'contacts.read contacts.write') {
  const pkce = pkcePair();
  const location = await consent(
    { scope, state: 'xyz', code_challenge: pkce.challenge, code_challenge_method: 'S256' },
    'approve',
  );
  return { code: location.searchParams.get('code')!, verifier: pkce.verifier };
}

function token(form: Record<string, string>, headers?: Record<string, string>) {
  return request<Tokens & { error?: string }>(sandbox, '/oauth/token', { form, headers });
}

async function fullFlow(scope?: string): Promise<Tokens> {
  const { code, verifier } = await codeWithPkce(scope);
  const response = await token({
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    ...client,
  });
  expect(response.status).toBe(200);
  return response.body;
}

function me(accessToken: string) {
  return request(sandbox, '/api/v1/me', { headers: { Authorization: `Bearer ${accessToken}` } });
}

describe('authorization code + PKCE', () => {
  it('shows a consent page, redirects with code and state, and exchanges the code (client_secret_post)', async () => {
    const pkce = pkcePair();
    const params = {
      scope: 'contacts.read deals.read',
      state: 's-1',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    };
    const page = await request<string>(sandbox, authorizePath(params));
    expect(page.body).toContain('Approve');
    expect(page.body).toContain('Deny');
    expect(page.body).toContain('Sandbox Dev App');
    expect(page.body).toContain('contacts.read');
    expect(page.body).toContain('action="/oauth/authorize/decision"');

    const location = await consent(params, 'approve');
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get('state')).toBe('s-1');
    const code = location.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const response = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: pkce.verifier,
      ...client,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'contacts.read deals.read',
    });
    expect(response.body.refresh_token).toEqual(expect.any(String));
    const who = await me(response.body.access_token);
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({
      authType: 'oauth',
      clientId: 'sandbox-client',
      scopes: ['contacts.read', 'deals.read'],
    });
    expect(sandbox.faults.stats).toMatchObject({ authorizationCodesIssued: 1, tokensIssued: 1 });
  });

  it('accepts HTTP Basic client authentication', async () => {
    const { code, verifier } = await codeWithPkce();
    const response = await token(
      { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
      { Authorization: basicAuth(client.client_id, client.client_secret) },
    );
    expect(response.status).toBe(200);
    expect(response.body.access_token).toEqual(expect.any(String));
  });

  it('rejects a wrong verifier, a replayed code and a wrong client secret', async () => {
    const { code, verifier } = await codeWithPkce();
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: pkcePair().verifier,
      ...client,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: 'invalid_grant', error_description: expect.any(String) });
    // The failed attempt used the code up.
    const retry = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...client,
    });
    expect(retry.body.error).toBe('invalid_grant');

    const fresh = await codeWithPkce();
    const badSecret = await token(
      {
        grant_type: 'authorization_code',
        code: fresh.code,
        redirect_uri: redirectUri,
        code_verifier: fresh.verifier,
      },
      { Authorization: basicAuth('sandbox-client', 'nope') },
    );
    expect(badSecret.status).toBe(401);
    expect(badSecret.body.error).toBe('invalid_client');
    expect(badSecret.headers.get('www-authenticate')).toMatch(/^Basic/);
    const noClient = await token({ grant_type: 'authorization_code', code: fresh.code });
    expect(noClient.status).toBe(401);
  });

  it('revokes the tokens of a code that is replayed after a successful exchange', async () => {
    const { code, verifier } = await codeWithPkce();
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...client,
    };
    const first = await token(form);
    expect((await me(first.body.access_token)).status).toBe(200);
    expect((await token(form)).body.error).toBe('invalid_grant');
    expect((await me(first.body.access_token)).status).toBe(401);
  });

  it('checks the redirect_uri and supports plain PKCE', async () => {
    const verifier = pkcePair().verifier;
    const location = await consent({ code_challenge: verifier, code_challenge_method: 'plain' }, 'approve');
    const code = location.searchParams.get('code')!;
    const mismatch = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:9999/other',
      code_verifier: verifier,
      ...client,
    });
    expect(mismatch.body.error).toBe('invalid_grant');

    const again = await consent({ code_challenge: verifier, code_challenge_method: 'plain' }, 'approve');
    const ok = await token({
      grant_type: 'authorization_code',
      code: again.searchParams.get('code')!,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...client,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.scope.split(' ')).toHaveLength(7); // no scope asked: all of them
  });

  it('redirects with access_denied when the user denies', async () => {
    const location = await consent({ scope: 'contacts.read', state: 'abc' }, 'deny');
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('error_description')).toBeTruthy();
    expect(location.searchParams.get('state')).toBe('abc');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('answers bad requests with an HTML page, never a redirect', async () => {
    const unknownClient = await request<string>(sandbox, authorizePath({ client_id: 'nobody' }));
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.headers.get('location')).toBeNull();
    expect(unknownClient.body).toContain('Unknown client_id');

    const registered = await request<{ client_id: string; client_secret: string }>(
      sandbox,
      '/oauth/clients',
      {
        json: { redirectUris: ['https://app.example/callback'] },
      },
    );
    expect(registered.status).toBe(201);
    const mismatch = await request<string>(sandbox, authorizePath({ client_id: registered.body.client_id }));
    expect(mismatch.status).toBe(400);
    expect(mismatch.headers.get('location')).toBeNull();
    const matching = await request<string>(
      sandbox,
      authorizePath({ client_id: registered.body.client_id, redirect_uri: 'https://app.example/callback' }),
    );
    expect(matching.status).toBe(200);

    const badParams: Record<string, string>[] = [
      { scope: 'contacts.read nonsense' },
      { response_type: 'token' },
      { code_challenge: 'short', code_challenge_method: 'S256' },
    ];
    for (const params of badParams) {
      const response = await request<string>(sandbox, authorizePath(params));
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/text\/html/);
    }
    const reused = await request<string>(sandbox, '/oauth/authorize/decision', {
      form: { request_id: 'nope', decision: 'approve' },
    });
    expect(reused.status).toBe(400);
  });

  it('skips consent when autoApprove is on', async () => {
    sandbox.faults.set({ autoApprove: true });
    const response = await request(sandbox, authorizePath({ state: 'auto' }));
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(location.searchParams.get('code')).toBeTruthy();
    expect(location.searchParams.get('state')).toBe('auto');
  });
});

describe('refresh tokens', () => {
  it('rotate on each use; an old one is invalid_grant', async () => {
    const first = await fullFlow();
    const refresh = (refreshToken: string) =>
      token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...client });
    const second = await refresh(first.refresh_token!);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.access_token).not.toBe(first.access_token);
    expect(second.body.scope).toBe(first.scope);

    const reuse = await refresh(first.refresh_token!);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');

    const third = await refresh(second.body.refresh_token!);
    expect(third.status).toBe(200);
    expect((await me(third.body.access_token)).status).toBe(200);
    expect(sandbox.faults.stats.tokensRefreshed).toBe(2);
  });

  it('may narrow but not widen the scope', async () => {
    const tokens = await fullFlow('contacts.read contacts.write');
    const wider = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      scope: 'deals.read',
      ...client,
    });
    expect(wider.body.error).toBe('invalid_scope');
    const narrower = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      scope: 'contacts.read',
      ...client,
    });
    expect(narrower.body.scope).toBe('contacts.read');
  });

  it('keeps working after access tokens expire', async () => {
    const tokens = await fullFlow();
    await request(sandbox, '/_control/faults', { json: { expireAccessTokens: true } });
    expect((await me(tokens.access_token)).status).toBe(401);
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      ...client,
    });
    expect((await me(refreshed.body.access_token)).status).toBe(200);
  });
});

describe('revocation and other grants', () => {
  it('revokes access tokens and whole grants through their refresh token', async () => {
    const tokens = await fullFlow();
    const revokeAccess = await request(sandbox, '/oauth/revoke', {
      form: { token: tokens.access_token, ...client },
    });
    expect(revokeAccess.status).toBe(200);
    expect((await me(tokens.access_token)).status).toBe(401);

    const other = await fullFlow();
    const revokeRefresh = await request(sandbox, '/oauth/revoke', {
      form: { token: other.refresh_token!, token_type_hint: 'refresh_token' },
      headers: { Authorization: basicAuth(client.client_id, client.client_secret) },
    });
    expect(revokeRefresh.status).toBe(200);
    expect((await me(other.access_token)).status).toBe(401);
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: other.refresh_token!,
      ...client,
    });
    expect(refresh.body.error).toBe('invalid_grant');

    expect((await request(sandbox, '/oauth/revoke', { form: { token: 'unknown', ...client } })).status).toBe(
      200,
    );
    expect((await request(sandbox, '/oauth/revoke', { form: { token: 'x' } })).status).toBe(401);
  });

  it('issues client_credentials tokens without a refresh token, and enforces scopes', async () => {
    const response = await token({ grant_type: 'client_credentials', scope: 'contacts.read', ...client });
    expect(response.status).toBe(200);
    expect(response.body.refresh_token).toBeUndefined();
    const auth = { Authorization: `Bearer ${response.body.access_token}` };
    expect((await request(sandbox, '/api/v1/contacts?limit=1', { headers: auth })).status).toBe(200);
    const forbidden = await request(sandbox, '/api/v1/deals', { headers: auth });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ error: 'insufficient_scope', requiredScope: 'deals.read' });
    const write = await request(sandbox, '/api/v1/contacts', {
      headers: auth,
      json: { email: 'a@b.example' },
    });
    expect(write.status).toBe(403);
  });

  it('reports RFC 6749 errors for malformed token requests', async () => {
    expect((await token({ ...client })).body.error).toBe('invalid_request');
    expect((await token({ grant_type: 'password', ...client })).body.error).toBe('unsupported_grant_type');
    const json = await request(sandbox, '/oauth/token', {
      json: { grant_type: 'client_credentials', ...client },
    });
    expect(json.status).toBe(400);
    expect(json.body.error).toBe('invalid_request');
  });

  it('revokes everything and fails the token endpoint on demand', async () => {
    const tokens = await fullFlow();
    await request(sandbox, '/_control/faults', { json: { revokeAllTokens: true } });
    expect((await me(tokens.access_token)).status).toBe(401);
    expect(
      (await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, ...client })).body
        .error,
    ).toBe('invalid_grant');

    sandbox.faults.set({ failTokenEndpoint: true });
    const down = await token({ grant_type: 'client_credentials', ...client });
    expect(down.status).toBe(503);
    expect(down.body.error).toBe('temporarily_unavailable');
  });

  it('publishes authorization server metadata', async () => {
    const metadata = await request(sandbox, '/.well-known/oauth-authorization-server');
    expect(metadata.body).toMatchObject({
      issuer: sandbox.url,
      token_endpoint: `${sandbox.url}/oauth/token`,
      code_challenge_methods_supported: ['S256', 'plain'],
    });
  });
});
