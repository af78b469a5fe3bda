import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectAsync, type MqttClient } from 'mqtt';
import { em as newEntityManager } from '../../src/db/orm.js';
import { DeliveryAttemptEntity } from '../../src/db/entities/delivery.js';
import { DestinationEntity } from '../../src/db/entities/operation.js';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * MQTT destinations against the Mosquitto on 127.0.0.1:1883: a subscriber of the test's own counts
 * what the broker passed on and reads Ferry's message id from the MQTT 5 user property.
 */

const SERVER = 'mqtt://127.0.0.1:1883';
let stack: TestStack;
let subscriber: MqttClient;
const received: { topic: string; body: string; messageId?: string }[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  subscriber = await connectAsync(SERVER, {
    protocolVersion: 5,
    clientId: `ferry-test-${randomUUID().slice(0, 8)}`,
  });
  subscriber.on('message', (topic, payload, packet) => {
    const property = packet.properties?.userProperties?.ferryMessageId;
    received.push({
      topic,
      body: payload.toString(),
      messageId: Array.isArray(property) ? property[0] : property,
    });
  });
});

afterAll(async () => {
  await subscriber?.endAsync();
  await closeDestinationTypes();
  await stack?.close();
});

const create = (body: Record<string, unknown>) =>
  stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: { name: `m-${randomUUID().slice(0, 8)}`, type: 'mqtt', ...body },
  });

function deliver(destinationId: string, messageId: string, body: string) {
  return attemptDelivery(
    {
      projectId: stack.project.id,
      destinationId,
      messageId,
      body,
      kind: 'notification',
    },
    config(),
  );
}

async function arrived(topic: string, count: number) {
  const deadline = Date.now() + 10_000;
  while (received.filter((m) => m.topic === topic).length < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return received.filter((m) => m.topic === topic);
}

describe('mqtt destinations', () => {
  it('publish each message once acknowledged, its id in the ferryMessageId user property, again on redelivery', async () => {
    const topic = `ferry-test/${randomUUID()}`;
    await subscriber.subscribeAsync(topic, { qos: 1 });
    const created = await create({ metadata: { serverUrl: SERVER, topic } });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toEqual({ serverUrl: SERVER, topic, qos: 1 });
    const body = JSON.stringify({ notificationType: 'test', data: { n: 1 } });
    expect(await deliver(created.body.id, 'msg_one', body)).toMatchObject({ delivered: true });
    expect(await deliver(created.body.id, 'msg_one', body)).toMatchObject({ delivered: true });
    expect(await deliver(created.body.id, 'msg_two', body)).toMatchObject({ delivered: true });
    const messages = await arrived(topic, 3);
    expect(messages.map((m) => m.messageId)).toEqual(['msg_one', 'msg_one', 'msg_two']);
    expect(messages.every((m) => m.body === body)).toBe(true);
    const rows = await (
      await newEntityManager()
    ).find(DeliveryAttemptEntity, { destinationId: created.body.id });
    expect(rows.every((row) => row.delivered && row.responseBody === `mqtt ${topic} qos 1`)).toBe(true);
  });

  it('fails retryably when no broker listens', async () => {
    const created = await create({
      metadata: { serverUrl: 'mqtt://127.0.0.1:1', topic: 'ferry-test/none' },
      secrets: { username: 'ferry', password: 'mqtt-secret-pw' },
    });
    expect(created.status).toBe(201);
    expect(await deliver(created.body.id, 'msg_x', '{}')).toMatchObject({
      delivered: false,
      retryable: true,
    });
    const rows = await (
      await newEntityManager()
    ).find(DeliveryAttemptEntity, { destinationId: created.body.id });
    expect(rows[0].error).toContain('ECONNREFUSED');
    expect(JSON.stringify(rows)).not.toContain('mqtt-secret-pw');
  });

  it.each([
    [{ topic: 't' }, ['metadata.serverUrl']],
    [{ serverUrl: SERVER }, ['metadata.topic']],
    [{ serverUrl: SERVER, topic: 'a/+/b' }, ['metadata.topic']],
    [{ serverUrl: SERVER, topic: 't', qos: 0 }, ['metadata.qos']],
    [{ serverUrl: 'amqp://127.0.0.1', topic: 't' }, ['metadata.serverUrl']],
    [{ serverUrl: 'mqtt://u:p@127.0.0.1', topic: 't' }, ['metadata.serverUrl']],
    [{ serverUrl: SERVER, topic: 't', secrets: { password: 'pw' } }, ['secrets.username']],
  ] as [Record<string, unknown>, string[]][])(
    '%j answers 400 naming the field and keeps nothing',
    async ({ secrets, ...metadata }, names) => {
      const name = `bad-${randomUUID().slice(0, 8)}`;
      const response = await create({ name, metadata, ...(secrets !== undefined && { secrets }) });
      expect(response.status).toBe(400);
      expect(response.body.issues.map((issue: { name: string }) => issue.name)).toEqual(names);
      expect(
        await (await newEntityManager()).count(DestinationEntity, { projectId: stack.project.id, name }),
      ).toBe(0);
    },
  );
});
