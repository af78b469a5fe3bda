import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ProblemError } from '../../src/core/problem.js';
import { em } from '../../src/db/orm.js';
import { connectionTarget, findGroupConnection } from '../../src/domain/credentials.js';
import { createTestProject, request } from '../support/stack.js';
import {
  connectByHttp,
  createSandboxApp,
  eventsOf,
  pageResult,
  sql,
  startOAuthStack,
  type OAuthStack,
} from '../oauth/helpers.js';

let oauth: OAuthStack;
let base: string;

beforeAll(async () => {
  oauth = await startOAuthStack();
  base = `/projects/${oauth.stack.project.name}/connections`;
  await createSandboxApp(oauth.stack);
});
afterAll(async () => oauth.close());
afterEach(() => oauth.sandbox.reset());

async function oauthConnection(groupRef: string): Promise<string> {
  const { page } = await connectByHttp(oauth, { groupRef });
  return pageResult(page.body).connectionId as string;
}

async function storedAccessToken(id: string): Promise<string> {
  const response = await oauth.stack.api('GET', `${base}/${id}?includeCreds=true`);
  return response.body.oauth2AuthorizationCode.accessToken.token;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function expectWorks(accessToken: string): Promise<void> {
  const me = await request('GET', `${oauth.sandbox.url}/api/v1/me`, { bearer: accessToken });
  expect(me.status).toBe(200);
}

/** Makes the stored access token look 59 minutes old with one minute left. */
async function ageToken(id: string): Promise<void> {
  await sql(
    `update connections set access_token_issued_at = now() - interval '59 minutes',
       access_token_expires_at = now() + interval '1 minute' where id = $1`,
    [id],
  );
}

describe('connectionTarget', () => {
  it('fills template variables from the workspace, the metadata, the catalog defaults and FERRY_SANDBOX_URL', async () => {
    const created = await oauth.stack.api('POST', `${base}:generate`, {
      body: {
        provider: 'zoho',
        groupRef: 'tv',
        consumerRef: 'c',
        providerWorkspaceRef: 'ws-1',
        providerMetadata: { zoho_api_domain: { value: 'www.zohoapis.eu', source: 'input' } },
        oauth2AuthorizationCode: { accessToken: 'zoho-access' },
      },
    });
    expect(created.status).toBe(201);
    const target = await connectionTarget(created.body.id);
    expect(target.provider).toBe('zoho');
    expect(target.connectionId).toBe(created.body.id);
    expect(target.templateVars).toEqual({
      workspace: 'ws-1',
      zoho_api_domain: 'www.zohoapis.eu',
      zoho_token_domain: 'accounts.zoho.com',
      sandboxURL: oauth.sandbox.url,
    });
    expect(await target.auth()).toEqual({ type: 'oauth2', accessToken: 'zoho-access' });
  });

  it('hands out API keys, basic credentials and keys used as basic credentials', async () => {
    const make = async (body: Record<string, unknown>) =>
      (await oauth.stack.api('POST', `${base}:generate`, { body: { consumerRef: 'c', ...body } })).body
        .id as string;
    const apiKey = await make({ provider: 'sandboxApiKey', groupRef: 'am-1', apiKey: 'sandbox-demo-key' });
    const basic = await make({
      provider: 'ashby',
      groupRef: 'am-2',
      basicAuth: { username: 'u', password: 'p' },
    });
    const keyAsBasic = await make({ provider: 'ashby', groupRef: 'am-3', apiKey: 'ashby-key' });
    expect(await (await connectionTarget(apiKey)).auth()).toEqual({
      type: 'apiKey',
      apiKey: 'sandbox-demo-key',
    });
    expect(await (await connectionTarget(basic)).auth()).toEqual({
      type: 'basic',
      username: 'u',
      password: 'p',
    });
    expect(await (await connectionTarget(keyAsBasic)).auth()).toEqual({
      type: 'basic',
      username: 'ashby-key',
      password: '',
    });
  });

  it('uses a fresh token as it is and refreshes one close to expiry, writing connection.refreshed', async () => {
    const id = await oauthConnection('ahead');
    const original = await storedAccessToken(id);
    expect(await (await connectionTarget(id)).auth()).toEqual({ type: 'oauth2', accessToken: original });
    expect(oauth.sandbox.faults.stats.tokensRefreshed).toBe(0);

    await ageToken(id);
    const target = await connectionTarget(id);
    const material = await target.auth();
    expect(oauth.sandbox.faults.stats.tokensRefreshed).toBe(1);
    expect(material).toEqual({ type: 'oauth2', accessToken: await storedAccessToken(id) });
    expect(material).not.toEqual({ type: 'oauth2', accessToken: original });
    await expectWorks((material as { accessToken: string }).accessToken);
    // The renewed token is good for an hour: asking again does not refresh again.
    await target.auth();
    expect(oauth.sandbox.faults.stats.tokensRefreshed).toBe(1);
    expect(
      (await eventsOf(oauth.stack.project.id, 'connection.refreshed')).filter((e) => e.connectionId === id),
    ).toHaveLength(1);
  });

  it('two workers forcing a refresh at once: one token-endpoint call, both end with the working token', async () => {
    const id = await oauthConnection('race-in-process');
    oauth.sandbox.faults.set({ latencyMs: 300 }); // the first refresh is still in flight when the second asks
    const [first, second] = await Promise.all([connectionTarget(id), connectionTarget(id)]);
    const results = await Promise.all([
      first.auth({ forceRefresh: true }),
      second.auth({ forceRefresh: true }),
    ]);
    expect(oauth.sandbox.faults.stats.tokensRefreshed).toBe(1);
    expect(results[0]).toEqual(results[1]);
    const token = (results[0] as { accessToken: string }).accessToken;
    oauth.sandbox.faults.set({ latencyMs: 0 });
    expect(token).toBe(await storedAccessToken(id));
    await expectWorks(token);
    const after = await oauth.stack.api('GET', `${base}/${id}`);
    expect(after.body.status).toBe('working');
  });

  it('two processes forcing a refresh at once: one token-endpoint call, both hold the working token', async () => {
    const id = await oauthConnection('race-processes');
    oauth.sandbox.faults.set({ latencyMs: 300 });
    const worker = fileURLToPath(new URL('./fixtures/refresh-worker.ts', import.meta.url));
    const children = [0, 1].map(() =>
      spawn(process.execPath, ['--import', 'tsx', worker, id], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        env: { ...process.env, LOG_LEVEL: 'silent' },
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    const outputs = children.map((child) =>
      createInterface({ input: child.stdout! })[Symbol.asyncIterator](),
    );
    for (const output of outputs) expect((await output.next()).value).toBe('ready');
    for (const child of children) child.stdin!.write('go\n');
    const results = await Promise.all(
      outputs.map(async (output) => JSON.parse((await output.next()).value as string)),
    );
    await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
    oauth.sandbox.faults.set({ latencyMs: 0 });
    expect(results.filter((result) => result.error)).toEqual([]);
    expect(oauth.sandbox.faults.stats.tokensRefreshed).toBe(1);
    const stored = await storedAccessToken(id);
    expect(results.map((result) => result.tokenHash)).toEqual([sha256(stored), sha256(stored)]);
    await expectWorks(stored);
  }, 60_000);

  it('a refused refresh marks bad_credentials once; later calls fail fast until the user re-authorizes', async () => {
    const id = await oauthConnection('refused');
    oauth.sandbox.faults.set({ revokeAllTokens: true });
    const target = await connectionTarget(id);
    const failure = await target.auth({ forceRefresh: true }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProblemError);
    expect(failure).toMatchObject({
      status: 502,
      retryable: false,
      context: { connectionStatus: 'bad_credentials' },
    });
    const issued = oauth.sandbox.faults.stats.tokensIssued;
    await expect((await connectionTarget(id)).auth({ forceRefresh: true })).rejects.toMatchObject({
      retryable: false,
    });
    expect(oauth.sandbox.faults.stats.tokensIssued).toBe(issued); // no second call to the token endpoint
    expect(
      (await eventsOf(oauth.stack.project.id, 'connection.error')).filter((e) => e.connectionId === id),
    ).toHaveLength(1);
  });

  it('a refresh token past the expiry the provider gave marks bad_credentials without asking it', async () => {
    const id = await oauthConnection('refresh-expired');
    await sql(`update connections set refresh_token_expires_at = now() - interval '1 second' where id = $1`, [
      id,
    ]);
    const issued = oauth.sandbox.faults.stats.tokensIssued;
    const failure = await (
      await connectionTarget(id)
    )
      .auth({ forceRefresh: true })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({
      status: 502,
      retryable: false,
      detail: expect.stringMatching(/refresh token expired at/),
      context: { connectionStatus: 'bad_credentials' },
    });
    expect(oauth.sandbox.faults.stats.tokensIssued).toBe(issued);
    const [error] = (await eventsOf(oauth.stack.project.id, 'connection.error')).filter(
      (event) => event.connectionId === id,
    );
    expect(error.errors).toEqual([expect.stringMatching(/refresh token expired at/)]);
  });

  it('a token endpoint that is down: retryable failure when forced, the still-valid token otherwise', async () => {
    const id = await oauthConnection('endpoint-down');
    const original = await storedAccessToken(id);
    oauth.sandbox.faults.set({ failTokenEndpoint: true });
    await expect((await connectionTarget(id)).auth({ forceRefresh: true })).rejects.toMatchObject({
      status: 502,
      retryable: true,
    });
    await ageToken(id);
    expect(await (await connectionTarget(id)).auth()).toEqual({ type: 'oauth2', accessToken: original });
    const after = await oauth.stack.api('GET', `${base}/${id}`);
    expect(after.body.status).toBe('working');
  });
});

describe('findGroupConnection', () => {
  it('finds the group’s connection for a provider, and 404s for another provider, group or project', async () => {
    const id = await oauthConnection('find-me');
    const manager = await em();
    const found = await findGroupConnection(manager, oauth.stack.project.id, 'find-me', 'sandbox');
    expect(found.id).toBe(id);
    const otherProject = await createTestProject();
    for (const [projectId, groupRef, provider] of [
      [oauth.stack.project.id, 'find-me', 'sandboxApiKey'],
      [oauth.stack.project.id, 'nobody', 'sandbox'],
      [otherProject.id, 'find-me', 'sandbox'],
    ]) {
      await expect(findGroupConnection(manager, projectId, groupRef, provider)).rejects.toMatchObject({
        status: 404,
      });
    }
  });
});
