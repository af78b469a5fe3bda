import { randomUUID } from 'node:crypto';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { isUuid } from '../core/ids.js';
import { canonicalEmail } from '../core/names.js';
import { InviteEntity, type Invite } from '../db/entities/invite.js';
import { BuilderEntity, OrgMembershipEntity } from '../db/entities/org.js';
import type { InviteView } from '../schemas/orgs.js';
import { addMember, type BuilderPrincipal } from './orgs.js';

/**
 * Invites move pending → accepted | revoked | expired and never back. Expiry is settled lazily: every
 * read and write first marks the pending invites past their expiry as expired, so no caller ever
 * sees a stale `pending`.
 */

export function inviteView(invite: Invite): InviteView {
  return {
    id: invite.id,
    invitedEmail: invite.invitedEmail,
    parentType: 'org',
    parentId: invite.orgId,
    status: invite.status,
    createTime: invite.createTime.toISOString(),
    updateTime: invite.updateTime.toISOString(),
    expireTime: invite.expireTime.toISOString(),
  };
}

/** Marks the pending invites past their expiry as expired, in the org or for the address given. */
export async function settleExpiredInvites(
  em: EntityManager,
  scope: { orgId: string } | { invitedEmail: string },
  now = new Date(),
): Promise<void> {
  await em.nativeUpdate(
    InviteEntity,
    { ...scope, status: 'pending', expireTime: { $lte: now } },
    { status: 'expired', updateTime: now },
  );
}

export async function findInvite(em: EntityManager, orgId: string, inviteId: string): Promise<Invite> {
  const invite = isUuid(inviteId) ? await em.findOne(InviteEntity, { id: inviteId, orgId }) : null;
  if (!invite) throw ProblemError.notFound(`Invite "${inviteId}" was not found in org "${orgId}".`);
  return invite;
}

export async function listInvites(em: EntityManager, orgId: string): Promise<Invite[]> {
  await settleExpiredInvites(em, { orgId });
  return em.find(InviteEntity, { orgId }, { orderBy: { createTime: 'desc', id: 'desc' } });
}

export async function getInvite(em: EntityManager, orgId: string, inviteId: string): Promise<Invite> {
  await settleExpiredInvites(em, { orgId });
  return findInvite(em, orgId, inviteId);
}

export async function createInvite(
  em: EntityManager,
  orgId: string,
  email: string,
  invitedBy: string,
  /** How long the invite stays pending (FERRY_INVITE_TTL_SECONDS). */
  ttlSeconds: number,
): Promise<Invite> {
  const invitedEmail = canonicalEmail(email);
  await settleExpiredInvites(em, { orgId });
  const builder = await em.findOne(BuilderEntity, { email: invitedEmail });
  if (builder && (await em.count(OrgMembershipEntity, { orgId, builderId: builder.id }))) {
    throw ProblemError.conflict(`${invitedEmail} is already a member of this org.`);
  }
  const conflict = () =>
    ProblemError.conflict(
      `A pending invite to ${invitedEmail} already exists; revoke it first to send a new one.`,
    );
  if (await em.count(InviteEntity, { orgId, invitedEmail, status: 'pending' })) throw conflict();
  const now = new Date();
  const invite = em.create(InviteEntity, {
    id: randomUUID(),
    orgId,
    invitedEmail,
    status: 'pending',
    invitedBy,
    expireTime: new Date(now.getTime() + ttlSeconds * 1000),
    createTime: now,
    updateTime: now,
  });
  try {
    await em.flush();
  } catch (error) {
    // Two invites to one address raced; the partial unique index let one through.
    if (error instanceof UniqueConstraintViolationException) throw conflict();
    throw error;
  }
  return invite;
}

export async function revokeInvite(em: EntityManager, orgId: string, inviteId: string): Promise<Invite> {
  await settleExpiredInvites(em, { orgId });
  const invite = await findInvite(em, orgId, inviteId);
  if (invite.status === 'accepted' || invite.status === 'expired') {
    throw ProblemError.conflict(`Invite "${invite.id}" is ${invite.status} and can no longer be revoked.`);
  }
  if (invite.status === 'pending') {
    invite.status = 'revoked';
    invite.updateTime = new Date();
    await em.flush();
  }
  return invite;
}

/**
 * Accepts an invite for the signed-in builder, whose token email must be the invited address.
 * Without an invite ID, the newest invite to the address is the one meant.
 */
export async function acceptInvite(
  em: EntityManager,
  builder: BuilderPrincipal,
  input: { invitedEmail: string; inviteId?: string },
): Promise<Invite> {
  const invitedEmail = canonicalEmail(input.invitedEmail);
  if (invitedEmail !== canonicalEmail(builder.email)) {
    throw new ProblemError({
      status: 403,
      detail: `You are signed in as ${builder.email}, but the invite is for ${invitedEmail}; sign in with the invited address.`,
    });
  }
  await settleExpiredInvites(em, { invitedEmail });
  const candidate = input.inviteId
    ? await em.findOne(InviteEntity, { id: input.inviteId, invitedEmail })
    : ((await em.findOne(
        InviteEntity,
        { invitedEmail, status: 'pending' },
        { orderBy: { createTime: 'desc' } },
      )) ?? (await em.findOne(InviteEntity, { invitedEmail }, { orderBy: { createTime: 'desc' } })));
  if (!candidate) {
    throw ProblemError.notFound(
      input.inviteId
        ? `Invite "${input.inviteId}" to ${invitedEmail} was not found.`
        : `There is no invite to ${invitedEmail}.`,
    );
  }
  // Read it again under a row lock, so two concurrent accepts cannot both add the membership.
  const invite = await em.findOneOrFail(
    InviteEntity,
    { id: candidate.id },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  if (invite.status !== 'pending') {
    const reason = {
      accepted: 'has already been accepted',
      revoked: 'was revoked; ask the org for a new invite',
      expired: `expired at ${invite.expireTime.toISOString()}; ask the org for a new invite`,
    }[invite.status];
    throw ProblemError.conflict(`The invite to ${invitedEmail} ${reason}.`);
  }
  if (!(await em.count(OrgMembershipEntity, { orgId: invite.orgId, builderId: builder.builderId }))) {
    addMember(em, invite.orgId, builder.builderId, 'member');
  }
  invite.status = 'accepted';
  invite.acceptedBy = builder.builderId;
  invite.updateTime = new Date();
  await em.flush();
  return invite;
}
