import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { em as newEntityManager } from '../../src/db/orm.js';
import { DeliveryAttemptEntity } from '../../src/db/entities/delivery.js';
import { DestinationEntity } from '../../src/db/entities/operation.js';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `POST /destinations/{name}:test`: one message now, signed and addressed like every other, and the
 * destination's answer in the response; nothing recorded, retried or counted against its health.
 */

let stack: TestStack;
let receiver: WebhookReceiver;
let broker: ChannelModel;
let channel: Channel;

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await WebhookReceiver.start();
  broker = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
  channel = await broker.createChannel();
});

afterAll(async () => {
  await broker?.close();
  await receiver?.stop();
  await closeDestinationTypes();
  await stack?.close();
});

const path = (name: string) => `/projects/${stack.project.id}/destinations/${encodeURIComponent(name)}:test`;

async function webhook(url = receiver.url()): Promise<string> {
  const signingSecret = generateSigningSecret();
  receiver.secrets.push(signingSecret);
  const name = `t-${randomUUID().slice(0, 8)}`;
  const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: { name, type: 'webhook', metadata: { url }, secrets: { signingSecret } },
  });
  expect(created.status).toBe(201);
  return name;
}

async function stored(name: string) {
  return (await newEntityManager()).findOneOrFail(DestinationEntity, { projectId: stack.project.id, name });
}

describe('testing a destination', () => {
  it('sends one signed test message to a webhook and answers what it said, recording nothing', async () => {
    const name = await webhook();
    receiver.respond(() => ({ status: 200, body: 'thanks' }));
    const before = receiver.requests.length;
    const answer = await stack.api('POST', path(name));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ delivered: true, status: 200, answer: 'thanks' });
    expect(answer.body.messageId).toMatch(/^msg_test_[0-9a-f]{32}$/);
    expect(answer.body.error).toBeUndefined();

    const sent = receiver.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].verified).toBe(true);
    expect(sent[0].messageId).toBe(answer.body.messageId);
    expect(sent[0].body).toMatchObject({
      notificationType: 'destination.test',
      data: { projectId: stack.project.id, destinationName: name },
    });

    const destination = await stored(name);
    const attempts = await (
      await newEntityManager()
    ).count(DeliveryAttemptEntity, { destinationId: destination.id });
    expect(attempts).toBe(0);

    // A second test is a new message.
    const again = await stack.api('POST', path(destination.id));
    expect(again.body.delivered).toBe(true);
    expect(again.body.messageId).not.toBe(answer.body.messageId);
  });

  it('says why a refusing destination did not take it, without failing the destination', async () => {
    const name = await webhook();
    receiver.respond(() => ({ status: 503, body: 'down for maintenance' }));
    const answer = await stack.api('POST', path(name));
    receiver.respond(() => ({ status: 200 }));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ delivered: false, status: 503, retryable: true });
    expect(answer.body.error).toEqual(expect.any(String));
    const destination = await stored(name);
    expect(destination.firstFailureTime ?? null).toBeNull();
    expect(destination.disabledTime ?? null).toBeNull();

    // Nothing listens here: a network failure, answered, not thrown.
    const closed = await webhook('http://127.0.0.1:9/hook');
    const unreachable = await stack.api('POST', path(closed));
    expect(unreachable.status).toBe(200);
    expect(unreachable.body.delivered).toBe(false);
    expect(unreachable.body.error).toEqual(expect.any(String));
  });

  it('tests a disabled destination, which stays disabled', async () => {
    const name = await webhook();
    const em = await newEntityManager();
    const destination = await em.findOneOrFail(DestinationEntity, { projectId: stack.project.id, name });
    destination.disabledTime = new Date();
    await em.flush();
    const answer = await stack.api('POST', path(name));
    expect(answer.body.delivered).toBe(true);
    expect((await stored(name)).disabledTime).toBeInstanceOf(Date);
  });

  it('sends to other types as they send everything: a RabbitMQ exchange gets it with the message id', async () => {
    const exchange = `ferry-test-${randomUUID().slice(0, 8)}`;
    await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, '#');
    const name = `rmq-${randomUUID().slice(0, 8)}`;
    const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
      body: {
        name,
        type: 'rabbitmq',
        metadata: { serverUrl: 'amqp://127.0.0.1:5672', exchange },
        secrets: { username: 'guest', password: 'guest' },
      },
    });
    expect(created.status).toBe(201);
    const answer = await stack.api('POST', path(name));
    expect(answer.body).toMatchObject({ delivered: true });
    expect(answer.body.answer).toContain(exchange);
    const message = await channel.get(queue, { noAck: true });
    expect(message && message.properties.messageId).toBe(answer.body.messageId);
    expect(message && JSON.parse(message.content.toString()).notificationType).toBe('destination.test');
  });

  it('answers 404 for a destination the project does not have, and 401 without a key', async () => {
    const missing = await stack.api('POST', path('no-such-destination'));
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    const anonymous = await stack.api('POST', path('no-such-destination'), { apiKey: '' });
    expect(anonymous.status).toBe(401);
  });
});
