import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { em as newEntityManager, transaction } from '../../src/db/orm.js';
import { authenticateApiKey } from '../../src/api/auth.js';
import { config } from '../../src/config.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';
import { OrgMembershipEntity } from '../../src/db/entities/org.js';
import { ApiKeyEntity } from '../../src/db/entities/project.js';
import { createApiKey, createOrg, createProject } from '../../src/domain/projects.js';
import { randomUUID } from 'node:crypto';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => stack.close());

describe('API keys', () => {
  it('shows a new key once, with a recognisable prefix, and it works at once', async () => {
    const created = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
      body: { label: 'ci' },
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^ferry_sk_/);
    expect(created.body.prefix).toBe(created.body.key.slice(0, created.body.prefix.length));
    const withNewKey = await request('GET', `${stack.urls.api}/projects/${stack.project.name}`, {
      apiKey: created.body.key,
    });
    expect(withNewKey.status).toBe(200);
    const listed = await stack.api('GET', `/projects/${stack.project.name}/api-keys`);
    expect(listed.body.map((key: { label: string }) => key.label)).toContain('ci');
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
  });

  it('stores only the hash of a key', async () => {
    const created = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
      body: { label: 'hash-check' },
    });
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    const rows = await client.query('select * from api_keys');
    await client.end();
    expect(JSON.stringify(rows.rows)).not.toContain(created.body.key);
  });

  it('deactivates and deletes keys; a deactivated key is refused', async () => {
    const created = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
      body: { label: 'temp' },
    });
    const path = `/projects/${stack.project.name}/api-keys/${created.body.id}`;
    const patched = await stack.api('PATCH', path, {
      body: { updateMask: ['active'], apiKey: { active: false } },
    });
    expect(patched.body.active).toBe(false);
    expect(
      (await request('GET', `${stack.urls.api}/projects/${stack.project.name}`, { apiKey: created.body.key }))
        .status,
    ).toBe(401);
    expect((await stack.api('DELETE', path)).status).toBe(204);
    expect((await stack.api('GET', path)).status).toBe(404);
  });

  it('refuses a key at once once deactivated or deleted, even just after it was used', async () => {
    const project = `${stack.urls.api}/projects/${stack.project.name}`;
    for (const change of ['deactivate', 'delete'] as const) {
      const created = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
        body: { label: `busy-${change}` },
      });
      expect((await request('GET', project, { apiKey: created.body.key })).status).toBe(200);
      const path = `/projects/${stack.project.name}/api-keys/${created.body.id}`;
      const changed =
        change === 'delete'
          ? await stack.api('DELETE', path)
          : await stack.api('PATCH', path, { body: { updateMask: ['active'], apiKey: { active: false } } });
      expect(changed.status).toBeLessThan(300);
      const refused = await request('GET', project, { apiKey: created.body.key });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
  });

  it('looks a key up once for all the requests that arrive together with it', async () => {
    const created = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
      body: { label: 'burst' },
    });
    const em = await newEntityManager();
    const lookups = jest.spyOn(em, 'findOne');
    const principals = await Promise.all(
      Array.from({ length: 20 }, () => authenticateApiKey(created.body.key, em)),
    );
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(new Set(principals.map((principal) => JSON.stringify(principal))).size).toBe(1);
    expect(principals[0]).toMatchObject({ kind: 'apiKey', apiKeyId: created.body.id });
    // A wrong key is refused to every request that shares its lookup.
    const refused = await Promise.allSettled(
      Array.from({ length: 5 }, () => authenticateApiKey('ferry_sk_not_a_key', em)),
    );
    expect(refused.map((result) => result.status)).toEqual(Array(5).fill('rejected'));
    expect(lookups).toHaveBeenCalledTimes(2);
  });

  it('records when a key was last used', async () => {
    const created = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
      body: { label: 'used' },
    });
    expect(created.body.lastUsedTime).toBeUndefined();
    await request('GET', `${stack.urls.api}/projects/${stack.project.name}`, { apiKey: created.body.key });
    const fetched = await stack.api('GET', `/projects/${stack.project.name}/api-keys/${created.body.id}`);
    expect(Date.parse(fetched.body.lastUsedTime)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('takes the full and frontend scopes, and refuses others by name', async () => {
    for (const scopes of [['full'], ['frontend'], ['full', 'frontend']]) {
      const response = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
        body: { label: 'scoped', scopes },
      });
      expect(response.status).toBe(201);
      expect(response.body.scopes).toEqual(scopes);
    }
    for (const scopes of [['read'], ['full', 'full'], [['full', 'frontend']]]) {
      const response = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, {
        body: { label: 's', scopes },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0].name).toMatch(/^scopes/);
    }
  });

  it('lets a frontend key reach what the embeddable components use, and nothing else', async () => {
    const project = stack.project.name;
    const created = await stack.api('POST', `/projects/${project}/api-keys`, {
      body: { label: 'browser', scopes: ['frontend'] },
    });
    const apiKey = created.body.key;
    // Meant to be seen in browser code: not the prefix secret scanners look for.
    expect(apiKey).toMatch(/^ferry_pk_/);
    expect(created.body.prefix).toBe(apiKey.slice(0, 15));
    const call = (base: string, method: string, path: string, body?: unknown) =>
      request(method, `${base}${path}`, { apiKey, ...(body !== undefined && { body }) });

    // What the components call: the project, its integrations, connections (without credentials).
    expect((await call(stack.urls.api, 'GET', `/projects/${project}`)).status).toBe(200);
    expect((await call(stack.urls.api, 'GET', `/projects/${project}/integrations`)).status).toBe(200);
    const generated = await call(stack.urls.api, 'POST', `/projects/${project}/connections:generate`, {
      provider: 'sandboxApiKey',
      groupRef: `frontend-${randomUUID().slice(0, 8)}`,
      consumerRef: 'someone',
      apiKey: 'sandbox-demo-key',
    });
    expect(generated.status).toBe(201);

    // Everything else is a 403 that says why, whatever the host.
    const refused = [
      await call(stack.urls.api, 'GET', `/projects/${project}/api-keys`),
      await call(stack.urls.api, 'POST', `/projects/${project}/api-keys`, { label: 'escalate' }),
      await call(
        stack.urls.api,
        'GET',
        `/projects/${project}/connections/${generated.body.id}?includeCreds=true`,
      ),
      await call(stack.urls.api, 'GET', `/projects/${project}/destinations`),
      // Routes a project JWT without a group may use, but that change the whole project.
      await call(stack.urls.api, 'POST', `/projects/${project}/integrations`, {
        name: 'from-the-browser',
        provider: 'sandboxApiKey',
        latestRevision: { specVersion: '1.0.0', content: { name: 'x', provider: 'sandboxApiKey' } },
      }),
      await call(stack.urls.api, 'PATCH', `/projects/${project}/provider-apps/${randomUUID()}`, {
        updateMask: ['clientId'],
        providerApp: { clientId: 'attacker-app' },
      }),
      await call(stack.urls.api, 'POST', `/projects/${project}/notification-event-topic-routes`, {
        eventType: 'installation.created',
        topicId: randomUUID(),
      }),
      // A group's route, but one that changes the customer's provider account.
      await call(stack.urls.api, 'PUT', `/projects/${project}/providers/sandboxApiKey/object-metadata`, {
        groupRef: 'g',
        fields: { contacts: [{ fieldName: 'tier', displayName: 'Tier', valueType: 'string' }] },
      }),
      await call(stack.urls.write, 'POST', `/projects/${project}/integrations/any/objects/contacts`, {
        groupRef: 'g',
        type: 'create',
        record: {},
      }),
    ];
    for (const response of refused) {
      expect(response.status).toBe(403);
      expect(response.body.detail).toMatch(/frontend scope/);
    }
    const proxied = await fetch(`${stack.urls.proxy}/anything`, {
      headers: {
        'x-amp-proxy-version': '1',
        'x-amp-project-id': stack.project.id,
        'x-api-key': apiKey,
        'x-amp-installation-id': randomUUID(),
      },
    });
    expect(proxied.status).toBe(403);
    expect(((await proxied.json()) as { detail: string }).detail).toMatch(/frontend scope/);

    // A key with both scopes is a full key.
    const both = await stack.api('POST', `/projects/${project}/api-keys`, {
      body: { label: 'both', scopes: ['full', 'frontend'] },
    });
    expect(both.body.key).toMatch(/^ferry_sk_/);
    expect(
      (await request('GET', `${stack.urls.api}/projects/${project}/api-keys`, { apiKey: both.body.key }))
        .status,
    ).toBe(200);
  });

  it('addresses a key by the key itself, as the public API does, and never echoes it whole', async () => {
    const keys = `/projects/${stack.project.name}/api-keys`;
    const created = await stack.api('POST', keys, { body: { label: 'by-value' } });
    const byValue = `${keys}/${created.body.key}`;
    expect((await stack.api('GET', byValue)).body).toMatchObject({ id: created.body.id, label: 'by-value' });
    const patched = await stack.api('PATCH', byValue, {
      body: { updateMask: ['active'], apiKey: { active: false } },
    });
    expect(patched.body).toMatchObject({ id: created.body.id, active: false });
    for (const active of [true, false]) {
      const listed: { id: string; active: boolean }[] = (await stack.api('GET', `${keys}?active=${active}`))
        .body;
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.every((key) => key.active === active)).toBe(true);
      expect(listed.some((key) => key.id === created.body.id)).toBe(!active);
    }
    expect((await stack.api('GET', `${keys}?active=maybe`)).status).toBe(400);

    // Lists show the key as its prefix and "...", which addresses it as the public API's clients expect.
    const listed = (await stack.api('GET', keys)).body.find(
      (key: { id: string }) => key.id === created.body.id,
    );
    expect(listed.key).toBe(`${created.body.prefix}...`);
    expect(JSON.stringify((await stack.api('GET', keys)).body)).not.toContain(created.body.key);
    const byShown = await stack.api('PATCH', `${keys}/${encodeURIComponent(listed.key)}`, {
      body: { updateMask: ['label'], apiKey: { label: 'renamed' } },
    });
    expect(byShown.body).toMatchObject({ id: created.body.id, label: 'renamed', key: listed.key });
    const asLogged = `${keys}/${encodeURIComponent(`${created.body.prefix}…`)}`;
    expect((await stack.api('GET', asLogged)).body.id).toBe(created.body.id);
    expect((await stack.api('GET', `${keys}/${created.body.prefix}xyz...`)).status).toBe(404);
    // Another project's key of the same prefix is no match; two of this project's are ambiguous.
    const twin = async (projectId: string) =>
      transaction(async (em) => {
        em.create(ApiKeyEntity, {
          id: randomUUID(),
          projectId,
          label: 'twin',
          prefix: created.body.prefix,
          keyHash: randomUUID(),
          scopes: [],
          active: true,
          createTime: new Date(),
          updateTime: new Date(),
        });
      });
    const elsewhere = await transaction((em) => createOrg(em, `twin-${randomUUID()}`));
    const otherProject = await transaction(async (em) => {
      const { createProject } = await import('../../src/domain/projects.js');
      return createProject(em, { name: `twin-${randomUUID().slice(0, 8)}`, orgId: elsewhere.id });
    });
    await twin(otherProject.id);
    expect((await stack.api('GET', `${keys}/${encodeURIComponent(listed.key)}`)).body.id).toBe(
      created.body.id,
    );
    await twin(stack.project.id);
    const ambiguous = await stack.api('GET', `${keys}/${encodeURIComponent(listed.key)}`);
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.detail).toMatch(/by its id/);

    expect((await stack.api('DELETE', byValue)).status).toBe(204);
    const gone = await stack.api('GET', byValue);
    expect(gone.status).toBe(404);
    expect(JSON.stringify(gone.body)).not.toContain(created.body.key);
    expect(gone.body.detail).toContain(created.body.key.slice(0, 12));
  });

  it('validates API key input', async () => {
    const noLabel = await stack.api('POST', `/projects/${stack.project.name}/api-keys`, { body: {} });
    expect(noLabel.status).toBe(400);
    expect(noLabel.body.issues).toMatchObject([expect.objectContaining({ in: 'body', name: 'label' })]);
    const badMask = await stack.api('PATCH', `/projects/${stack.project.name}/api-keys/${randomUUID()}`, {
      body: { updateMask: ['label'], apiKey: { label: 'x' } },
    });
    expect(badMask.status).toBe(404);
    const keys = await stack.api('GET', `/projects/${stack.project.name}/api-keys`);
    const readOnly = await stack.api('PATCH', `/projects/${stack.project.name}/api-keys/${keys.body[0].id}`, {
      body: { updateMask: ['prefix'], apiKey: {} },
    });
    expect(readOnly.status).toBe(400);
    expect(readOnly.body.issues[0]).toMatchObject({ name: 'updateMask', value: 'prefix' });
  });
});

describe('projects', () => {
  it('keeps a project name given outside the API (ferry projects create) in NFC, and finds it by either form', async () => {
    const suffix = randomUUID().slice(0, 6);
    const [composed, decomposed] = [`caf\u00e9-${suffix}`, `cafe\u0301-${suffix}`];
    const { project, key } = await transaction(async (em) => {
      const created = await createProject(em, {
        name: decomposed,
        orgId: (await createOrg(em, 'NFC org')).id,
      });
      return { project: created, key: createApiKey(em, created.id, { label: 'nfc' }).key };
    });
    expect(project.name).toBe(composed);
    for (const name of [composed, decomposed]) {
      const found = await request('GET', `${stack.urls.api}/projects/${encodeURIComponent(name)}`, {
        apiKey: key,
      });
      expect([name, found.status, found.body.id]).toEqual([name, 200, project.id]);
    }
    await expect(
      transaction(async (em) => createProject(em, { name: composed, orgId: project.orgId })),
    ).rejects.toMatchObject({ status: 409 });
  });

  it('lets a builder create projects in their org and nowhere else', async () => {
    const { token, orgId } = await transaction(async (em) => {
      const builder = await findOrCreateBuilder(em, `b-${randomUUID().slice(0, 6)}@example.com`);
      const org = await createOrg(em, 'Builder org');
      em.create(OrgMembershipEntity, {
        id: randomUUID(),
        orgId: org.id,
        builderId: builder.id,
        role: 'owner',
        createTime: new Date(),
        updateTime: new Date(),
      });
      return { token: await issueBuilderToken(builder, config().builderTokenSecret), orgId: org.id };
    });
    const name = `proj-${randomUUID().slice(0, 8)}`;
    const created = await request('POST', `${stack.urls.api}/projects`, {
      bearer: token,
      body: { name, appName: 'My App', orgId },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name, appName: 'My App', orgId });
    const duplicate = await request('POST', `${stack.urls.api}/projects`, {
      bearer: token,
      body: { name, orgId },
    });
    expect(duplicate.status).toBe(409);
    const foreignOrg = await request('POST', `${stack.urls.api}/projects`, {
      bearer: token,
      body: { name: `${name}-2`, orgId: stack.project.orgId },
    });
    expect(foreignOrg.status).toBe(404);
    const withKey = await stack.api('POST', '/projects', { body: { name: `${name}-3`, orgId } });
    expect(withKey.status).toBe(401);
    const listed = await request('GET', `${stack.urls.api}/projects`, { bearer: token });
    expect(listed.body.map((project: { name: string }) => project.name)).toEqual([name]);
    const otherProject = await request('GET', `${stack.urls.api}/projects/${stack.project.name}`, {
      bearer: token,
    });
    expect(otherProject.status).toBe(404);
  });

  it('renames a project through updateMask', async () => {
    const renamed = `renamed-${randomUUID().slice(0, 8)}`;
    const response = await stack.api('PATCH', `/projects/${stack.project.id}`, {
      body: { updateMask: ['appName'], project: { appName: renamed } },
    });
    expect(response.status).toBe(200);
    expect(response.body.appName).toBe(renamed);
    const invalid = await stack.api('PATCH', `/projects/${stack.project.id}`, {
      body: { updateMask: [], project: {} },
    });
    expect(invalid.status).toBe(400);
  });
});
