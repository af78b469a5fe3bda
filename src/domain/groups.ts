import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConsumerEntity, GroupEntity, type Consumer, type Group } from '../db/entities/connection.js';
import type { ConsumerView, GroupView } from '../schemas/connections.js';

/**
 * Groups (the builder's customer organisations) and consumers (the people whose credentials a
 * connection holds) come into being with their first connection, identified by the builder's refs.
 */

export function groupView(group: Group): GroupView {
  return {
    groupRef: group.groupRef,
    groupName: group.groupName,
    projectId: group.projectId,
    createTime: group.createTime.toISOString(),
    updateTime: group.updateTime.toISOString(),
  };
}

export function consumerView(consumer: Consumer): ConsumerView {
  return {
    consumerRef: consumer.consumerRef,
    consumerName: consumer.consumerName,
    projectId: consumer.projectId,
    createTime: consumer.createTime.toISOString(),
    updateTime: consumer.updateTime.toISOString(),
  };
}

export function findGroupByRef(
  em: EntityManager,
  projectId: string,
  groupRef: string,
): Promise<Group | null> {
  return em.findOne(GroupEntity, { projectId, groupRef });
}

export function findConsumerByRef(
  em: EntityManager,
  projectId: string,
  consumerRef: string,
): Promise<Consumer | null> {
  return em.findOne(ConsumerEntity, { projectId, consumerRef });
}

/**
 * The group with this ref, created when missing. A name given renames it; a name left out keeps
 * the current one (or is the ref for a new group). Concurrent first connections of one group meet
 * in `insert ... on conflict`, so neither fails.
 */
export async function ensureGroup(
  em: EntityManager,
  projectId: string,
  groupRef: string,
  groupName?: string,
): Promise<Group> {
  const existing = await findGroupByRef(em, projectId, groupRef);
  if (existing) {
    if (groupName !== undefined && existing.groupName !== groupName) existing.groupName = groupName;
    return existing;
  }
  const now = new Date();
  return em.upsert(
    GroupEntity,
    {
      id: randomUUID(),
      projectId,
      groupRef,
      groupName: groupName ?? groupRef,
      createTime: now,
      updateTime: now,
    },
    {
      onConflictFields: ['projectId', 'groupRef'],
      onConflictAction: 'merge',
      onConflictMergeFields: groupName !== undefined ? ['groupName', 'updateTime'] : ['updateTime'],
    },
  );
}

/** The consumer with this ref, created when missing; naming rules as for groups. */
export async function ensureConsumer(
  em: EntityManager,
  projectId: string,
  consumerRef: string,
  consumerName?: string,
): Promise<Consumer> {
  const existing = await findConsumerByRef(em, projectId, consumerRef);
  if (existing) {
    if (consumerName !== undefined && existing.consumerName !== consumerName)
      existing.consumerName = consumerName;
    return existing;
  }
  const now = new Date();
  return em.upsert(
    ConsumerEntity,
    {
      id: randomUUID(),
      projectId,
      consumerRef,
      consumerName: consumerName ?? consumerRef,
      createTime: now,
      updateTime: now,
    },
    {
      onConflictFields: ['projectId', 'consumerRef'],
      onConflictAction: 'merge',
      onConflictMergeFields: consumerName !== undefined ? ['consumerName', 'updateTime'] : ['updateTime'],
    },
  );
}
