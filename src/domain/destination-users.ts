import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import type { Destination } from '../db/entities/operation.js';

/**
 * What names a destination: integrations (their latest revision) and installations (their current
 * config), anywhere a `destination` member is. Renaming or deleting it would break them all.
 */
export async function destinationUsers(
  em: EntityManager,
  projectId: string,
  name: string,
): Promise<string[]> {
  const naming = 'strict $.**.destination ? (@ == $name)';
  const [integrations, installations] = await Promise.all([
    em.execute<{ name: string }[]>(
      `select i.name from integrations i join revisions r on r.id = i.latest_revision_id
        where i.project_id = ? and jsonb_path_exists(r.content, ?::jsonpath, jsonb_build_object('name', ?::text))
        order by i.name limit 10`,
      [projectId, naming, name],
    ),
    em.execute<{ id: string }[]>(
      `select s.id from installations s join installation_configs c on c.id = s.config_id
        where s.project_id = ? and jsonb_path_exists(c.content, ?::jsonpath, jsonb_build_object('name', ?::text))
        order by s.id limit 10`,
      [projectId, naming, name],
    ),
  ]);
  return [
    ...integrations.map((row) => `integration "${row.name}"`),
    ...installations.map((row) => `installation ${row.id}`),
  ];
}

/** Refuses to rename or delete a destination something still names (409 listing them). */
export async function assertDestinationUnused(
  em: EntityManager,
  destination: Destination,
  change: 'rename' | 'delete',
): Promise<void> {
  const users = await destinationUsers(em, destination.projectId, destination.name);
  if (!users.length) return;
  throw ProblemError.conflict(
    `Destination "${destination.name}" is named by ${users.join(', ')}; change them to another destination before you ${change} it.`,
  );
}
