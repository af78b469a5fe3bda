import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { type Principal } from '../core/principal.js';
import { isUuid } from '../core/ids.js';
import {
  BuilderEntity,
  OrgMembershipEntity,
  OrgEntity,
  type Org,
  type OrgMembership,
} from '../db/entities/org.js';
import { UpdateOrgBody, type OrgView, type UpdateOrgInput } from '../schemas/orgs.js';
import { createOrg } from './projects.js';
import { applyUpdateMask } from './update-mask.js';

export type BuilderPrincipal = Extract<Principal, { kind: 'builder' }>;

/**
 * The ID of an org's one team (all its members), derived from the org's ID (a name-based UUID,
 * version 5 layout): the public Org names a default team, and Ferry grants access by membership.
 */
export function defaultTeamIdOf(orgId: string): string {
  const bytes = createHash('sha1').update(`ferry:org-team:${orgId}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function orgView(org: Org): OrgView {
  return {
    id: org.id,
    name: org.name,
    label: org.name,
    defaultTeamId: defaultTeamIdOf(org.id),
    createTime: org.createTime.toISOString(),
    updateTime: org.updateTime.toISOString(),
  };
}

/** Org endpoints act for a person; API keys never reach here, and project tokens are refused too. */
export function requireBuilder(principal: Principal): BuilderPrincipal {
  if (principal.kind !== 'builder') {
    throw ProblemError.unauthorized(
      'This endpoint needs a builder’s bearer token (npm run ferry -- builders token --email <email>).',
    );
  }
  return principal;
}

export function addMember(
  em: EntityManager,
  orgId: string,
  builderId: string,
  role: OrgMembership['role'],
): OrgMembership {
  return em.create(OrgMembershipEntity, {
    id: randomUUID(),
    orgId,
    builderId,
    role,
    createTime: new Date(),
    updateTime: new Date(),
  });
}

export async function createOrgWithOwner(em: EntityManager, name: string, ownerId: string): Promise<Org> {
  const org = await createOrg(em, name);
  addMember(em, org.id, ownerId, 'owner');
  await em.flush();
  return org;
}

/** Renames the org: `label` and `name` are one field, and the two must agree when both are given. */
export function updateOrg(org: Org, input: UpdateOrgInput): void {
  const draft: UpdateOrgInput['org'] = {};
  applyUpdateMask(draft, input.org, input.updateMask, UpdateOrgBody.properties.org, 'org');
  const name = draft.label ?? draft.name;
  if (draft.label !== undefined && draft.name !== undefined && draft.label !== draft.name) {
    throw ProblemError.invalid([
      { in: 'body', name: 'org.label', detail: 'label and name are one field; give one, or the same value' },
    ]);
  }
  if (name !== undefined) {
    org.name = name;
    org.updateTime = new Date();
  }
}

/**
 * Adds an existing builder to the org (the public API's memberships); adding a member again
 * changes nothing. Any member may add one, as any member may invite.
 */
export async function addMembership(em: EntityManager, org: Org, builderId: string): Promise<void> {
  const builder = isUuid(builderId) ? await em.findOne(BuilderEntity, { id: builderId }) : null;
  if (!builder) throw ProblemError.notFound(`Builder "${builderId}" was not found.`);
  if (await em.count(OrgMembershipEntity, { orgId: org.id, builderId })) return;
  addMember(em, org.id, builderId, 'member');
  await em.flush();
}

/** The org, if the builder belongs to it; others get the same 404 as for a missing org. */
export async function findMemberOrg(em: EntityManager, orgId: string, builderId: string): Promise<Org> {
  const member = isUuid(orgId) && (await em.count(OrgMembershipEntity, { orgId, builderId })) > 0;
  const org = member ? await em.findOne(OrgEntity, { id: orgId }) : null;
  if (!org) throw ProblemError.notFound(`Org "${orgId}" was not found.`);
  return org;
}
