import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { resetConfig } from '../../src/config.js';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';
import { PublicApi } from '../support/public-api.js';
import { projectJwtMinter } from '../support/project-jwt.js';

let stack: TestStack;
let base: string;

const rsa = (modulusLength: number) => generateKeyPairSync('rsa', { modulusLength });
let signing: { publicKey: KeyObject; privateKey: KeyObject };
let stranger: { publicKey: KeyObject; privateKey: KeyObject };

const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();

beforeAll(async () => {
  stack = await startTestStack();
  base = `/projects/${stack.project.name}/jwt-keys`;
  signing = rsa(2048);
  stranger = rsa(2048);
});
afterAll(async () => stack.close());

async function createKey(publicKeyPem = pem(signing.publicKey), label = 'backend') {
  const created = await stack.api('POST', base, { body: { label, algorithm: 'RSA', publicKeyPem } });
  expect(created.status).toBe(201);
  return created.body;
}

function expectPemIssue(response: { status: number; body: any }, detail: RegExp) {
  expect(response.status).toBe(400);
  expect(response.body.title).toBe('Bad Request');
  expect(response.body.issues).toMatchObject([
    expect.objectContaining({ in: 'body', name: 'publicKeyPem', detail: expect.stringMatching(detail) }),
  ]);
}

const now = () => Math.floor(Date.now() / 1000);

/** A token as a builder's backend would mint it. */
async function mint(
  keyId: string,
  options: {
    privateKey?: KeyObject;
    expiresAt?: number | null;
    /** `iat`; null leaves it out. */
    issuedAt?: number | null;
    subject?: string;
    alg?: string;
    claims?: Record<string, unknown>;
  } = {},
) {
  const jwt = new SignJWT({ scope: 'ui', ...options.claims })
    .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: keyId })
    .setSubject(options.subject ?? 'consumer-42');
  if (options.issuedAt !== null) jwt.setIssuedAt(options.issuedAt ?? now());
  if (options.expiresAt !== null) jwt.setExpirationTime(options.expiresAt ?? now() + 300);
  return jwt.sign(options.privateKey ?? signing.privateKey);
}

const withBearer = (token: string, path = `/projects/${stack.project.id}/integrations`) =>
  request('GET', `${stack.urls.api}${path}`, { bearer: token });

describe('JWT keys', () => {
  it('creates, lists, gets, updates and deletes a key', async () => {
    const { kid, ...key } = await createKey();
    // The create answers `kid` too, as the public API does: the header tokens name the key by.
    expect(kid).toBe(key.id);
    expect(key).toMatchObject({
      projectId: stack.project.id,
      label: 'backend',
      algorithm: 'RSA',
      active: true,
      publicKeyPem: pem(signing.publicKey),
    });
    expect((await stack.api('GET', `${base}/${key.id}`)).body).toEqual(key);

    const patched = await stack.api('PATCH', `${base}/${key.id}`, {
      body: { updateMask: ['label', 'active'], jwtKey: { label: 'old backend', active: false } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ label: 'old backend', active: false });

    const other = await createKey(pem(stranger.publicKey), 'other');
    const all = await stack.api('GET', base);
    expect(all.body.map((listed: any) => listed.id)).toEqual(expect.arrayContaining([key.id, other.id]));
    const explicitAll = await stack.api('GET', `${base}?active=false`);
    expect(explicitAll.body).toHaveLength(all.body.length);
    const active = await stack.api('GET', `${base}?active=true`);
    expect(active.body.map((listed: any) => listed.id)).toContain(other.id);
    expect(active.body.map((listed: any) => listed.id)).not.toContain(key.id);

    expect((await stack.api('DELETE', `${base}/${key.id}`)).status).toBe(204);
    expect((await stack.api('GET', `${base}/${key.id}`)).status).toBe(404);
    expect((await stack.api('DELETE', `${base}/${key.id}`)).status).toBe(404);
  });

  it('takes algorithm RS256, the public request’s only value, as RSA, and answers it as the public document declares', async () => {
    const created = await stack.api('POST', base, {
      body: { label: 'public client', algorithm: 'RS256', publicKeyPem: pem(signing.publicKey) },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kid: created.body.id, algorithm: 'RSA' });
    const publicApi = new PublicApi();
    expect(publicApi.checkResponse('api', 'POST', base, created)).toEqual([]);
    const got = await stack.api('GET', `${base}/${created.body.id}`);
    expect(publicApi.checkResponse('api', 'GET', `${base}/${created.body.id}`, got)).toEqual([]);
    expect((await withBearer(await mint(created.body.id))).status).toBe(200);
  });

  it('accepts only RSA public keys of at least 2048 bits', async () => {
    const post = (publicKeyPem: string, algorithm = 'RSA') =>
      stack.api('POST', base, { body: { label: 'x', algorithm, publicKeyPem } });
    expectPemIssue(await post('not a key'), /not a PEM-encoded public key/);
    expectPemIssue(
      await post('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n'),
      /not a PEM-encoded public key/,
    );
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expectPemIssue(await post(pem(ec.publicKey)), /must be an RSA key; this is an ec key/);
    expectPemIssue(await post(pem(rsa(1024).publicKey)), /at least 2048 bits; this key has 1024/);
    const privatePem = signing.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const leaked = await post(privatePem);
    expectPemIssue(leaked, /is a private key/);
    expect(JSON.stringify(leaked.body)).not.toContain(privatePem.split('\n')[1]);

    const wrongAlgorithm = await post(pem(signing.publicKey), 'EC');
    expect(wrongAlgorithm.status).toBe(400);
    expect(wrongAlgorithm.body.issues[0]).toMatchObject({ in: 'body', name: 'algorithm' });
    const noLabel = await stack.api('POST', base, {
      body: { algorithm: 'RSA', publicKeyPem: pem(signing.publicKey) },
    });
    expect(noLabel.body.issues).toMatchObject([expect.objectContaining({ name: 'label' })]);
    // PKCS#1 ("BEGIN RSA PUBLIC KEY") is an RSA public key too.
    const pkcs1 = signing.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    expect((await post(pkcs1)).status).toBe(201);
  });

  it('answers a missing key or another project’s key with 404 Not Found and a remedy', async () => {
    for (const keyId of [randomUUID(), 'not-a-uuid']) {
      const missing = await stack.api('GET', `${base}/${keyId}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ title: 'Not Found', status: 404 });
      expect(missing.body.remedy).toMatch(/key ID.*project ID/);
    }
    const other = await createTestProject();
    const foreign = await request('POST', `${stack.urls.api}/projects/${other.id}/jwt-keys`, {
      apiKey: other.apiKey,
      body: { label: 'theirs', algorithm: 'RSA', publicKeyPem: pem(stranger.publicKey) },
    });
    expect(foreign.status).toBe(201);
    expect(foreign.body.kid).toBe(foreign.body.id);
    const wrongProject = await stack.api('GET', `${base}/${foreign.body.id}`);
    expect(wrongProject.status).toBe(404);
    expect(wrongProject.body.remedy).toMatch(/key ID.*project ID/);
    // A project ID that is wrong (unknown, or another project's), on every JWT key endpoint.
    for (const project of ['no-such-project', other.id]) {
      for (const path of [
        `/projects/${project}/jwt-keys`,
        `/projects/${project}/jwt-keys/${foreign.body.id}`,
      ]) {
        const response = await stack.api('GET', path);
        expect(response.status).toBe(404);
        expect(response.body).toMatchObject({
          title: 'Not Found',
          remedy: expect.stringMatching(/project ID/),
        });
      }
    }
    expect(
      (
        await stack.api('PATCH', `${base}/${foreign.body.id}`, {
          body: { updateMask: ['active'], jwtKey: { active: false } },
        })
      ).status,
    ).toBe(404);
    expect((await stack.api('DELETE', `${base}/${foreign.body.id}`)).status).toBe(404);
  });

  it('validates updates and needs an API key', async () => {
    const key = await createKey();
    const readOnly = await stack.api('PATCH', `${base}/${key.id}`, {
      body: { updateMask: ['publicKeyPem'], jwtKey: {} },
    });
    expect(readOnly.status).toBe(400);
    expect(readOnly.body.issues[0]).toMatchObject({ name: 'updateMask', value: 'publicKeyPem' });
    const notAllowed = await stack.api('PATCH', `${base}/${key.id}`, {
      body: { updateMask: ['label'], jwtKey: { publicKeyPem: 'x' } },
    });
    expect(notAllowed.status).toBe(400);
    expect((await request('GET', `${stack.urls.api}${base}`)).status).toBe(401);
    // The spec lists only X-Api-Key for these endpoints.
    const viaJwt = await withBearer(await mint(key.id), base);
    expect(viaJwt.status).toBe(401);
    expect(viaJwt.body.detail).toMatch(/X-Api-Key/);
  });
});

describe('project bearer tokens signed with a JWT key', () => {
  it('are accepted on the key’s project and nowhere else', async () => {
    const key = await createKey();
    const token = await mint(key.id);
    const accepted = await withBearer(token);
    expect(accepted.status).toBe(200);
    const byName = await withBearer(token, `/projects/${stack.project.name}/notification-event-topic-routes`);
    expect(byName.status).toBe(200);
    const other = await createTestProject();
    const elsewhere = await withBearer(token, `/projects/${other.id}/integrations`);
    expect(elsewhere.status).toBe(404);
  });

  it('tolerate 60 seconds of clock skew', async () => {
    const key = await createKey();
    const justExpired = await mint(key.id, { expiresAt: Math.floor(Date.now() / 1000) - 30 });
    expect((await withBearer(justExpired)).status).toBe(200);
  });

  it('are refused with 401 and a clear reason when expired, unsigned by the key, unknown or inactive', async () => {
    const key = await createKey();
    const refusal = async (token: string, detail: RegExp) => {
      const response = await withBearer(token);
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(response.body).toMatchObject({ title: 'Unauthorized', detail: expect.stringMatching(detail) });
    };
    await refusal(await mint(key.id, { expiresAt: Math.floor(Date.now() / 1000) - 120 }), /expired/);
    await refusal(await mint(key.id, { expiresAt: null }), /"exp"/);
    await refusal(await mint(key.id, { privateKey: stranger.privateKey }), /signature does not match/);
    await refusal(await mint(randomUUID()), /names no JWT key/);
    await refusal(await mint('my-key'), /names no JWT key/);
    const noKid = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setExpirationTime('5m')
      .sign(signing.privateKey);
    await refusal(noKid, /no "kid"/);
    await refusal(await mint(key.id, { alg: 'RS512' }), /bearer token is not valid/);

    await stack.api('PATCH', `${base}/${key.id}`, {
      body: { updateMask: ['active'], jwtKey: { active: false } },
    });
    await refusal(await mint(key.id), /inactive/);
    await stack.api('PATCH', `${base}/${key.id}`, {
      body: { updateMask: ['active'], jwtKey: { active: true } },
    });
    expect((await withBearer(await mint(key.id))).status).toBe(200);
    await stack.api('DELETE', `${base}/${key.id}`);
    await refusal(await mint(key.id), /names no JWT key/);
  });

  it('are refused when valid for longer than allowed: 24 hours for one group, 1 hour for the whole project', async () => {
    const key = await createKey();
    const hours = (count: number) => count * 3600;
    const status = async (options: Parameters<typeof mint>[1]) => {
      const response = await withBearer(await mint(key.id, options));
      return { status: response.status, detail: response.body?.detail };
    };
    const group = { groupRef: 'acme' };
    expect((await status({ claims: group, expiresAt: now() + hours(23) })).status).toBe(200);
    expect(await status({ claims: group, expiresAt: now() + hours(25) })).toEqual({
      status: 401,
      detail: expect.stringMatching(
        /valid for 90000 seconds, from its "iat".*for one group .* at most 86400 seconds \(FERRY_GROUP_JWT_MAX_LIFETIME_SECONDS\)/,
      ),
    });
    expect((await status({ expiresAt: now() + hours(1) - 60 })).status).toBe(200);
    expect(await status({ expiresAt: now() + hours(2) })).toEqual({
      status: 401,
      detail: expect.stringMatching(
        /for the whole project .* at most 3600 seconds \(FERRY_PROJECT_JWT_MAX_LIFETIME_SECONDS\)/,
      ),
    });
    // Ten years, as the outside probe sent: refused for a group and for the project alike.
    for (const claims of [group, {}]) {
      expect((await status({ claims, expiresAt: now() + hours(24 * 3650) })).status).toBe(401);
    }
    // Without "iat" the lifetime runs from now; an "iat" in the future does not shorten it.
    expect(await status({ issuedAt: null, expiresAt: now() + hours(2) })).toEqual({
      status: 401,
      detail: expect.stringMatching(/from now \(it has no "iat"\)/),
    });
    const later = now() + hours(24 * 365);
    expect((await status({ issuedAt: later, expiresAt: later + 600 })).status).toBe(401);
    // An "iat" in the past counts: a token issued 23 hours ago for 2 more hours lived 25.
    expect(
      (await status({ claims: group, issuedAt: now() - hours(23), expiresAt: now() + hours(2) })).status,
    ).toBe(401);
  });

  it('live as long as FERRY_PROJECT_JWT_MAX_LIFETIME_SECONDS and FERRY_GROUP_JWT_MAX_LIFETIME_SECONDS allow', async () => {
    const key = await createKey();
    const twoHours = await mint(key.id, { expiresAt: now() + 7200 });
    const groupTwoHours = await mint(key.id, { claims: { groupRef: 'acme' }, expiresAt: now() + 7200 });
    process.env.FERRY_PROJECT_JWT_MAX_LIFETIME_SECONDS = '10800';
    process.env.FERRY_GROUP_JWT_MAX_LIFETIME_SECONDS = '600';
    resetConfig();
    try {
      expect((await withBearer(twoHours)).status).toBe(200);
      const refused = await withBearer(groupTwoHours);
      expect(refused.status).toBe(401);
      expect(refused.body.detail).toMatch(/at most 600 seconds/);
    } finally {
      delete process.env.FERRY_PROJECT_JWT_MAX_LIFETIME_SECONDS;
      delete process.env.FERRY_GROUP_JWT_MAX_LIFETIME_SECONDS;
      resetConfig();
    }
    expect((await withBearer(groupTwoHours)).status).toBe(200);
  });

  it('must carry the audience and issuer their key requires, each refusal saying which', async () => {
    const created = await stack.api('POST', base, {
      body: {
        label: 'checked',
        algorithm: 'RSA',
        publicKeyPem: pem(signing.publicKey),
        audience: 'https://app.example.com',
        issuer: 'acme-backend',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ audience: 'https://app.example.com', issuer: 'acme-backend' });
    const key = created.body;
    const detail = async (claims: Record<string, unknown>) => {
      const response = await withBearer(await mint(key.id, { claims }));
      return response.status === 200 ? 200 : response.body.detail;
    };
    const right = { aud: 'https://app.example.com', iss: 'acme-backend' };
    expect(await detail(right)).toBe(200);
    expect(await detail({ ...right, aud: ['other', 'https://app.example.com'] })).toBe(200);
    expect(await detail({ iss: right.iss })).toMatch(
      /"aud" claim is missing: .* only tokens for "https:\/\/app\.example\.com"/,
    );
    expect(await detail({ ...right, aud: 'https://evil.example.com' })).toMatch(
      /"aud" claim does not name this key’s audience/,
    );
    expect(await detail({ aud: right.aud })).toMatch(/"iss" claim is missing: .* issued by "acme-backend"/);
    expect(await detail({ ...right, iss: 'someone-else' })).toMatch(/"iss" claim is not this key’s issuer/);

    const patched = await stack.api('PATCH', `${base}/${key.id}`, {
      body: { updateMask: ['audience', 'issuer'], jwtKey: { audience: null, issuer: 'acme-2' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.audience).toBeUndefined();
    expect(patched.body.issuer).toBe('acme-2');
    expect((await stack.api('GET', `${base}/${key.id}`)).body).toEqual(patched.body);
    expect(await detail({ iss: 'acme-2' })).toBe(200);
    expect(await detail(right)).toMatch(/"iss" claim is not this key’s issuer/);
    // A key that requires neither takes tokens whatever their audience and issuer.
    const plain = await createKey();
    expect((await withBearer(await mint(plain.id, { claims: { aud: 'x', iss: 'y' } }))).status).toBe(200);
    expect(plain.audience).toBeUndefined();
  });

  it('refuses an empty audience or issuer on a key', async () => {
    for (const field of ['audience', 'issuer']) {
      const response = await stack.api('POST', base, {
        body: { label: 'x', algorithm: 'RSA', publicKeyPem: pem(signing.publicKey), [field]: '' },
      });
      expect([field, response.status, response.body.issues?.[0]]).toEqual([
        field,
        400,
        expect.objectContaining({
          name: field,
          detail: expect.not.stringMatching(/not an allowed property/),
        }),
      ]);
    }
  });

  it('do not open the org endpoints, which need a builder', async () => {
    const key = await createKey();
    const response = await request('GET', `${stack.urls.api}/orgs/${stack.project.orgId}/invites`, {
      bearer: await mint(key.id),
    });
    expect(response.status).toBe(403);
    expect(response.body.detail).toMatch(/builder/);
  });

  it('open only the endpoints where the spec lists Bearer or the React components call, never key or credential management', async () => {
    const key = await createKey();
    const token = await mint(key.id);
    const project = `/projects/${stack.project.id}`;
    for (const [method, path] of [
      ['GET', `${project}/api-keys`],
      ['POST', `${project}/api-keys`],
      ['GET', `${project}/connections/${randomUUID()}`],
      ['GET', `${project}/destinations`],
      ['GET', `${project}/topics`],
      ['PATCH', project],
    ]) {
      const response = await request(method, `${stack.urls.api}${path}`, {
        bearer: token,
        body: method === 'GET' ? undefined : {},
      });
      expect({ path, status: response.status }).toEqual({ path, status: 403 });
      expect(response.body.detail).toMatch(/does not accept project JWTs/);
    }
    expect((await withBearer(token, `${project}/integrations`)).status).toBe(200);
    expect((await withBearer(token, `${project}/notification-event-topic-routes`)).status).toBe(200);
    // What the public React components read (connections without credentials).
    expect((await withBearer(token, `${project}/connections`)).status).toBe(200);
  });

  it('minted for one group (a browser’s token), read the project but change nothing project-wide', async () => {
    const token = await (await projectJwtMinter(stack))({ groupRef: 'acme' });
    const project = `/projects/${stack.project.id}`;
    const send = (method: string, path: string, body?: unknown) =>
      request(method, `${stack.urls.api}${project}${path}`, { bearer: token, body });
    expect((await send('GET', '/integrations')).status).toBe(200);
    expect((await send('GET', '')).status).toBe(200);
    for (const [method, path, body] of [
      [
        'POST',
        '/integrations',
        {
          name: 'x',
          provider: 'sandboxApiKey',
          latestRevision: { specVersion: '1', content: { name: 'x', provider: 'sandboxApiKey' } },
        },
      ],
      [
        'PATCH',
        `/provider-apps/${randomUUID()}`,
        { updateMask: ['clientId'], providerApp: { clientId: 'c' } },
      ],
      [
        'POST',
        '/notification-event-topic-routes',
        { eventType: 'installation.created', topicId: randomUUID() },
      ],
    ] as const) {
      const refused = await send(method, path, body);
      expect({ path, status: refused.status }).toEqual({ path, status: 403 });
      expect(refused.body.detail).toMatch(/acts for group "acme" only/);
    }
    const otherGroup = await send('PUT', '/providers/sandboxApiKey/object-metadata', {
      groupRef: 'globex',
      fields: { contacts: [{ fieldName: 'tier', displayName: 'Tier', valueType: 'string' }] },
    });
    expect(otherGroup.status).toBe(403);
    expect(otherGroup.body.detail).toMatch(/acts for group "acme", not "globex"/);
  });
});
