import Type, { type Static } from 'typebox';
import { defineRoute } from './route.js';
import { ProjectPathParams } from '../schemas/common.js';
import { CreateTopicBody, TopicParams, TopicSchema, UpdateTopicBody } from '../schemas/topics.js';
import { TopicEntity } from '../db/entities/notification.js';
import { createTopic, findTopic, topicView, updateTopic } from '../domain/topics.js';
import { ProblemError } from '../core/problem.js';

export const topicRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/topics',
    operationId: 'createTopic',
    summary: 'Create a notification topic',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: CreateTopicBody,
    responses: { 201: { description: 'Created', schema: TopicSchema } },
  }).handle(async ({ em, project, body }) => {
    const topic = await em.transactional((tx) => createTopic(tx, project.id, body.name));
    return { status: 201, body: topicView(topic) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/topics',
    operationId: 'listTopics',
    summary: 'List notification topics',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    responses: { 200: { description: 'Topics', schema: Type.Array(TopicSchema) } },
  }).handle(async ({ em, project }) => {
    const topics = await em.find(
      TopicEntity,
      { projectId: project.id },
      { orderBy: { createTime: 'asc', name: 'asc' } },
    );
    return { status: 200, body: topics.map(topicView) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/topics/{topicId}',
    operationId: 'getTopic',
    summary: 'Get a notification topic',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: TopicParams,
    responses: { 200: { description: 'The topic', schema: TopicSchema } },
  }).handle(async ({ em, project, params }) => {
    return { status: 200, body: topicView(await findTopic(em, project.id, params.topicId)) };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/topics/{topicId}',
    operationId: 'updateTopic',
    summary: 'Rename a notification topic',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: TopicParams,
    body: UpdateTopicBody,
    responses: { 200: { description: 'The updated topic', schema: TopicSchema } },
  }).handle(async ({ em, project, params, body }) => {
    const { patch, updateMask } = topicUpdate(body);
    const topic = await em.transactional(async (tx) =>
      updateTopic(tx, await findTopic(tx, project.id, params.topicId), patch, updateMask),
    );
    return { status: 200, body: topicView(topic) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/topics/{topicId}',
    operationId: 'deleteTopic',
    summary: 'Delete a notification topic and the routes through it',
    tags: ['Notifications'],
    auth: ['apiKey', 'bearer'],
    params: TopicParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    // The routes to and from the topic go with it (foreign keys cascade).
    await em.remove(await findTopic(em, project.id, params.topicId)).flush();
    return { status: 204 };
  }),
];

/** The public API's `{name}`, or this API's `{updateMask, topic}`: one of the two, whole. */
function topicUpdate(body: Static<typeof UpdateTopicBody>): {
  patch: { name?: string };
  updateMask: string[];
} {
  if (body.name !== undefined) {
    if (body.updateMask || body.topic) {
      throw ProblemError.badRequest('Give either name, or updateMask with topic, not both.');
    }
    return { patch: { name: body.name }, updateMask: ['name'] };
  }
  if (!body.updateMask || !body.topic) {
    throw ProblemError.invalid(
      [{ in: 'body', name: 'name', detail: 'name is required (or updateMask with topic)' }],
      'Give the new name, or updateMask with topic.',
    );
  }
  return { patch: body.topic, updateMask: body.updateMask };
}
