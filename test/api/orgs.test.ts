import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { transaction } from '../../src/db/orm.js';
import { config } from '../../src/config.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';
import { PublicApi } from '../support/public-api.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => stack.close());

async function signIn(email = `builder-${randomUUID().slice(0, 8)}@example.com`) {
  return transaction(async (em) =>
    issueBuilderToken(await findOrCreateBuilder(em, email), config().builderTokenSecret),
  );
}

/** A signed-in builder with their ID, for calls that name builders. */
async function builder(email = `builder-${randomUUID().slice(0, 8)}@example.com`) {
  return transaction(async (em) => {
    const found = await findOrCreateBuilder(em, email);
    return {
      id: found.id,
      email: found.email,
      token: await issueBuilderToken(found, config().builderTokenSecret),
    };
  });
}

const publicApi = new PublicApi();

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

  it('names the org’s default team, as the public Org requires: the same for every read, another per org', async () => {
    const token = await signIn();
    const created = await api('POST', '/orgs', token, { label: 'Teamed' });
    expect(created.body.defaultTeamId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(publicApi.checkResponse('api', 'POST', '/orgs', created)).toEqual([]);
    const got = await api('GET', `/orgs/${created.body.id}`, token);
    expect(got.body.defaultTeamId).toBe(created.body.defaultTeamId);
    expect(publicApi.checkResponse('api', 'GET', `/orgs/${created.body.id}`, got)).toEqual([]);
    const other = await api('POST', '/orgs', token, { label: 'Other team' });
    expect(other.body.defaultTeamId).not.toBe(created.body.defaultTeamId);
  });

  it('renames an org by updateMask, label or name alike, for its members only', async () => {
    const token = await signIn();
    const org = await api('POST', '/orgs', token, { label: 'Before' });
    const path = `/orgs/${org.body.id}`;
    const renamed = await api('PATCH', path, token, { updateMask: ['label'], org: { label: 'After' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: org.body.id, label: 'After', name: 'After' });
    expect(publicApi.checkResponse('api', 'PATCH', path, renamed)).toEqual([]);
    expect((await api('GET', path, token)).body.label).toBe('After');
    const byName = await api('PATCH', path, token, { updateMask: ['name'], org: { name: 'Named' } });
    expect(byName.body.label).toBe('Named');
    // A masked field left out is refused, as every updateMask is.
    const leftOut = await api('PATCH', path, token, { updateMask: ['label'], org: { name: 'Other' } });
    expect(leftOut.status).toBe(400);
    expect((await api('PATCH', path, token, { updateMask: ['id'], org: {} })).status).toBe(400);
    expect((await api('PATCH', path, token, { updateMask: ['label'], org: { label: '' } })).status).toBe(400);
    expect(
      (await api('PATCH', path, await signIn(), { updateMask: ['label'], org: { label: 'X' } })).status,
    ).toBe(404);
  });

  it('adds a builder to an org by ID, and lists the org’s builders in the order they joined', async () => {
    const owner = await builder();
    const org = await api('POST', '/orgs', owner.token, { label: 'Members' });
    const colleague = await builder();
    const path = `/orgs/${org.body.id}`;
    const added = await api('POST', `${path}/memberships`, owner.token, { builderId: colleague.id });
    expect(added.status).toBe(201);
    expect(publicApi.checkResponse('api', 'POST', `${path}/memberships`, added)).toEqual([]);
    expect((await api('POST', `${path}/memberships`, owner.token, { builderId: colleague.id })).status).toBe(
      201,
    );
    expect((await api('GET', path, colleague.token)).status).toBe(200);

    const builders = await api('GET', `${path}/builders`, colleague.token);
    expect(builders.status).toBe(200);
    expect(builders.body).toEqual([
      {
        id: owner.id,
        idpProvider: 'ferry',
        idpRef: owner.email,
        primaryEmail: owner.email,
        createTime: expect.any(String),
      },
      {
        id: colleague.id,
        idpProvider: 'ferry',
        idpRef: colleague.email,
        primaryEmail: colleague.email,
        createTime: expect.any(String),
      },
    ]);
    expect(publicApi.checkResponse('api', 'GET', `${path}/builders`, builders)).toEqual([]);

    const unknown = await api('POST', `${path}/memberships`, owner.token, { builderId: randomUUID() });
    expect(unknown.status).toBe(404);
    const outsider = await builder();
    expect(
      (await api('POST', `${path}/memberships`, outsider.token, { builderId: outsider.id })).status,
    ).toBe(404);
    expect((await api('GET', `${path}/builders`, outsider.token)).status).toBe(404);
    expect((await api('POST', `${path}/memberships`, owner.token, {})).status).toBe(400);
  });

  it('tells the signed-in builder who they are and which projects they reach (GET /my-info)', async () => {
    const me = await builder();
    const empty = await api('GET', '/my-info', me.token);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      builder: {
        id: me.id,
        idpProvider: 'ferry',
        idpRef: me.email,
        primaryEmail: me.email,
        createTime: expect.any(String),
      },
      projectRoles: {},
    });
    const org = await api('POST', '/orgs', me.token, { label: 'Mine' });
    const project = await api('POST', '/projects', me.token, {
      name: `mine-${randomUUID().slice(0, 8)}`,
      orgId: org.body.id,
    });
    const info = await api('GET', '/my-info', me.token);
    expect(info.body.projectRoles).toEqual({
      [project.body.id]: {
        role: 'owner',
        principalType: 'builder',
        principalId: me.id,
        project: project.body,
      },
    });
    expect(info.body.orgRole).toEqual({
      role: 'owner',
      principalType: 'builder',
      principalId: me.id,
      org: org.body,
    });
    expect(publicApi.checkResponse('api', 'GET', '/my-info', info)).toEqual([]);
    expect((await stack.api('GET', '/my-info')).status).toBe(401);
  });
});
