import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';
import { transaction } from '../../src/db/orm.js';
import { recordEvent } from '../../src/domain/events.js';
import { OrgMembershipEntity } from '../../src/db/entities/org.js';
import { config } from '../../src/config.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';

let stack: TestStack;
let base: string;

beforeAll(async () => {
  stack = await startTestStack();
  base = `/projects/${stack.project.name}`;
});
afterAll(async () => stack.close());

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

async function newTopic(name = unique('topic')) {
  const created = await stack.api('POST', `${base}/topics`, { body: { name } });
  expect(created.status).toBe(201);
  return created.body;
}

async function newDestination(api = stack.api, projectBase = base) {
  const created = await api('POST', `${projectBase}/destinations`, {
    body: { name: unique('hook'), type: 'webhook', metadata: { url: 'http://127.0.0.1:9/hook' } },
  });
  expect(created.status).toBe(201);
  return created.body;
}

function expectIssue(response: { status: number; body: any }, location: string, name: string) {
  expect(response.status).toBe(400);
  expect(response.body.title).toBe('Bad Request');
  expect(response.body.issues).toMatchObject(
    expect.arrayContaining([expect.objectContaining({ in: location, name })]),
  );
}

describe('topics', () => {
  it('takes a name typed composed or decomposed as one name, kept in NFC', async () => {
    const composed = 'caf\u00e9 orders'; // é as one character
    const decomposed = 'cafe\u0301 orders'; // e + combining acute: looks the same
    const created = await stack.api('POST', `${base}/topics`, { body: { name: decomposed } });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe(composed);
    expect((await stack.api('GET', `${base}/topics/${created.body.id}`)).body.name).toBe(composed);
    const again = await stack.api('POST', `${base}/topics`, { body: { name: composed } });
    expect(again.status).toBe(409);
    const other = await newTopic();
    const renamed = await stack.api('PATCH', `${base}/topics/${other.id}`, {
      body: { updateMask: ['name'], topic: { name: decomposed } },
    });
    expect(renamed.status).toBe(409);
    const listed = (await stack.api('GET', `${base}/topics`)).body as { name: string }[];
    expect(listed.filter((topic) => topic.name.normalize('NFC') === composed)).toHaveLength(1);
  });

  it('creates, lists, gets, renames and deletes a topic', async () => {
    const topic = await newTopic('orders');
    expect(topic).toMatchObject({ name: 'orders', projectId: stack.project.id });
    expect((await stack.api('GET', `${base}/topics`)).body).toEqual(expect.arrayContaining([topic]));
    expect((await stack.api('GET', `${base}/topics/${topic.id}`)).body).toEqual(topic);

    const renamed = await stack.api('PATCH', `${base}/topics/${topic.id}`, {
      body: { updateMask: ['name'], topic: { name: 'orders-v2' } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: topic.id, name: 'orders-v2' });
    // The public API's body: the new name alone.
    const publicRename = await stack.api('PATCH', `${base}/topics/${topic.id}`, {
      body: { name: 'orders-v3' },
    });
    expect(publicRename.status).toBe(200);
    expect(publicRename.body).toMatchObject({ id: topic.id, name: 'orders-v3' });
    expect((await stack.api('GET', `${base}/topics/${topic.id}`)).body.name).toBe('orders-v3');

    expect((await stack.api('DELETE', `${base}/topics/${topic.id}`)).status).toBe(204);
    expect((await stack.api('GET', `${base}/topics/${topic.id}`)).status).toBe(404);
    expect((await stack.api('DELETE', `${base}/topics/${topic.id}`)).status).toBe(404);
  });

  it('refuses a duplicate name with 409, on create and on rename', async () => {
    const name = unique('dup');
    await newTopic(name);
    const duplicate = await stack.api('POST', `${base}/topics`, { body: { name } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail).toContain(name);
    const other = await newTopic();
    const rename = await stack.api('PATCH', `${base}/topics/${other.id}`, {
      body: { updateMask: ['name'], topic: { name } },
    });
    expect(rename.status).toBe(409);
  });

  it('validates topic input', async () => {
    expectIssue(await stack.api('POST', `${base}/topics`, { body: {} }), 'body', 'name');
    expectIssue(await stack.api('POST', `${base}/topics`, { body: { name: ' padded ' } }), 'body', 'name');
    const topic = await newTopic();
    const readOnly = await stack.api('PATCH', `${base}/topics/${topic.id}`, {
      body: { updateMask: ['projectId'], topic: {} },
    });
    expectIssue(readOnly, 'body', 'updateMask');
    const missingValue = await stack.api('PATCH', `${base}/topics/${topic.id}`, {
      body: { updateMask: ['name'], topic: {} },
    });
    expectIssue(missingValue, 'body', 'topic.name');
    expectIssue(await stack.api('PATCH', `${base}/topics/${topic.id}`, { body: {} }), 'body', 'name');
    expectIssue(
      await stack.api('PATCH', `${base}/topics/${topic.id}`, { body: { name: ' padded ' } }),
      'body',
      'name',
    );
    const both = await stack.api('PATCH', `${base}/topics/${topic.id}`, {
      body: { name: 'a', updateMask: ['name'], topic: { name: 'b' } },
    });
    expect(both.status).toBe(400);
    expect((await stack.api('GET', `${base}/topics/${topic.id}`)).body.name).toBe(topic.name);
  });

  it('hides missing topics and other projects’ topics behind 404, and needs credentials', async () => {
    expect((await stack.api('GET', `${base}/topics/${randomUUID()}`)).status).toBe(404);
    expect((await stack.api('GET', `${base}/topics/not-a-uuid`)).status).toBe(404);
    const other = await createTestProject();
    const foreign = await request('POST', `${stack.urls.api}/projects/${other.id}/topics`, {
      apiKey: other.apiKey,
      body: { name: 'theirs' },
    });
    expect((await stack.api('GET', `${base}/topics/${foreign.body.id}`)).status).toBe(404);
    expect(
      (
        await stack.api('PATCH', `${base}/topics/${foreign.body.id}`, {
          body: { updateMask: ['name'], topic: { name: 'mine' } },
        })
      ).status,
    ).toBe(404);
    expect((await request('GET', `${stack.urls.api}${base}/topics`)).status).toBe(401);
  });
});

describe('notification event-topic routes', () => {
  const routes = () => `${base}/notification-event-topic-routes`;

  it('routes an event type to a topic, lists with filters, and deletes', async () => {
    const topic = await newTopic();
    const other = await newTopic();
    const created = await stack.api('POST', routes(), {
      body: { eventType: 'installation.created', topicId: topic.id },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      eventType: 'installation.created',
      topicId: topic.id,
      projectId: stack.project.id,
    });
    await stack.api('POST', routes(), { body: { eventType: 'connection.error', topicId: topic.id } });
    await stack.api('POST', routes(), { body: { eventType: 'installation.created', topicId: other.id } });

    const byTopic = await stack.api('GET', `${routes()}?topicId=${topic.id}`);
    expect(byTopic.body.map((route: any) => route.eventType).sort()).toEqual([
      'connection.error',
      'installation.created',
    ]);
    const byType = await stack.api('GET', `${routes()}?eventType=installation.created&topicId=${other.id}`);
    expect(byType.body).toHaveLength(1);
    expect(byType.body[0].topicId).toBe(other.id);
    const all = await stack.api('GET', `${routes()}?eventType=installation.created`);
    expect(all.body.map((route: any) => route.topicId)).toEqual(expect.arrayContaining([topic.id, other.id]));

    expect((await stack.api('GET', `${routes()}/${created.body.id}`)).body).toEqual(created.body);
    expect((await stack.api('DELETE', `${routes()}/${created.body.id}`)).status).toBe(204);
    expect((await stack.api('DELETE', `${routes()}/${created.body.id}`)).status).toBe(404);
    expect((await stack.api('GET', `${routes()}?topicId=${topic.id}`)).body).toHaveLength(1);
  });

  it('accepts every event type of the spec and refuses others', async () => {
    const topic = await newTopic();
    for (const eventType of [
      'read.triggered.error',
      'subscribe.delete.success',
      'destination.webhook.disabled',
    ]) {
      expect((await stack.api('POST', routes(), { body: { eventType, topicId: topic.id } })).status).toBe(
        201,
      );
    }
    const unknown = await stack.api('POST', routes(), {
      body: { eventType: 'installation.exploded', topicId: topic.id },
    });
    expectIssue(unknown, 'body', 'eventType');
    expect(unknown.body.issues[0].detail).toContain('installation.created');
    expectIssue(await stack.api('GET', `${routes()}?eventType=nope`), 'query', 'eventType');
    expectIssue(
      await stack.api('POST', routes(), { body: { eventType: 'connection.created' } }),
      'body',
      'topicId',
    );
    expectIssue(
      await stack.api('POST', routes(), { body: { eventType: 'connection.created', topicId: 'x' } }),
      'body',
      'topicId',
    );
  });

  it('needs an existing topic of the project, and refuses a duplicate route with 409', async () => {
    const missing = await stack.api('POST', routes(), {
      body: { eventType: 'connection.created', topicId: randomUUID() },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/Topic .* was not found/);
    const topic = await newTopic();
    const body = { eventType: 'connection.updated', topicId: topic.id };
    expect((await stack.api('POST', routes(), { body })).status).toBe(201);
    const duplicate = await stack.api('POST', routes(), { body });
    expect(duplicate.status).toBe(409);
    expect((await stack.api('DELETE', `${routes()}/${randomUUID()}`)).status).toBe(404);
  });

  it('accepts a builder’s bearer token, as the spec lists both schemes', async () => {
    const token = await transaction(async (em) => {
      const builder = await findOrCreateBuilder(em, `${unique('b')}@example.com`);
      em.create(OrgMembershipEntity, {
        id: randomUUID(),
        orgId: stack.project.orgId,
        builderId: builder.id,
        role: 'member',
        createTime: new Date(),
        updateTime: new Date(),
      });
      return issueBuilderToken(builder, config().builderTokenSecret);
    });
    const topic = await newTopic();
    const created = await request('POST', `${stack.urls.api}${routes()}`, {
      bearer: token,
      body: { eventType: 'write.async.done', topicId: topic.id },
    });
    expect(created.status).toBe(201);
    const listed = await request('GET', `${stack.urls.api}${routes()}?eventType=write.async.done`, {
      bearer: token,
    });
    expect(listed.body.map((route: any) => route.id)).toContain(created.body.id);
  });
});

describe('topic-destination routes', () => {
  const routes = () => `${base}/topic-destination-routes`;

  it('subscribes a destination to a topic, lists with filters, and deletes', async () => {
    const topic = await newTopic();
    const otherTopic = await newTopic();
    const destination = await newDestination();
    const created = await stack.api('POST', routes(), {
      body: { topicId: topic.id, destinationId: destination.id },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      topicId: topic.id,
      destinationId: destination.id,
      projectId: stack.project.id,
    });
    await stack.api('POST', routes(), { body: { topicId: otherTopic.id, destinationId: destination.id } });

    expect((await stack.api('GET', `${routes()}?topicId=${topic.id}`)).body).toEqual([created.body]);
    expect((await stack.api('GET', `${routes()}?destinationId=${destination.id}`)).body).toHaveLength(2);
    expect(
      (await stack.api('GET', `${routes()}?destinationId=${destination.id}&topicId=${otherTopic.id}`)).body,
    ).toHaveLength(1);
    expect((await stack.api('GET', `${routes()}/${created.body.id}`)).body).toEqual(created.body);
    expect((await stack.api('DELETE', `${routes()}/${created.body.id}`)).status).toBe(204);
    expect((await stack.api('GET', `${routes()}/${created.body.id}`)).status).toBe(404);
  });

  it('refuses a duplicate pair with 409 and unknown topics or destinations with 404', async () => {
    const topic = await newTopic();
    const destination = await newDestination();
    const body = { topicId: topic.id, destinationId: destination.id };
    expect((await stack.api('POST', routes(), { body })).status).toBe(201);
    expect((await stack.api('POST', routes(), { body })).status).toBe(409);
    const noTopic = await stack.api('POST', routes(), { body: { ...body, topicId: randomUUID() } });
    expect(noTopic.status).toBe(404);
    const noDestination = await stack.api('POST', routes(), {
      body: { ...body, destinationId: randomUUID() },
    });
    expect(noDestination.status).toBe(404);
    expect(noDestination.body.detail).toMatch(/Destination .* was not found/);

    const other = await createTestProject();
    const otherApi = (method: string, path: string, options: any = {}) =>
      request(method, `${stack.urls.api}${path}`, { apiKey: other.apiKey, ...options });
    const foreign = await newDestination(otherApi, `/projects/${other.id}`);
    expect((await stack.api('POST', routes(), { body: { ...body, destinationId: foreign.id } })).status).toBe(
      404,
    );
    expectIssue(await stack.api('POST', routes(), { body: { topicId: topic.id } }), 'body', 'destinationId');
    expectIssue(await stack.api('GET', `${routes()}?topicId=nope`), 'query', 'topicId');
  });

  it('goes away with its topic or its destination', async () => {
    const topic = await newTopic();
    const destination = await newDestination();
    await stack.api('POST', routes(), { body: { topicId: topic.id, destinationId: destination.id } });
    await stack.api('POST', `${base}/notification-event-topic-routes`, {
      body: { eventType: 'installation.deleted', topicId: topic.id },
    });
    expect((await stack.api('DELETE', `${base}/topics/${topic.id}`)).status).toBe(204);
    expect((await stack.api('GET', `${routes()}?topicId=${topic.id}`)).body).toEqual([]);
    expect(
      (await stack.api('GET', `${base}/notification-event-topic-routes?topicId=${topic.id}`)).body,
    ).toEqual([]);

    const kept = await newTopic();
    await stack.api('POST', routes(), { body: { topicId: kept.id, destinationId: destination.id } });
    expect((await stack.api('DELETE', `${base}/destinations/${destination.id}`)).status).toBe(204);
    expect((await stack.api('GET', `${routes()}?destinationId=${destination.id}`)).body).toEqual([]);
  });
});

describe('events', () => {
  it('lists the project’s events newest first, routed or not, with cursor pagination and a type filter', async () => {
    const project = await createTestProject();
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      ids.push(
        await transaction(
          async (em) =>
            recordEvent(em, project.id, index % 2 ? 'connection.error' : 'connection.created', { index }).id,
        ),
      );
    }
    const list = (query: string) =>
      request('GET', `${stack.urls.api}/projects/${project.id}/events${query}`, { apiKey: project.apiKey });

    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await list(`?pageSize=2${token ? `&pageToken=${token}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.results.map((event: any) => event.id));
      token = page.body.pagination.nextPageToken;
      expect(page.body.pagination.done).toBe(token === undefined);
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const errors = await list('?eventType=connection.error');
    expect(errors.body.results.map((event: any) => event.data.index)).toEqual([3, 1]);
    expect(errors.body.results[0]).toMatchObject({ projectId: project.id, eventType: 'connection.error' });
    expect(errors.body.pagination).toEqual({ done: true });

    // Another project's key sees none of them.
    const mine = await stack.api('GET', `${base}/events`);
    expect(mine.body.results.map((event: any) => event.id)).not.toContain(ids[0]);
  });

  it('validates the event list query', async () => {
    expectIssue(await stack.api('GET', `${base}/events?pageToken=garbage`), 'query', 'pageToken');
    expectIssue(await stack.api('GET', `${base}/events?pageSize=0`), 'query', 'pageSize');
    expectIssue(await stack.api('GET', `${base}/events?eventType=connection.exploded`), 'query', 'eventType');
    expect((await request('GET', `${stack.urls.api}${base}/events`)).status).toBe(401);
  });
});
