import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ConsumerEntity,
  GroupEntity,
  type Connection,
  type Consumer,
  type Group,
} from '../../db/entities/connection.js';
import { type EventType } from '../../schemas/notifications.js';
import { recordEvent } from '../events.js';

/** The `connection.*` notifications: a connection was created, changed, failed or was deleted. */

async function partiesOf(
  em: EntityManager,
  connection: Connection,
): Promise<{ group: Group; consumer: Consumer }> {
  const group = await em.findOneOrFail(GroupEntity, { id: connection.groupId });
  const consumer = await em.findOneOrFail(ConsumerEntity, { id: connection.consumerId });
  return { group, consumer };
}

/**
 * Writes a `connection.*` notification in the caller's transaction. The payload names the
 * connection the way installation events do; `connection.error` adds why (`recordConnectionError`).
 */
export async function recordConnectionEvent(
  em: EntityManager,
  connection: Connection,
  type: Extract<EventType, `connection.${string}`>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const { group, consumer } = await partiesOf(em, connection);
  recordEvent(em, connection.projectId, type, {
    projectId: connection.projectId,
    provider: connection.provider,
    connectionId: connection.id,
    groupRef: group.groupRef,
    groupName: group.groupName,
    consumerRef: consumer.consumerRef,
    consumerName: consumer.consumerName,
    ...(connection.providerWorkspaceRef && { providerWorkspaceRef: connection.providerWorkspaceRef }),
    authScheme: connection.authScheme,
    status: connection.status,
    ...extra,
  });
}

/**
 * `connection.error`, saying why as the public payload does: `errors`, a list of strings, and the
 * same list under its deprecated name `error`.
 */
export async function recordConnectionError(
  em: EntityManager,
  connection: Connection,
  reason: string,
): Promise<void> {
  await recordConnectionEvent(em, connection, 'connection.error', { errors: [reason], error: [reason] });
}
