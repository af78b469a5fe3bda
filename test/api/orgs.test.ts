import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { transaction } from '../../src/db/orm.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => stack.close());

async function signIn(email = `builder-${randomUUID().slice(0, 8)}@example.com`) {
  return transaction(async (em) => issueBuilderToken(await findOrCreateBuilder(em, email)));
}

const api = (method: string, path: string, bearer?: string, body?: unknown) =>
  request(method, `${stack.urls.api}${path}`, { bearer, body });

describe('orgs', () => {
  it('lets a builder create an org they own, see it, and create projects in it', async () => {
    const token = await signIn();
    const created = await api('POST', '/orgs', token, { name: 'Acme' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.any(String), name: 'Acme', label: 'Acme' });
    expect((await api('GET', `/orgs/${created.body.id}`, token)).body).toEqual(created.body);
    expect((await api('GET', '/orgs', token)).body).toEqual([created.body]);

    const project = await api('POST', '/projects', token, {
      name: `acme-${randomUUID().slice(0, 8)}`,
      orgId: created.body.id,
    });
    expect(project.status).toBe(201);
    expect(project.body.orgId).toBe(created.body.id);
  });

  it('hides an org from builders who are not members behind 404', async () => {
    const owner = await signIn();
    const org = await api('POST', '/orgs', owner, { name: 'Private' });
    const outsider = await signIn();
    const hidden = await api('GET', `/orgs/${org.body.id}`, outsider);
    expect(hidden.status).toBe(404);
    expect(hidden.body.detail).toBe(`Org "${org.body.id}" was not found.`);
    expect((await api('GET', `/orgs/${randomUUID()}`, owner)).status).toBe(404);
    expect((await api('GET', '/orgs/not-a-uuid', owner)).status).toBe(404);
    expect((await api('GET', '/orgs', outsider)).body).toEqual([]);
  });

  it('needs a builder’s bearer token and a name', async () => {
    const withKey = await stack.api('POST', '/orgs', { body: { name: 'Keyed' } });
    expect(withKey.status).toBe(401);
    expect(withKey.body.detail).toMatch(/bearer token/);
    expect((await api('POST', '/orgs', undefined, { name: 'Anonymous' })).status).toBe(401);
    expect((await api('GET', `/orgs/${stack.project.orgId}`, 'not-a-token')).status).toBe(401);
    const token = await signIn();
    const noName = await api('POST', '/orgs', token, {});
    expect(noName.status).toBe(400);
    expect(noName.body.issues).toMatchObject([expect.objectContaining({ in: 'body', name: 'name' })]);
    const disagreeing = await api('POST', '/orgs', token, { name: 'One', label: 'Two' });
    expect(disagreeing.status).toBe(400);
    expect(disagreeing.body.issues).toMatchObject([expect.objectContaining({ in: 'body', name: 'name' })]);
    expect((await api('POST', '/orgs', token, { label: '' })).status).toBe(400);
  });

  it('takes the org’s name as `label`, as clients of the public API send it', async () => {
    const token = await signIn();
    const created = await api('POST', '/orgs', token, { label: 'Labelled' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Labelled', label: 'Labelled' });
    expect((await api('POST', '/orgs', token, { name: 'Both', label: 'Both' })).status).toBe(201);
  });
});
