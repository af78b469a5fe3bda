import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  clientCredentialsToken,
  exchangeAuthorizationCode,
  refreshAccessToken,
  TokenEndpointError,
  type OAuthClientCredentials,
  type TokenEndpoint,
} from '../../src/providers/oauth-client.js';

let sandbox: Sandbox;
let odd: Server;
let oddUrl: string;
let oddAnswer: { status: number; type: string; body: string };
const redirectUri = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 1, companies: 1, deals: 1, autoApprove: true });
  odd = createServer((_req, res) => {
    res.writeHead(oddAnswer.status, { 'content-type': oddAnswer.type });
    res.end(oddAnswer.body);
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}/token`;
});
afterAll(async () => {
  await sandbox.close();
  await new Promise<void>((resolve) => odd.close(() => resolve()));
});
afterEach(() => sandbox.reset());

/** A client whose id and secret need form-encoding in HTTP Basic (RFC 6749 2.3.1). */
function awkwardClient(): OAuthClientCredentials {
  const client = sandbox.registerClient({
    clientId: 'client id:+&',
    clientSecret: 'secret/with:odd chars+%',
  });
  return { clientId: client.clientId, clientSecret: client.clientSecret };
}

async function authorizationCode(clientId: string, challenge?: string): Promise<string> {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
  });
  if (challenge) {
    params.set('code_challenge', challenge);
    params.set('code_challenge_method', 'S256');
  }
  const response = await fetch(`${sandbox.url}/oauth/authorize?${params}`, { redirect: 'manual' });
  return new URL(response.headers.get('location')!).searchParams.get('code')!;
}

describe('token endpoint calls', () => {
  it.each(['clientSecretPost', 'clientSecretBasic'] as const)(
    'exchanges a code with PKCE and refreshes it (%s)',
    async (authMethod) => {
      const client = awkwardClient();
      const endpoint: TokenEndpoint = { tokenUrl: `${sandbox.url}/oauth/token`, client, authMethod };
      const verifier = randomBytes(32).toString('base64url');
      const code = await authorizationCode(
        client.clientId,
        createHash('sha256').update(verifier).digest('base64url'),
      );
      const tokens = await exchangeAuthorizationCode(endpoint, { code, redirectUri, codeVerifier: verifier });
      expect(tokens).toMatchObject({
        tokenType: 'Bearer',
        expiresIn: 3600,
        accessToken: expect.stringMatching(/^sat_/),
      });
      const refreshed = await refreshAccessToken(endpoint, tokens.refreshToken!);
      expect(refreshed.accessToken).not.toBe(tokens.accessToken);
      // The sandbox rotates refresh tokens: the old one is burned.
      const replay = await refreshAccessToken(endpoint, tokens.refreshToken!).catch(
        (error: unknown) => error,
      );
      expect(replay).toBeInstanceOf(TokenEndpointError);
      expect(replay).toMatchObject({ kind: 'rejected', oauthError: 'invalid_grant', httpStatus: 400 });
    },
  );

  it('gets a client-credentials token with the scopes asked for', async () => {
    const tokens = await clientCredentialsToken(
      { tokenUrl: `${sandbox.url}/oauth/token`, client: awkwardClient(), authMethod: 'clientSecretBasic' },
      ['contacts.read', 'deals.read'],
    );
    expect(tokens.scope).toBe('contacts.read deals.read');
    expect(tokens.refreshToken).toBeUndefined();
  });

  it('tells refusals (rejected) from outages (unavailable), never echoing the secret', async () => {
    const wrong = {
      tokenUrl: `${sandbox.url}/oauth/token`,
      client: { clientId: 'sandbox-client', clientSecret: 'not-it' },
    };
    const refused = await clientCredentialsToken(wrong, []).catch((error: unknown) => error);
    expect(refused).toMatchObject({ kind: 'rejected', oauthError: 'invalid_client', httpStatus: 401 });
    expect((refused as Error).message).not.toContain('not-it');

    sandbox.faults.set({ failTokenEndpoint: true });
    const down = await clientCredentialsToken(wrong, []).catch((error: unknown) => error);
    expect(down).toMatchObject({
      kind: 'unavailable',
      oauthError: 'temporarily_unavailable',
      httpStatus: 503,
    });

    const unreachable = await clientCredentialsToken(
      { ...wrong, tokenUrl: 'http://127.0.0.1:9/token' },
      [],
    ).catch((error: unknown) => error);
    expect(unreachable).toMatchObject({ kind: 'unavailable' });
  });

  it('reads form-encoded answers and refuses answers without an access token', async () => {
    const endpoint = { tokenUrl: oddUrl, client: { clientId: 'a', clientSecret: 'b' } };
    oddAnswer = {
      status: 200,
      type: 'application/x-www-form-urlencoded',
      body: 'access_token=gho_1&scope=repo%2Cuser&token_type=bearer',
    };
    expect(await clientCredentialsToken(endpoint, [])).toMatchObject({
      accessToken: 'gho_1',
      scope: 'repo,user',
    });
    oddAnswer = { status: 200, type: 'text/html', body: '<html>login</html>' };
    await expect(clientCredentialsToken(endpoint, [])).rejects.toMatchObject({ kind: 'unavailable' });
    oddAnswer = {
      status: 400,
      type: 'application/json',
      body: '{"error":"invalid_grant","error_description":"expired"}',
    };
    await expect(clientCredentialsToken(endpoint, [])).rejects.toMatchObject({
      kind: 'rejected',
      oauthError: 'invalid_grant',
      message: expect.stringMatching(/invalid_grant: expired/),
    });
  });

  it('reads how long tokens last, and takes absurd lifetimes for none', async () => {
    const endpoint = { tokenUrl: oddUrl, client: { clientId: 'a', clientSecret: 'b' } };
    const answer = (body: Record<string, unknown>) => {
      oddAnswer = {
        status: 200,
        type: 'application/json',
        body: JSON.stringify({ access_token: 't', ...body }),
      };
    };
    answer({ refresh_token: 'r', expires_in: 3600, refresh_token_expires_in: 15_552_000 });
    expect(await clientCredentialsToken(endpoint, [])).toMatchObject({
      expiresIn: 3600,
      refreshExpiresIn: 15_552_000,
    });
    // Intuit names it x_refresh_token_expires_in.
    answer({ refresh_token: 'r', x_refresh_token_expires_in: 8_726_400 });
    expect(await clientCredentialsToken(endpoint, [])).toMatchObject({ refreshExpiresIn: 8_726_400 });
    answer({ refresh_token: 'r', expires_in: 1e300, refresh_token_expires_in: '-5' });
    const absurd = await clientCredentialsToken(endpoint, []);
    expect(absurd.expiresIn).toBeUndefined();
    expect(absurd.refreshExpiresIn).toBeUndefined();
  });
});
