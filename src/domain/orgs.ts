import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { type Principal } from '../core/principal.js';
import { isUuid } from '../core/ids.js';
import { OrgMembershipEntity, OrgEntity, type Org, type OrgMembership } from '../db/entities/org.js';
import type { OrgView } from '../schemas/orgs.js';
import { createOrg } from './projects.js';

export type BuilderPrincipal = Extract<Principal, { kind: 'builder' }>;

export function orgView(org: Org): OrgView {
  return {
    id: org.id,
    name: org.name,
    label: org.name,
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

/** The org, if the builder belongs to it; others get the same 404 as for a missing org. */
export async function findMemberOrg(em: EntityManager, orgId: string, builderId: string): Promise<Org> {
  const member = isUuid(orgId) && (await em.count(OrgMembershipEntity, { orgId, builderId })) > 0;
  const org = member ? await em.findOne(OrgEntity, { id: orgId }) : null;
  if (!org) throw ProblemError.notFound(`Org "${orgId}" was not found.`);
  return org;
}
