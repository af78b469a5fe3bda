import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decryptSecret } from '../../src/crypto/secrets.js';
import {
  createTestProject,
  request,
  startTestStack,
  type TestProject,
  type TestStack,
} from '../support/stack.js';
import { sql } from '../oauth/helpers.js';
import { PublicApi } from '../support/public-api.js';

let stack: TestStack;
let other: TestProject;
let base: string;

beforeAll(async () => {
  stack = await startTestStack();
  other = await createTestProject();
  base = `/projects/${stack.project.name}/provider-apps`;
});
afterAll(async () => stack.close());

const create = (body: Record<string, unknown>) => stack.api('POST', base, { body });
const valid = { provider: 'sandbox', clientId: 'client-1', clientSecret: 'very-secret-value-1' };

describe('provider apps', () => {
  it('creates (200), lists, gets, and never returns the client secret', async () => {
    const created = await create({ ...valid, externalRef: 'ext-1', scopes: ['contacts.read', 'deals.read'] });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(String),
      projectId: stack.project.id,
      provider: 'sandbox',
      externalRef: 'ext-1',
      clientId: 'client-1',
      scopes: ['contacts.read', 'deals.read'],
      metadata: {},
      createTime: expect.any(String),
      updateTime: expect.any(String),
    });
    const listed = await stack.api('GET', base);
    expect(listed.status).toBe(200);
    expect(listed.body.map((app: { id: string }) => app.id)).toContain(created.body.id);
    const got = await stack.api('GET', `${base}/${created.body.id}`);
    expect(got.body).toEqual(created.body);
    expect(JSON.stringify([created.body, listed.body, got.body])).not.toContain('very-secret-value-1');
  });

  it('answers scopes as the public ProviderApp has them: one flat list, whichever form they were sent in', async () => {
    const publicApi = new PublicApi();
    for (const scopes of [['contacts.read', 'contacts.write'], [['contacts.read', 'contacts.write']]]) {
      const created = await create({ ...valid, scopes });
      expect(created.body.scopes).toEqual(['contacts.read', 'contacts.write']);
      expect(publicApi.checkResponse('api', 'POST', base, created)).toEqual([]);
      const listed = await stack.api('GET', base);
      expect(publicApi.checkResponse('api', 'GET', base, listed)).toEqual([]);
    }
  });

  it('stores the client secret encrypted', async () => {
    const created = await create({ ...valid, clientSecret: 'stored-encrypted-secret' });
    const [row] = await sql<{ client_secret_encrypted: string }>(
      'select client_secret_encrypted from provider_apps where id = $1',
      [created.body.id],
    );
    expect(row.client_secret_encrypted).not.toContain('stored-encrypted-secret');
    expect(row.client_secret_encrypted).toMatch(/^v1\./);
    expect(decryptSecret(row.client_secret_encrypted)).toBe('stored-encrypted-secret');
  });

  it('keeps the spec’s metadata shape', async () => {
    const metadata = {
      authQueryParams: { optional_scope: ['a', 'b'] },
      providerParams: {
        packageInstallURL: 'https://example.com/pkg',
        gcpProjectId: 'p',
        gcpPubSubTopicName: 't',
      },
    };
    const created = await create({ ...valid, metadata });
    expect(created.body.metadata).toEqual(metadata);
    const bad = await create({ ...valid, metadata: { other: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0]).toMatchObject({ in: 'body', name: 'metadata.other' });
  });

  it('refuses an unknown provider and one that is not OAuth 2.0', async () => {
    const unknown = await create({ ...valid, provider: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues).toMatchObject([
      expect.objectContaining({
        in: 'body',
        name: 'provider',
        value: 'nope',
        detail: expect.stringMatching(/not a provider/),
      }),
    ]);
    const apiKeyProvider = await create({ ...valid, provider: 'sandboxApiKey' });
    expect(apiKeyProvider.status).toBe(400);
    expect(apiKeyProvider.body.issues[0].detail).toMatch(/apiKey, not OAuth 2\.0/);
  });

  it('names every missing or empty required field', async () => {
    const missing = await create({});
    expect(missing.status).toBe(400);
    expect(missing.body.issues.map((issue: { name: string }) => issue.name).sort()).toEqual([
      'clientId',
      'clientSecret',
      'provider',
    ]);
    const empty = await create({ ...valid, clientSecret: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].name).toBe('clientSecret');
  });

  it('updates the fields named by updateMask, and only those', async () => {
    const created = await create({ ...valid, externalRef: 'before' });
    const path = `${base}/${created.body.id}`;
    const patched = await stack.api('PATCH', path, {
      body: {
        updateMask: ['clientId', 'clientSecret', 'scopes'],
        providerApp: {
          clientId: 'client-2',
          clientSecret: 'rotated-secret',
          scopes: [['webhooks'], ['contacts.read', 'webhooks']],
          externalRef: 'ignored',
        },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      clientId: 'client-2',
      scopes: ['webhooks', 'contacts.read'],
      externalRef: 'before',
    });
    expect(JSON.stringify(patched.body)).not.toContain('rotated-secret');
    const [row] = await sql<{ client_secret_encrypted: string }>(
      'select client_secret_encrypted from provider_apps where id = $1',
      [created.body.id],
    );
    expect(decryptSecret(row.client_secret_encrypted)).toBe('rotated-secret');
  });

  it('refuses to change the provider, unknown mask fields, and masked fields left out', async () => {
    const created = await create(valid);
    const path = `${base}/${created.body.id}`;
    const provider = await stack.api('PATCH', path, {
      body: { updateMask: ['provider'], providerApp: { provider: 'hubspot' } },
    });
    expect(provider.status).toBe(400);
    expect(provider.body.issues[0]).toMatchObject({ name: 'updateMask', value: 'provider' });
    const missing = await stack.api('PATCH', path, {
      body: { updateMask: ['externalRef'], providerApp: {} },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].name).toBe('providerApp.externalRef');
    const emptyMask = await stack.api('PATCH', path, { body: { updateMask: [], providerApp: {} } });
    expect(emptyMask.status).toBe(400);
    expect((await stack.api('GET', path)).body).toEqual(created.body);
  });

  it('deletes (204), after which the app is gone', async () => {
    const created = await create(valid);
    const path = `${base}/${created.body.id}`;
    expect((await stack.api('DELETE', path)).status).toBe(204);
    expect((await stack.api('GET', path)).status).toBe(404);
    expect((await stack.api('DELETE', path)).status).toBe(404);
  });

  it('refuses to delete an app a connection refreshes its tokens with (409)', async () => {
    const app = await create(valid);
    const connection = await stack.api('POST', `/projects/${stack.project.name}/connections:generate`, {
      body: {
        provider: 'sandbox',
        groupRef: 'uses-app',
        consumerRef: 'c',
        oauth2AuthorizationCode: { accessToken: 'imported-access', refreshToken: 'imported-refresh' },
      },
    });
    expect(connection.status).toBe(201);
    const defaultApp = connection.body.providerApp.id;
    const refused = await stack.api('DELETE', `${base}/${defaultApp}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/used by 1 connection \(of group ".+"\)/);
    expect(
      (await stack.api('DELETE', `/projects/${stack.project.name}/connections/${connection.body.id}`)).status,
    ).toBe(204);
    expect((await stack.api('DELETE', `${base}/${defaultApp}`)).status).toBe(204);
    expect(app.status).toBe(200);
  });

  it('hides other projects’ apps behind 404 and needs credentials', async () => {
    const created = await create(valid);
    const otherKey = { apiKey: other.apiKey };
    expect((await request('GET', `${stack.urls.api}${base}/${created.body.id}`, otherKey)).status).toBe(404);
    expect(
      (
        await request(
          'GET',
          `${stack.urls.api}/projects/${other.name}/provider-apps/${created.body.id}`,
          otherKey,
        )
      ).status,
    ).toBe(404);
    expect((await stack.api('GET', `${base}/not-a-uuid`)).status).toBe(404);
    expect((await request('GET', `${stack.urls.api}${base}`)).status).toBe(401);
  });
});
