import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import { isUuid } from '../../core/ids.js';
import {
  ConnectionEntity,
  ConsumerEntity,
  GroupEntity,
  type Connection,
  type Group,
  type Consumer,
} from '../../db/entities/connection.js';
import {
  InstallationConfigEntity,
  InstallationEntity,
  type Installation,
  type InstallationConfig,
} from '../../db/entities/installation.js';
import { RevisionEntity, type Integration, type Revision } from '../../db/entities/integration.js';
import type { ResultMessageContext } from '../../delivery/messages.js';
import type { ReadObject } from '../../schemas/integration-content.js';
import type { ReadConfig } from '../../schemas/installations.js';
import { findIntegration } from '../integrations.js';
import { readPlan } from '../installations/read-plan.js';

/**
 * Finding an installation and what one of its read objects is configured to do: the manifest's
 * declaration (fields, mapping, delivery) and the customer's config (selection, destination).
 */

export async function findInstallationOfIntegration(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  installationId: string,
): Promise<Installation> {
  const integration = await findIntegration(em, projectId, integrationIdOrName);
  const installation = isUuid(installationId)
    ? await em.findOne(InstallationEntity, { id: installationId, projectId, integrationId: integration.id })
    : null;
  if (!installation) throw ProblemError.notFound(`Installation "${installationId}" was not found.`);
  return installation;
}

/** The installation of `integration` for the group `groupRef`; 404 when the group or installation is unknown. */
export async function findInstallationForGroup(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  groupRef: string,
): Promise<{ integration: Integration; installation: Installation; group: Group }> {
  const integration = await findIntegration(em, projectId, integrationIdOrName);
  const group = await em.findOne(GroupEntity, { projectId, groupRef });
  const installation =
    group &&
    (await em.findOne(InstallationEntity, { projectId, integrationId: integration.id, groupId: group.id }));
  if (!group || !installation) {
    throw ProblemError.notFound(
      `Group "${groupRef}" has no installation of integration "${integration.name}".`,
    );
  }
  return { integration, installation, group };
}

export interface ReadObjectSetup {
  config: InstallationConfig;
  /** The manifest's declaration of the object. */
  declared: ReadObject;
  /** The customer's config of the object; absent for `enabled: always` objects nobody selected. */
  configured?: ReadConfig;
  destinationName: string;
}

/**
 * How the installation's current config reads `objectName`, or undefined when the installation
 * does not read it (not selected and not `enabled: always`, disabled, or not in the manifest).
 */
export async function readObjectSetup(
  em: EntityManager,
  installation: Installation,
  objectName: string,
): Promise<ReadObjectSetup | undefined> {
  const config = await em.findOneOrFail(InstallationConfigEntity, { id: installation.configId });
  const revision = await em.findOneOrFail(RevisionEntity, { id: config.revisionId });
  return objectSetupOf(config, revision, objectName);
}

/** `readObjectSetup` for a config and revision already at hand. */
export function objectSetupOf(
  config: InstallationConfig,
  revision: Revision,
  objectName: string,
): ReadObjectSetup | undefined {
  const content = config.content;
  const declared = revision.content.read?.objects.find((object) => object.objectName === objectName);
  if (!declared || !readPlan(content, revision.content).some((plan) => plan.objectName === objectName)) {
    return undefined;
  }
  const configured = content.read?.objects?.[objectName];
  return { config, declared, configured, destinationName: configured?.destination ?? declared.destination };
}

export interface InstallationParties {
  integration: Integration;
  connection: Connection;
  group: Group;
  consumer: Consumer;
}

export async function installationParties(
  em: EntityManager,
  installation: Installation,
): Promise<InstallationParties> {
  // One after the other: inside a transaction the entity manager has a single connection.
  const integration = await findIntegration(em, installation.projectId, installation.integrationId);
  const connection = await em.findOneOrFail(ConnectionEntity, { id: installation.connectionId });
  const group = await em.findOneOrFail(GroupEntity, { id: installation.groupId });
  const consumer = await em.findOneOrFail(ConsumerEntity, { id: connection.consumerId });
  return { integration, connection, group, consumer };
}

/**
 * Who and what a result message is about (everything but its records): the one place reads,
 * change events and schema-watch messages get it from.
 */
export function resultMessageContext(
  installation: Installation,
  parties: Pick<InstallationParties, 'connection' | 'group' | 'consumer'>,
  message: {
    action: ResultMessageContext['action'];
    /** The object as the provider names it, and the name the manifest maps it to, if any. */
    objectName: string;
    mapToName?: string;
    operationTime: string;
  },
): ResultMessageContext {
  const { connection, group, consumer } = parties;
  return {
    action: message.action,
    projectId: installation.projectId,
    provider: connection.provider,
    ...(connection.providerWorkspaceRef && { workspace: connection.providerWorkspaceRef }),
    groupRef: group.groupRef,
    groupName: group.groupName,
    consumerRef: consumer.consumerRef,
    consumerName: consumer.consumerName,
    installationId: installation.id,
    installationUpdateTime: installation.updateTime.toISOString(),
    objectName: message.mapToName ?? message.objectName,
    rawObjectName: message.objectName,
    operationTime: message.operationTime,
  };
}

/** What installation events carry (COMPAT.md "Notification payloads"), without the config. */
export function installationEventBase(
  installation: Installation,
  parties: InstallationParties,
): Record<string, unknown> {
  return {
    projectId: installation.projectId,
    provider: parties.integration.provider,
    integrationId: parties.integration.id,
    integrationName: parties.integration.name,
    installationId: installation.id,
    connectionId: parties.connection.id,
    groupRef: parties.group.groupRef,
    groupName: parties.group.groupName,
    consumerRef: parties.consumer.consumerRef,
    consumerName: parties.consumer.consumerName,
  };
}
