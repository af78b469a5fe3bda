import type { EntityManager } from '@mikro-orm/postgresql';
import { DestinationEntity, type Destination } from '../../db/entities/operation.js';
import type { Installation } from '../../db/entities/installation.js';
import type { InstallationConfigContent } from '../../schemas/installations.js';

/**
 * An installation's health as a builder means it: are its records getting through? The stored
 * status says how its latest read ended; a read still retrying deliveries to a destination that
 * fails every attempt, or waiting on a disabled one, has not ended, yet nothing arrives. So the
 * destinations its config delivers to count too, and the answer says why.
 */
export interface InstallationHealth {
  healthStatus: 'healthy' | 'unhealthy';
  healthReason?: string;
}

/** The destination names a config delivers records to (read and subscribe objects). */
export function deliveredToNames(content: InstallationConfigContent): string[] {
  const names = [
    ...Object.values(content.read?.objects ?? {}).map((object) => object.destination),
    ...Object.values(content.subscribe?.objects ?? {}).map((object) => object.destination),
  ];
  return [...new Set(names.filter((name): name is string => Boolean(name)))];
}

/** The named destinations of these projects, by `projectId/name`, in one query. */
export async function destinationsByName(
  em: EntityManager,
  wanted: { projectId: string; names: string[] }[],
): Promise<Map<string, Destination>> {
  const projectIds = [...new Set(wanted.map((entry) => entry.projectId))];
  const names = [...new Set(wanted.flatMap((entry) => entry.names))];
  if (!projectIds.length || !names.length) return new Map();
  const rows = await em.find(DestinationEntity, { projectId: { $in: projectIds }, name: { $in: names } });
  return new Map(rows.map((row) => [`${row.projectId}/${row.name}`, row]));
}

/** What health needs of a destination. */
export type DestinationState = Pick<Destination, 'name' | 'disabledTime' | 'firstFailureTime'>;

/**
 * SQL (a lateral join's body, given the aliases of installations `i` and their configs `cf`): the
 * disabled or failing destinations a config delivers to, as a JSON array in `failing_destinations`.
 */
export const FAILING_DESTINATIONS_SQL = `
  select json_agg(json_build_object('name', d.name, 'disabledTime', d.disabled_time,
                                    'firstFailureTime', d.first_failure_time) order by d.name) as failing_destinations
    from destinations d
   where d.project_id = i.project_id
     and (d.disabled_time is not null or d.first_failure_time is not null)
     and to_jsonb(d.name) in (select jsonb_path_query(cf.content, '$.read.objects.*.destination')
                              union all
                              select jsonb_path_query(cf.content, '$.subscribe.objects.*.destination'))`;

/** The column FAILING_DESTINATIONS_SQL fills, as destination states. */
export function failingDestinations(value: unknown): DestinationState[] {
  const rows = (typeof value === 'string' ? JSON.parse(value) : value) as
    { name: string; disabledTime: string | null; firstFailureTime: string | null }[] | null;
  return (rows ?? []).map((row) => ({
    name: row.name,
    ...(row.disabledTime && { disabledTime: new Date(row.disabledTime) }),
    ...(row.firstFailureTime && { firstFailureTime: new Date(row.firstFailureTime) }),
  }));
}

/** The destinations one config delivers to. */
export async function namedDestinations(
  em: EntityManager,
  projectId: string,
  content: InstallationConfigContent,
): Promise<Destination[]> {
  const names = deliveredToNames(content);
  return names.length ? em.find(DestinationEntity, { projectId, name: { $in: names } }) : [];
}

export function installationHealth(
  installation: Installation,
  destinations: DestinationState[],
): InstallationHealth {
  const reasons = [
    ...destinations
      .filter((destination) => destination.disabledTime)
      .map(
        (destination) =>
          `Destination "${destination.name}" is disabled since ${destination.disabledTime!.toISOString()}: its deliveries wait until it is re-enabled.`,
      ),
    ...destinations
      .filter((destination) => !destination.disabledTime && destination.firstFailureTime)
      .map(
        (destination) =>
          `Deliveries to destination "${destination.name}" have failed since ${destination.firstFailureTime!.toISOString()}.`,
      ),
    ...(installation.healthStatus === 'unhealthy' ? ['Its latest read failed (see its operations).'] : []),
  ];
  return reasons.length
    ? { healthStatus: 'unhealthy', healthReason: reasons.join(' ') }
    : { healthStatus: 'healthy' };
}
