import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../core/ids.js';
import { ProblemError } from '../../core/problem.js';
import {
  ConnectionEntity,
  ConsumerEntity,
  GroupEntity,
  type Connection,
} from '../../db/entities/connection.js';

/** Finding a project's connections: one by id, or a list filtered by provider, group or consumer. */

export async function findConnection(em: EntityManager, projectId: string, id: string): Promise<Connection> {
  const connection = isUuid(id) ? await em.findOne(ConnectionEntity, { id, projectId }) : null;
  if (!connection) {
    throw ProblemError.notFound(
      `Connection "${id}" was not found.`,
      'Check the connection ID and the project ID.',
    );
  }
  return connection;
}

export interface ConnectionFilters {
  provider?: string;
  groupRef?: string;
  consumerRef?: string;
}

export async function listConnections(
  em: EntityManager,
  projectId: string,
  filters: ConnectionFilters,
): Promise<Connection[]> {
  const where: Record<string, unknown> = { projectId };
  if (filters.provider) where.provider = filters.provider;
  if (filters.groupRef) {
    const group = await em.findOne(GroupEntity, { projectId, groupRef: filters.groupRef });
    if (!group) return [];
    where.groupId = group.id;
  }
  if (filters.consumerRef) {
    const consumer = await em.findOne(ConsumerEntity, { projectId, consumerRef: filters.consumerRef });
    if (!consumer) return [];
    where.consumerId = consumer.id;
  }
  return em.find(ConnectionEntity, where, { orderBy: { createTime: 'asc', id: 'asc' } });
}
