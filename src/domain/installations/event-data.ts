import type { EntityManager } from '@mikro-orm/postgresql';
import { ConnectionEntity, ConsumerEntity, GroupEntity } from '../../db/entities/connection.js';
import {
  InstallationConfigEntity,
  type Installation,
  type InstallationConfig,
} from '../../db/entities/installation.js';
import { IntegrationEntity } from '../../db/entities/integration.js';
import { configView } from './views.js';

/**
 * The fields every installation notification carries (COMPAT "Notification payloads"): who the
 * installation belongs to, by id and by the builder's own refs and names.
 */
export interface InstallationEventFields extends Record<string, unknown> {
  projectId: string;
  provider: string;
  integrationId: string;
  integrationName: string;
  installationId: string;
  connectionId: string;
  groupRef: string;
  groupName: string;
  consumerRef: string;
  consumerName: string;
}

export async function installationEventFields(
  em: EntityManager,
  installation: Installation,
): Promise<InstallationEventFields> {
  const [integration, connection, group] = await Promise.all([
    em.findOneOrFail(IntegrationEntity, { id: installation.integrationId }),
    em.findOneOrFail(ConnectionEntity, { id: installation.connectionId }),
    em.findOneOrFail(GroupEntity, { id: installation.groupId }),
  ]);
  const consumer = await em.findOneOrFail(ConsumerEntity, { id: connection.consumerId });
  return {
    projectId: installation.projectId,
    provider: integration.provider,
    integrationId: integration.id,
    integrationName: integration.name,
    installationId: installation.id,
    connectionId: connection.id,
    groupRef: group.groupRef,
    groupName: group.groupName,
    consumerRef: consumer.consumerRef,
    consumerName: consumer.consumerName,
  };
}

/** `installation.created` / `.deleted` carry `config`; `.updated` adds `lastConfig`. */
export async function installationEventData(
  em: EntityManager,
  installation: Installation,
  config: InstallationConfig,
  lastConfig?: InstallationConfig,
): Promise<Record<string, unknown>> {
  return {
    ...(await installationEventFields(em, installation)),
    config: configView(config),
    ...(lastConfig && { lastConfig: configView(lastConfig) }),
  };
}

export async function currentConfig(
  em: EntityManager,
  installation: Installation,
): Promise<InstallationConfig> {
  return em.findOneOrFail(InstallationConfigEntity, { id: installation.configId });
}
