import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { isUuid } from '../core/ids.js';
import { TopicEntity, type Topic } from '../db/entities/notification.js';
import { TopicPatch, type TopicView } from '../schemas/topics.js';
import { applyUpdateMask } from './update-mask.js';

export function topicView(topic: Topic): TopicView {
  return {
    id: topic.id,
    projectId: topic.projectId,
    name: topic.name,
    createTime: topic.createTime.toISOString(),
    updateTime: topic.updateTime.toISOString(),
  };
}

export async function findTopic(em: EntityManager, projectId: string, topicId: string): Promise<Topic> {
  const topic = isUuid(topicId) ? await em.findOne(TopicEntity, { id: topicId, projectId }) : null;
  if (!topic) throw ProblemError.notFound(`Topic "${topicId}" was not found in this project.`);
  return topic;
}

const duplicateName = (name: string) => ProblemError.conflict(`A topic named "${name}" already exists.`);

async function assertNameFree(em: EntityManager, projectId: string, name: string, exceptId?: string) {
  const existing = await em.findOne(TopicEntity, { projectId, name });
  if (existing && existing.id !== exceptId) throw duplicateName(name);
}

/** Flushes, turning a lost race on the (project, name) unique constraint into the same 409. */
async function flushTopic(em: EntityManager, name: string): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw duplicateName(name);
    throw error;
  }
}

export async function createTopic(em: EntityManager, projectId: string, name: string): Promise<Topic> {
  await assertNameFree(em, projectId, name);
  const topic = em.create(TopicEntity, {
    id: randomUUID(),
    projectId,
    name,
    createTime: new Date(),
    updateTime: new Date(),
  });
  await flushTopic(em, name);
  return topic;
}

export async function updateTopic(
  em: EntityManager,
  topic: Topic,
  patch: { name?: string },
  updateMask: string[],
): Promise<Topic> {
  if (updateMask.includes('name') && patch.name !== undefined && patch.name !== topic.name) {
    await assertNameFree(em, topic.projectId, patch.name, topic.id);
  }
  applyUpdateMask(topic, patch, updateMask, TopicPatch, 'topic');
  await flushTopic(em, topic.name);
  return topic;
}
