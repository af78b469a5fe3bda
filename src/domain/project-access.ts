import type { EntityManager } from '@mikro-orm/postgresql';
import { TtlCache } from '../core/ttl-cache.js';
import { isUuid } from '../core/ids.js';
import { canonicalName } from '../core/names.js';
import { refuseFrontendKey, type Principal } from '../core/principal.js';
import { ProblemError } from '../core/problem.js';
import { GroupEntity } from '../db/entities/connection.js';
import { OrgMembershipEntity } from '../db/entities/org.js';
import { ProjectEntity, type Project } from '../db/entities/project.js';
import { memoized, rawRows, rowMapper, selectColumns } from '../db/raw.js';

/** `{projectIdOrName}`: a project by id or by name (in NFC, as project names are kept). */
export async function findProject(em: EntityManager, given: string): Promise<Project | null> {
  const idOrName = canonicalName(given);
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

/**
 * Projects found lately, by id or name. Nothing changes a project after it is created (no route
 * renames or deletes one), so a found project may be answered from here for a few seconds, as
 * verified API keys are (`api/auth.ts`); a name or id not found is asked again every time.
 */
const PROJECT_CACHE_MS = 5_000;
const PROJECT_CACHE_SIZE = 10_000;
const foundProjects = new TtlCache<string, Project>(PROJECT_CACHE_MS, PROJECT_CACHE_SIZE);

/** Forgets every cached project (for a process that changes projects outside the API). */
export function forgetProjects(): void {
  foundProjects.clear();
}

/**
 * `findProject` as a plain row, not managed by `em` (cheaper: see `db/raw.ts`), for requests that
 * change nothing; the caller must not change it.
 */
export async function findProjectRow(em: EntityManager, given: string): Promise<Project | null> {
  const idOrName = canonicalName(given);
  const now = Date.now();
  const cached = foundProjects.get(idOrName, now);
  if (cached) return cached;
  const { columns, project: toProject } = memoized(em, 'project', () => ({
    columns: selectColumns(em, ProjectEntity, 'p'),
    project: rowMapper(em, ProjectEntity, 'p'),
  }));
  const [row] = await rawRows(
    em,
    `select ${columns} from projects p
      where ${isUuid(idOrName) ? 'p.id = ? or p.name = ?' : 'p.name = ?'} limit 1`,
    isUuid(idOrName) ? [idOrName, idOrName] : [idOrName],
  );
  if (!row) {
    foundProjects.delete(idOrName);
    return null;
  }
  const project = Object.freeze(toProject(row));
  foundProjects.set(idOrName, project, now);
  return project;
}

/**
 * Loads `{projectIdOrName}` and hides projects the caller cannot see behind the same 404 as missing
 * ones. `plain`: the project as a plain row, for requests that change nothing.
 */
export async function resolveProject(
  principal: Principal,
  idOrName: string,
  em: EntityManager,
  options: { plain?: boolean } = {},
): Promise<Project> {
  const project = options.plain ? await findProjectRow(em, idOrName) : await findProject(em, idOrName);
  if (!project || !(await canAccessProject(principal, project, em))) {
    throw ProblemError.notFound(`Project "${idOrName}" was not found.`);
  }
  return project;
}

/**
 * The group a project JWT was minted for (its `groupRef` claim): such a token, handed to a browser,
 * acts for that one group. Undefined for every other caller, which acts for the whole project.
 */
export function scopedGroupRef(principal: Principal): string | undefined {
  return principal.kind === 'projectJwt' ? principal.groupRef : undefined;
}

/** 403 when the caller is a project JWT minted for another group than `groupRef`. */
export function assertActsForGroup(principal: Principal, groupRef: string | undefined): void {
  const scoped = scopedGroupRef(principal);
  if (scoped === undefined || scoped === groupRef) return;
  throw new ProblemError({
    status: 403,
    detail: groupRef
      ? `This token acts for group "${scoped}", not "${groupRef}".`
      : `This token acts for group "${scoped}" only; name it (groupRef).`,
  });
}

/** The same check for a resource that belongs to a group by id (an installation, a connection). */
export async function assertActsForGroupId(
  em: EntityManager,
  principal: Principal,
  groupId: string,
): Promise<void> {
  if (scopedGroupRef(principal) === undefined) return;
  const group = await em.findOne(GroupEntity, { id: groupId }, { fields: ['groupRef'] });
  assertActsForGroup(principal, group?.groupRef ?? '');
}

/**
 * 403 for a project JWT minted for one group, and for a frontend-only API key: what changes the whole
 * project is neither the group's nor for code in a browser.
 */
export function assertActsForProject(principal: Principal): void {
  refuseFrontendKey(principal);
  const scoped = scopedGroupRef(principal);
  if (scoped === undefined) return;
  throw new ProblemError({
    status: 403,
    detail: `This token acts for group "${scoped}" only; changing the project needs an API key or a project JWT without a groupRef claim.`,
  });
}
