import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { em as newEntityManager } from '../../src/db/orm.js';
import { DestinationEntity } from '../../src/db/entities/operation.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';

let stack: TestStack;
let base: string;

beforeAll(async () => {
  stack = await startTestStack();
  base = `/projects/${stack.project.id}/destinations`;
});

afterAll(() => stack?.close());

let counter = 0;
const uniqueName = () => `hook-${Date.now().toString(36)}-${counter++}`;

function create(body: Record<string, unknown>) {
  return stack.api('POST', base, { body });
}

function webhook(name = uniqueName(), extra: Record<string, unknown> = {}) {
  return { name, type: 'webhook', metadata: { url: 'http://127.0.0.1:9/hook', ...extra } };
}

describe('POST /projects/{p}/destinations', () => {
  it('creates a webhook destination with a generated signing secret, shown only on request', async () => {
    const name = uniqueName();
    const created = await create(webhook(name, { headers: { Authorization: 'Bearer s3cret' } }));
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      projectId: stack.project.id,
      name,
      type: 'webhook',
      metadata: { url: 'http://127.0.0.1:9/hook', headers: { Authorization: '<redacted>' } },
      disabled: false,
      createTime: expect.any(String),
      updateTime: expect.any(String),
    });
    const plain = await stack.api('GET', `${base}/${name}`);
    expect(plain.body.secrets).toBeUndefined();
    expect(plain.body.metadata.headers).toEqual({ Authorization: '<redacted>' });
    const withSecrets = await stack.api('GET', `${base}/${created.body.id}?includeSecrets=true`);
    expect(withSecrets.status).toBe(200);
    expect(withSecrets.body.secrets.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    // The public API's name for the same secret.
    expect(withSecrets.body.secrets.webhookSigningKey).toBe(withSecrets.body.secrets.signingSecret);
    expect(withSecrets.body.metadata.headers).toEqual({ Authorization: 'Bearer s3cret' });
  });

  it('takes the signing secret by the public API’s name, webhookSigningKey, but not by both names', async () => {
    const webhookSigningKey = generateSigningSecret();
    const created = await create({ ...webhook(uniqueName()), secrets: { webhookSigningKey } });
    expect(created.status).toBe(201);
    const fetched = await stack.api('GET', `${base}/${created.body.id}?includeSecrets=true`);
    expect(fetched.body.secrets).toEqual({ signingSecret: webhookSigningKey, webhookSigningKey });
    const bad = await create({ ...webhook(uniqueName()), secrets: { webhookSigningKey: 'not-a-secret' } });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].name).toBe('secrets.webhookSigningKey');
    const both = await create({
      ...webhook(uniqueName()),
      secrets: { webhookSigningKey, signingSecret: generateSigningSecret() },
    });
    expect(both.status).toBe(400);
  });

  it('keeps the signing secret and header values encrypted at rest', async () => {
    const signingSecret = generateSigningSecret();
    const created = await create({
      ...webhook(uniqueName(), { headers: { 'X-Token': 'header-value-1234' } }),
      secrets: { signingSecret },
    });
    expect(created.status).toBe(201);
    const row = await (await newEntityManager()).findOneOrFail(DestinationEntity, { id: created.body.id });
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(signingSecret.slice(6));
    expect(stored).not.toContain('header-value-1234');
  });

  it('refuses a name used twice in the project with 409, but not in another project', async () => {
    const name = uniqueName();
    expect((await create(webhook(name))).status).toBe(201);
    const again = await create(webhook(name));
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toContain('application/problem+json');
    expect(again.body.detail).toContain(name);
    const other = await createTestProject();
    const elsewhere = await request('POST', `${stack.urls.api}/projects/${other.id}/destinations`, {
      apiKey: other.apiKey,
      body: webhook(name),
    });
    expect(elsewhere.status).toBe(201);
  });

  it('refuses a host that does not resolve, naming metadata.url', async () => {
    const response = await create({
      name: uniqueName(),
      type: 'webhook',
      metadata: { url: 'https://no-such-host.invalid/hook' },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues).toMatchObject([
      expect.objectContaining({
        in: 'body',
        name: 'metadata.url',
        detail: expect.stringContaining('could not be resolved'),
      }),
    ]);
  });

  it.each([
    ['ftp://example.com/hook', 'http or https'],
    ['https://user:pass@example.com/hook', 'user name or password'],
    ['not a url', 'not a valid absolute URL'],
  ])('refuses %s', async (url, detail) => {
    const response = await create({ name: uniqueName(), type: 'webhook', metadata: { url } });
    expect(response.status).toBe(400);
    expect(response.body.issues[0]).toMatchObject({
      name: 'metadata.url',
      detail: expect.stringContaining(detail),
    });
  });

  it('refuses reserved or malformed headers and a malformed signing secret', async () => {
    const response = await create({
      ...webhook(uniqueName(), { headers: { 'webhook-id': 'x', 'Bad Header': 'y' } }),
      secrets: { signingSecret: 'not-a-secret' },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: any) => issue.name).sort()).toEqual([
      'metadata.headers.Bad Header',
      'metadata.headers.webhook-id',
      'secrets.signingSecret',
    ]);
  });

  it('validates the body shape', async () => {
    const response = await create({ name: '', type: 'email', metadata: {} });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: any) => issue.name)).toEqual(
      expect.arrayContaining(['name', 'type']),
    );
    // The type decides what metadata needs: a webhook's URL.
    const noUrl = await create({ name: uniqueName(), type: 'webhook', metadata: {} });
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.issues.map((issue: any) => issue.name)).toEqual(['metadata.url']);
  });

  describe('with private destinations not allowed', () => {
    beforeAll(() => {
      process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = 'false';
      resetConfig();
    });
    afterEach(() => undefined);
    afterAll(() => {
      process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = 'true';
      resetConfig();
    });

    it.each([
      ['http://127.0.0.1:8080/hook', 'loopback'],
      ['http://10.1.2.3/hook', 'private'],
      ['http://169.254.169.254/latest/meta-data', 'link-local'],
      ['http://[::1]/hook', 'loopback'],
      ['http://localhost:8080/hook', 'loopback'],
    ])('refuses %s (%s)', async (url, reason) => {
      const response = await create({ name: uniqueName(), type: 'webhook', metadata: { url } });
      expect(response.status).toBe(400);
      expect(response.body.issues[0]).toMatchObject({
        in: 'body',
        name: 'metadata.url',
        detail: expect.stringContaining(reason),
      });
    });

    it('refuses a private URL on update too', async () => {
      process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = 'true';
      resetConfig();
      const name = uniqueName();
      expect((await create(webhook(name))).status).toBe(201);
      process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = 'false';
      resetConfig();
      const response = await stack.api('PATCH', `${base}/${name}`, {
        body: { updateMask: ['metadata.url'], destination: { metadata: { url: 'http://192.168.1.1/x' } } },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0].name).toBe('destination.metadata.url');
    });
  });
});

describe('GET /projects/{p}/destinations', () => {
  it('lists the project’s destinations without secrets', async () => {
    const name = uniqueName();
    await create(webhook(name));
    const list = await stack.api('GET', base);
    expect(list.status).toBe(200);
    const mine = list.body.find((destination: any) => destination.name === name);
    expect(mine).toBeDefined();
    expect(list.body.every((destination: any) => destination.secrets === undefined)).toBe(true);
  });

  it('answers 404 for an unknown destination, and for one of another project', async () => {
    expect((await stack.api('GET', `${base}/nope-${uniqueName()}`)).status).toBe(404);
    const other = await createTestProject();
    const theirs = await request('POST', `${stack.urls.api}/projects/${other.id}/destinations`, {
      apiKey: other.apiKey,
      body: webhook(),
    });
    const leak = await stack.api('GET', `${base}/${theirs.body.id}`);
    expect(leak.status).toBe(404);
  });

  it('validates includeSecrets and rotate', async () => {
    const name = uniqueName();
    await create(webhook(name));
    const response = await stack.api('GET', `${base}/${name}?includeSecrets=maybe`);
    expect(response.status).toBe(400);
    expect(response.body.issues[0]).toMatchObject({ in: 'query', name: 'includeSecrets' });
  });
});

describe('rotating the signing secret', () => {
  it('issues a new secret and keeps the old one valid for the grace period', async () => {
    const name = uniqueName();
    const created = await create(webhook(name));
    const before = await stack.api('GET', `${base}/${name}?includeSecrets=true`);
    const rotated = await stack.api('GET', `${base}/${name}?rotate=true`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secrets.signingSecret).toMatch(/^whsec_/);
    expect(rotated.body.secrets.signingSecret).not.toBe(before.body.secrets.signingSecret);
    const after = await stack.api('GET', `${base}/${name}?includeSecrets=true`);
    expect(after.body.secrets.signingSecret).toBe(rotated.body.secrets.signingSecret);

    const { openSecrets, validSigningSecrets } = await import('../../src/domain/destinations.js');
    const row = await (await newEntityManager()).findOneOrFail(DestinationEntity, { id: created.body.id });
    const secrets = openSecrets(row);
    expect(validSigningSecrets(secrets, new Date())).toEqual([
      rotated.body.secrets.signingSecret,
      before.body.secrets.signingSecret,
    ]);
    expect(validSigningSecrets(secrets, new Date(Date.now() + 25 * 3600 * 1000))).toEqual([
      rotated.body.secrets.signingSecret,
    ]);
  });
});

describe('PATCH /projects/{p}/destinations/{nameOrId}', () => {
  it('changes the fields named in updateMask only', async () => {
    const name = uniqueName();
    const created = await create(webhook(name, { headers: { 'X-A': '1' } }));
    const renamed = uniqueName();
    const response = await stack.api('PATCH', `${base}/${created.body.id}`, {
      body: {
        updateMask: ['name', 'metadata.headers'],
        destination: { name: renamed, metadata: { url: 'http://ignored.example/', headers: { 'X-B': '2' } } },
      },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: renamed,
      metadata: { url: 'http://127.0.0.1:9/hook', headers: { 'X-B': '<redacted>' } },
    });
    const secrets = await stack.api('GET', `${base}/${renamed}?includeSecrets=true`);
    expect(secrets.body.metadata.headers).toEqual({ 'X-B': '2' });
  });

  it('re-enables a disabled destination and forgets its failures', async () => {
    const created = await create(webhook());
    const em = await newEntityManager();
    const row = await em.findOneOrFail(DestinationEntity, { id: created.body.id });
    row.disabledTime = new Date();
    row.firstFailureTime = new Date(Date.now() - 1000);
    await em.flush();
    expect((await stack.api('GET', `${base}/${created.body.id}`)).body.disabled).toBe(true);
    const response = await stack.api('PATCH', `${base}/${created.body.id}`, {
      body: { updateMask: ['disabled'], destination: { disabled: false } },
    });
    expect(response.status).toBe(200);
    expect(response.body.disabled).toBe(false);
    const after = await (await newEntityManager()).findOneOrFail(DestinationEntity, { id: created.body.id });
    expect(after.firstFailureTime).toBeNull();
  });

  it.each(['signingSecret', 'webhookSigningKey'])(
    'replaces the signing secret named secrets.%s, and refuses a malformed one',
    async (field) => {
      const created = await create(webhook());
      const replacement = generateSigningSecret();
      const response = await stack.api('PATCH', `${base}/${created.body.id}`, {
        body: { updateMask: [`secrets.${field}`], destination: { secrets: { [field]: replacement } } },
      });
      expect(response.status).toBe(200);
      expect(JSON.stringify(response.body)).not.toContain(replacement.slice(6));
      const fetched = await stack.api('GET', `${base}/${created.body.id}?includeSecrets=true`);
      expect(fetched.body.secrets).toEqual({ signingSecret: replacement, webhookSigningKey: replacement });

      const malformed = await stack.api('PATCH', `${base}/${created.body.id}`, {
        body: { updateMask: [`secrets.${field}`], destination: { secrets: { [field]: 'whsec_short' } } },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.issues).toEqual([
        expect.objectContaining({ name: `destination.secrets.${field}` }),
      ]);
      expect(JSON.stringify(malformed.body)).not.toContain('whsec_short');
      const unchanged = await stack.api('GET', `${base}/${created.body.id}?includeSecrets=true`);
      expect(unchanged.body.secrets.signingSecret).toBe(replacement);
    },
  );

  it('refuses both names of the signing secret in one update', async () => {
    const created = await create(webhook());
    const response = await stack.api('PATCH', `${base}/${created.body.id}`, {
      body: {
        updateMask: ['secrets.signingSecret', 'secrets.webhookSigningKey'],
        destination: {
          secrets: { signingSecret: generateSigningSecret(), webhookSigningKey: generateSigningSecret() },
        },
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0]).toMatchObject({ name: 'updateMask', value: 'secrets.webhookSigningKey' });
  });

  it('refuses unknown mask fields, missing values and a taken name', async () => {
    const first = uniqueName();
    const second = uniqueName();
    await create(webhook(first));
    await create(webhook(second));
    const unknown = await stack.api('PATCH', `${base}/${first}`, {
      body: { updateMask: ['type'], destination: {} },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0]).toMatchObject({ name: 'updateMask', value: 'type' });
    const missing = await stack.api('PATCH', `${base}/${first}`, {
      body: { updateMask: ['name'], destination: {} },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].name).toBe('destination.name');
    const taken = await stack.api('PATCH', `${base}/${first}`, {
      body: { updateMask: ['name'], destination: { name: second } },
    });
    expect(taken.status).toBe(409);
    const notFound = await stack.api('PATCH', `${base}/nope-${uniqueName()}`, {
      body: { updateMask: ['name'], destination: { name: uniqueName() } },
    });
    expect(notFound.status).toBe(404);
  });
});

describe('DELETE /projects/{p}/destinations/{nameOrId}', () => {
  it('deletes, then answers 404', async () => {
    const name = uniqueName();
    await create(webhook(name));
    const deleted = await stack.api('DELETE', `${base}/${name}`);
    expect(deleted.status).toBe(204);
    expect((await stack.api('GET', `${base}/${name}`)).status).toBe(404);
    expect((await stack.api('DELETE', `${base}/${name}`)).status).toBe(404);
  });
});
