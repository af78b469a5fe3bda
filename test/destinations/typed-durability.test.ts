import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import amqp, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../installations/support.js';
import { createReadFixture, runRead } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * The webhook's promises hold for every type: a RabbitMQ exchange nobody is bound to fails the
 * read's messages (returned, retryable), the destination is disabled after the disable-after
 * period with destination.webhook.disabled and destination.disabled, and re-enabling it, once a
 * queue is bound, resumes the read: every record lands on the broker.
 */

const CONTACTS = 150;
const BROKER = 'amqp://127.0.0.1:5672/';

let sandbox: Sandbox;
let stack: TestStack;
let broker: ChannelModel;
let channel: Channel;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  process.env.FERRY_DESTINATION_DISABLE_AFTER_SECONDS = '1';
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = '0,100ms,200ms,1500ms,1500ms';
  stack = await startTestStack({ worker: true });
  broker = await amqp.connect(BROKER);
  channel = await broker.createChannel();
});

afterAll(async () => {
  delete process.env.FERRY_DESTINATION_DISABLE_AFTER_SECONDS;
  delete process.env.FERRY_DELIVERY_RETRY_SCHEDULE;
  await broker?.close();
  await stack?.close();
  await closeDestinationTypes();
  await sandbox?.close();
});

const projectPath = () => `/projects/${stack.project.id}`;

describe('a rabbitmq destination that fails', () => {
  it('is disabled with both events, and re-enabling it resumes the read to the end', async () => {
    const exchange = `ferry-durable-${randomUUID().slice(0, 8)}`;
    await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
    const fixture = await createReadFixture(stack, {
      declared: { delivery: { pageSize: 50 } },
      destination: {
        type: 'rabbitmq',
        metadata: { serverUrl: BROKER, exchange, routingKeyTemplate: '{objectName}' },
        secrets: { username: 'guest', password: 'guest' },
      },
    });
    await fixture.receiver.stop();
    try {
      const { operationId: failedId, result } = await runRead(stack, fixture, { readType: 'triggered' });
      expect(result.status).toBe('failure');
      const destination = await stack.api('GET', `${projectPath()}/destinations/${fixture.destinationName}`);
      expect(destination.body.disabled).toBe(true);
      for (const type of ['destination.webhook.disabled', 'destination.disabled']) {
        const events = await stack.api('GET', `${projectPath()}/events?eventType=${type}`);
        const event = events.body.results.find(
          (found: { data: { destinationId: string } }) => found.data.destinationId === fixture.destinationId,
        );
        expect(event).toBeDefined();
        expect(event.data.url).toContain(`exchange "${exchange}"`);
        if (type === 'destination.disabled')
          expect(event.data).toMatchObject({ type: 'rabbitmq', reason: 'failing' });
      }

      // A queue comes along; re-enabling resumes the read where it stopped.
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchange, '#');
      const enabled = await stack.api('PATCH', `${projectPath()}/destinations/${fixture.destinationName}`, {
        body: { updateMask: ['disabled'], destination: { disabled: false } },
      });
      expect(enabled.status).toBe(200);
      const resumed = await eventually(async () => {
        const listed = await stack.api(
          'GET',
          `${projectPath()}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/operations`,
        );
        const retry = listed.body.results?.find(
          (operation: { metadata?: { retryOf?: string } }) => operation.metadata?.retryOf === failedId,
        );
        return retry && retry.status !== 'in_progress' && retry;
      }, 60_000);
      expect(resumed.status).toBe('success');
      const messages: GetMessage[] = [];
      for (
        let message = await channel.get(queue, { noAck: true });
        message;
        message = await channel.get(queue, { noAck: true })
      ) {
        messages.push(message);
      }
      const ids = messages.flatMap((message) =>
        JSON.parse(message.content.toString()).result.map((record: { raw: { id: string } }) => record.raw.id),
      );
      // Nothing was accepted before the queue existed, so every record arrives exactly once now.
      expect(ids).toHaveLength(CONTACTS);
      expect(new Set(ids).size).toBe(CONTACTS);
    } finally {
      await channel.deleteExchange(exchange);
    }
  });
});
