import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { transaction } from '../../src/db/orm.js';
import { config } from '../../src/config.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';
import { PublicApi } from '../support/public-api.js';

const TTL_SECONDS = 3600;
let stack: TestStack;

beforeAll(async () => {
  process.env.FERRY_INVITE_TTL_SECONDS = String(TTL_SECONDS);
  stack = await startTestStack();
});
afterAll(async () => stack.close());

const email = (name = 'person') => `${name}-${randomUUID().slice(0, 8)}@example.com`;

async function signIn(address = email('builder')) {
  return transaction(async (em) =>
    issueBuilderToken(await findOrCreateBuilder(em, address), config().builderTokenSecret),
  );
}

const api = (method: string, path: string, bearer?: string, body?: unknown) =>
  request(method, `${stack.urls.api}${path}`, { bearer, body });

/** A builder with an org of their own. */
async function orgOwner() {
  const token = await signIn();
  const org = await api('POST', '/orgs', token, { name: 'Invites org' });
  expect(org.status).toBe(201);
  return { token, orgId: org.body.id as string, invites: `/orgs/${org.body.id}/invites` };
}

/** As if the invite's expiry passed: moves it into the past in the database. */
async function expire(inviteId: string) {
  await transaction(async (em) => {
    await em.execute(
      "update invites set expire_time = now() - interval '1 second' where id = ?",
      [inviteId],
      'run',
    );
  });
}

describe('org invites', () => {
  it('invites an address, lists and gets the invite, with the spec’s shape and a configurable expiry', async () => {
    const { token, orgId, invites } = await orgOwner();
    const invited = email('Ada');
    const created = await api('POST', invites, token, { email: invited });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      invitedEmail: invited.toLowerCase(),
      parentType: 'org',
      parentId: orgId,
      status: 'pending',
      createTime: expect.any(String),
      updateTime: expect.any(String),
      expireTime: expect.any(String),
    });
    expect(Date.parse(created.body.expireTime) - Date.parse(created.body.createTime)).toBe(
      TTL_SECONDS * 1000,
    );
    expect((await api('GET', `${invites}/${created.body.id}`, token)).body).toEqual(created.body);
    const second = await api('POST', invites, token, { email: email() });
    const listed = await api('GET', invites, token);
    expect(listed.body.map((invite: any) => invite.id)).toEqual([second.body.id, created.body.id]);
  });

  it('knows a builder by one address however it is cased or its accents composed', async () => {
    const local = `jos-${randomUUID().slice(0, 8)}`;
    const [composed, decomposed] = [
      `${local}\u00e9@example.com`,
      `${local.toUpperCase()}E\u0301@EXAMPLE.COM`,
    ];
    const [first, second] = await transaction(async (em) => [
      await findOrCreateBuilder(em, decomposed),
      await findOrCreateBuilder(em, composed),
    ]);
    expect(second.id).toBe(first.id);
    expect(first.email).toBe(composed);
  });

  it('refuses an address that is not one with 400', async () => {
    const { token, invites } = await orgOwner();
    // Past RFC 5321's limits too: 64 characters before the @, 254 in all.
    for (const bad of [
      'not-an-email',
      'a@',
      '@example.com',
      '',
      `${'l'.repeat(65)}@example.com`,
      `a@${'d'.repeat(250)}.com`,
    ]) {
      const response = await api('POST', invites, token, { email: bad });
      expect(response.status).toBe(400);
      expect(response.body.issues).toMatchObject([expect.objectContaining({ in: 'body', name: 'email' })]);
    }
    expect((await api('POST', invites, token, {})).status).toBe(400);
  });

  it('refuses a second pending invite to the same address, and inviting a member, with 409', async () => {
    const { token, invites } = await orgOwner();
    const address = email();
    expect((await api('POST', invites, token, { email: address })).status).toBe(201);
    const duplicate = await api('POST', invites, token, { email: address.toUpperCase() });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail).toMatch(/pending invite/);

    const memberEmail = email('member');
    const member = await signIn(memberEmail);
    const invite = await api('POST', invites, token, { email: memberEmail });
    await api('POST', '/invites:accept', member, { invitedEmail: memberEmail, inviteId: invite.body.id });
    const again = await api('POST', invites, token, { email: memberEmail });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already a member/);
  });

  it('lets only members of the org see or manage its invites, and only with a builder token', async () => {
    const { token, invites } = await orgOwner();
    const created = await api('POST', invites, token, { email: email() });
    const outsider = await signIn();
    for (const [method, path] of [
      ['GET', invites],
      ['POST', invites],
      ['GET', `${invites}/${created.body.id}`],
      ['DELETE', `${invites}/${created.body.id}`],
    ]) {
      const response = await api(method, path, outsider, method === 'POST' ? { email: email() } : undefined);
      expect(response.status).toBe(404);
    }
    const withKey = await stack.api('GET', invites);
    expect(withKey.status).toBe(401);
    expect(withKey.body.detail).toMatch(/bearer token/);
    expect((await stack.api('POST', '/invites:accept', { body: { invitedEmail: email() } })).status).toBe(
      401,
    );
    expect((await api('GET', invites)).status).toBe(401);
    expect((await api('GET', `${invites}/${randomUUID()}`, token)).status).toBe(404);
  });

  it('lets the invitee accept, which makes them a member of the org', async () => {
    const { token, orgId, invites } = await orgOwner();
    const address = email('invitee');
    const invite = await api('POST', invites, token, { email: address });
    const invitee = await signIn(address);
    expect((await api('GET', `/orgs/${orgId}`, invitee)).status).toBe(404);

    const accepted = await api('POST', '/invites:accept', invitee, { invitedEmail: address.toUpperCase() });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      builder: { primaryEmail: address.toLowerCase() },
      orgRole: { role: 'member', org: { id: orgId } },
    });
    expect((await api('GET', `/orgs/${orgId}`, invitee)).status).toBe(200);
    expect((await api('GET', `${invites}/${invite.body.id}`, invitee)).body.status).toBe('accepted');

    const twice = await api('POST', '/invites:accept', invitee, { invitedEmail: address });
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toMatch(/already been accepted/);
    const revokeAccepted = await api('DELETE', `${invites}/${invite.body.id}`, token);
    expect(revokeAccepted.status).toBe(409);
  });

  it('answers an accept with who the builder now is, as the public BuilderInfo: {builder, projectRoles}', async () => {
    const { token, orgId, invites } = await orgOwner();
    const project = await api('POST', '/projects', token, { name: `inv-${randomUUID().slice(0, 8)}`, orgId });
    const address = email('joiner');
    await api('POST', invites, token, { email: address });
    const accepted = await api('POST', '/invites:accept', await signIn(address), { invitedEmail: address });
    expect(accepted.status).toBe(200);
    expect(accepted.body.projectRoles).toEqual({
      [project.body.id]: {
        role: 'member',
        principalType: 'builder',
        principalId: accepted.body.builder.id,
        project: project.body,
      },
    });
    expect(new PublicApi().checkResponse('api', 'POST', '/invites:accept', accepted)).toEqual([]);
  });

  it('refuses an accept by someone signed in with another address', async () => {
    const { token, invites } = await orgOwner();
    const address = email('meant');
    await api('POST', invites, token, { email: address });
    const impostor = await signIn();
    const response = await api('POST', '/invites:accept', impostor, { invitedEmail: address });
    expect(response.status).toBe(403);
    expect(response.body.detail).toMatch(/signed in as .* but the invite is for/);
    const nobody = email('nobody');
    const noInvite = await api('POST', '/invites:accept', await signIn(nobody), { invitedEmail: nobody });
    expect(noInvite.status).toBe(404);
    expect((await api('POST', '/invites:accept', impostor, { invitedEmail: 'nope' })).status).toBe(400);
  });

  it('revokes a pending invite, which can then not be accepted', async () => {
    const { token, invites } = await orgOwner();
    const address = email('revoked');
    const invite = await api('POST', invites, token, { email: address });
    expect((await api('DELETE', `${invites}/${invite.body.id}`, token)).status).toBe(204);
    expect((await api('GET', `${invites}/${invite.body.id}`, token)).body.status).toBe('revoked');
    expect((await api('DELETE', `${invites}/${invite.body.id}`, token)).status).toBe(204);
    const accept = await api('POST', '/invites:accept', await signIn(address), { invitedEmail: address });
    expect(accept.status).toBe(409);
    expect(accept.body.detail).toMatch(/was revoked/);
    // A revoked invite does not block a new one.
    expect((await api('POST', invites, token, { email: address })).status).toBe(201);
  });

  it('reads a pending invite past its expiry as expired everywhere, refuses to accept it, and allows a new one', async () => {
    const { token, invites } = await orgOwner();
    const address = email('late');
    const invite = await api('POST', invites, token, { email: address });
    await expire(invite.body.id);

    expect((await api('GET', `${invites}/${invite.body.id}`, token)).body.status).toBe('expired');
    const listed = await api('GET', invites, token);
    expect(listed.body.find((item: any) => item.id === invite.body.id).status).toBe('expired');
    const accept = await api('POST', '/invites:accept', await signIn(address), {
      invitedEmail: address,
      inviteId: invite.body.id,
    });
    expect(accept.status).toBe(409);
    expect(accept.body.detail).toMatch(/expired/);
    expect((await api('DELETE', `${invites}/${invite.body.id}`, token)).status).toBe(409);

    const renewed = await api('POST', invites, token, { email: address });
    expect(renewed.status).toBe(201);
    expect(renewed.body.status).toBe('pending');
  });

  it('expires a pending invite that nobody read before the invitee tries to accept it', async () => {
    const { token, invites } = await orgOwner();
    const address = email('unread');
    const invite = await api('POST', invites, token, { email: address });
    await expire(invite.body.id);
    const accept = await api('POST', '/invites:accept', await signIn(address), { invitedEmail: address });
    expect(accept.status).toBe(409);
    expect((await api('GET', `${invites}/${invite.body.id}`, token)).body.status).toBe('expired');
  });
});
