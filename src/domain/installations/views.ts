import type { EntityManager } from '@mikro-orm/postgresql';
import { ConnectionEntity, GroupEntity, type Group } from '../../db/entities/connection.js';
import {
  InstallationConfigEntity,
  type Installation,
  type InstallationConfig,
} from '../../db/entities/installation.js';
import type { ConnectionView } from '../../schemas/connections.js';
import type {
  InstallationConfigContent,
  InstallationConfigView,
  InstallationView,
} from '../../schemas/installations.js';
import { connectionViews } from '../connections/views.js';
import { groupView } from '../groups.js';
import { subscribeConfigView } from './config-validation.js';
import { deliveredToNames, destinationsByName, installationHealth } from './health.js';
import type { DestinationState } from './health.js';

/**
 * Stored content as answers show it, as the public config has it: every read object with its
 * `selectedFieldMappings` (empty when none), subscribed objects with `inheritFieldsAndMappings`.
 */
function contentView(content: InstallationConfigContent): InstallationConfigView['content'] {
  const { read, subscribe, ...rest } = content;
  const mapValues = <T, U>(objects: Record<string, T>, view: (object: T) => U) =>
    Object.fromEntries(Object.entries(objects).map(([key, object]) => [key, view(object)]));
  return {
    ...rest,
    ...(read && {
      read: {
        objects: mapValues(read.objects, (object) => ({
          ...object,
          selectedFieldMappings: object.selectedFieldMappings ?? {},
        })),
      },
    }),
    ...(subscribe && { subscribe: { objects: mapValues(subscribe.objects, subscribeConfigView) } }),
  };
}

export function configView(config: InstallationConfig): InstallationConfigView {
  return {
    id: config.id,
    revisionId: config.revisionId,
    createTime: config.createTime.toISOString(),
    createdBy: config.createdBy,
    content: contentView(config.content),
  };
}

export interface InstallationParts {
  installation: Installation;
  config: InstallationConfig;
  /** The spec's Connection, without credentials: installations never show secrets. */
  connection: ConnectionView;
  group: Group;
  /** The destinations its config delivers to, which its health depends on. */
  destinations: DestinationState[];
}

export function installationView(parts: InstallationParts): InstallationView {
  const { installation, config, connection, group } = parts;
  return {
    id: installation.id,
    projectId: installation.projectId,
    integrationId: installation.integrationId,
    ...installationHealth(installation, parts.destinations),
    connection,
    createTime: installation.createTime.toISOString(),
    createdBy: installation.createdBy,
    config: configView(config),
    group: groupView(group),
    ...(installation.lastOperationStatus && { lastOperationStatus: installation.lastOperationStatus }),
    updateTime: installation.updateTime.toISOString(),
  };
}

function byId<T extends { id: string }>(rows: T[]): Map<string, T> {
  return new Map(rows.map((row) => [row.id, row]));
}

/** Loads what the views need for many installations in a fixed number of queries, whatever their number. */
export async function loadInstallationParts(
  em: EntityManager,
  installations: Installation[],
): Promise<InstallationParts[]> {
  if (!installations.length) return [];
  const configs = byId(
    await em.find(InstallationConfigEntity, { id: { $in: installations.map((row) => row.configId) } }),
  );
  const connections = await em.find(ConnectionEntity, {
    id: { $in: [...new Set(installations.map((row) => row.connectionId))] },
  });
  // An installation's group is its connection's: one query serves both.
  const groupIds = new Set([...installations, ...connections].map((row) => row.groupId));
  const groupRows = await em.find(GroupEntity, { id: { $in: [...groupIds] } });
  const connectionViewsById = new Map(
    (await connectionViews(em, connections, {}, { groups: groupRows })).map(
      (view) => [view.id, view] as const,
    ),
  );
  const groups = byId(groupRows);
  const deliveredTo = new Map(
    installations.map((row) => [
      row.id,
      deliveredToNames(configs.get(row.configId)!.content as InstallationConfigContent),
    ]),
  );
  const destinations = await destinationsByName(
    em,
    installations.map((row) => ({ projectId: row.projectId, names: deliveredTo.get(row.id)! })),
  );
  return installations.map((installation) => ({
    installation,
    config: configs.get(installation.configId)!,
    connection: connectionViewsById.get(installation.connectionId)!,
    group: groups.get(installation.groupId)!,
    destinations: deliveredTo
      .get(installation.id)!
      .flatMap((name) => destinations.get(`${installation.projectId}/${name}`) ?? []),
  }));
}

export async function installationViews(
  em: EntityManager,
  installations: Installation[],
): Promise<InstallationView[]> {
  return (await loadInstallationParts(em, installations)).map(installationView);
}
