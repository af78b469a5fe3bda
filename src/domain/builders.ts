import type { EntityManager } from '@mikro-orm/postgresql';
import { BuilderEntity, OrgEntity, OrgMembershipEntity, type Builder } from '../db/entities/org.js';
import { ProjectEntity } from '../db/entities/project.js';
import type { BuilderInfoView, BuilderView } from '../schemas/orgs.js';
import { orgView } from './orgs.js';
import { projectView } from './projects.js';

/** Builders as the public API shows them: people, with Ferry as the identity provider that vouches for them. */

export function builderView(builder: Builder): BuilderView {
  return {
    id: builder.id,
    idpProvider: 'ferry',
    idpRef: builder.email,
    primaryEmail: builder.email,
    ...(builder.name && { fullName: builder.name }),
    createTime: builder.createTime.toISOString(),
  };
}

/** The members of an org, in the order they joined. */
export async function orgBuilders(em: EntityManager, orgId: string): Promise<Builder[]> {
  const memberships = await em.find(
    OrgMembershipEntity,
    { orgId },
    { orderBy: { createTime: 'asc', id: 'asc' } },
  );
  const builders = new Map(
    (
      await em.find(BuilderEntity, { id: { $in: memberships.map((membership) => membership.builderId) } })
    ).map((builder) => [builder.id, builder]),
  );
  return memberships.flatMap((membership) => builders.get(membership.builderId) ?? []);
}

/**
 * Who the builder is and what they reach: every project of their orgs, with their role in that
 * project's org. `orgRole` is the org given (one just joined), else the one they joined first.
 */
export async function builderInfo(
  em: EntityManager,
  builderId: string,
  orgId?: string,
): Promise<BuilderInfoView> {
  const builder = await em.findOneOrFail(BuilderEntity, { id: builderId });
  const memberships = await em.find(
    OrgMembershipEntity,
    { builderId },
    { orderBy: { createTime: 'asc', id: 'asc' } },
  );
  const roleIn = new Map(memberships.map((membership) => [membership.orgId, membership.role]));
  const orgIds = [...roleIn.keys()];
  const projects = orgIds.length
    ? await em.find(ProjectEntity, { orgId: { $in: orgIds } }, { orderBy: { createTime: 'asc', id: 'asc' } })
    : [];
  const principal = { principalType: 'builder' as const, principalId: builder.id };
  const featured = orgId ?? memberships[0]?.orgId;
  const org = featured && roleIn.has(featured) ? await em.findOne(OrgEntity, { id: featured }) : null;
  return {
    builder: builderView(builder),
    projectRoles: Object.fromEntries(
      projects.map((project) => [
        project.id,
        { role: roleIn.get(project.orgId)!, ...principal, project: projectView(project) },
      ]),
    ),
    ...(org && { orgRole: { role: roleIn.get(org.id)!, ...principal, org: orgView(org) } }),
  };
}
