import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../core/ids.js';
import type { Principal } from '../core/principal.js';
import { ProblemError } from '../core/problem.js';
import { OrgMembershipEntity } from '../db/entities/org.js';
import { ProjectEntity, type Project } from '../db/entities/project.js';

/** `{projectIdOrName}`: a project by id or by name. */
export async function findProject(em: EntityManager, idOrName: string): Promise<Project | null> {
  return em.findOne(
    ProjectEntity,
    isUuid(idOrName) ? { $or: [{ id: idOrName }, { name: idOrName }] } : { name: idOrName },
  );
}

/** Whether the caller may act on the project; the answer for "no" is a 404, never a 403. */
export async function canAccessProject(
  principal: Principal,
  project: Project,
  em: EntityManager,
): Promise<boolean> {
  switch (principal.kind) {
    case 'apiKey':
    case 'projectJwt':
      return principal.projectId === project.id;
    case 'builder':
      return (
        (await em.count(OrgMembershipEntity, { orgId: project.orgId, builderId: principal.builderId })) > 0
      );
    default:
      return false;
  }
}

/** Loads `{projectIdOrName}` and hides projects the caller cannot see behind the same 404 as missing ones. */
export async function resolveProject(
  principal: Principal,
  idOrName: string,
  em: EntityManager,
): Promise<Project> {
  const project = await findProject(em, idOrName);
  if (!project || !(await canAccessProject(principal, project, em))) {
    throw ProblemError.notFound(`Project "${idOrName}" was not found.`);
  }
  return project;
}
