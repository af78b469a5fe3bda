import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import amqp, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { em as newEntityManager } from '../../src/db/orm.js';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createReadFixture, runRead } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * RabbitMQ destinations against the broker on 127.0.0.1:5672: what a read delivers is counted in a
 * queue on the broker (not in Ferry), each message persistent with Ferry's message id; a
 * redelivery carries the same id; a broker that is down is a retryable failure, not a lost message.
 */

const CONTACTS = 120;
const BROKER = 'amqp://127.0.0.1:5672/';
const GUEST = { username: 'guest', password: 'guest' };

let sandbox: Sandbox;
let stack: TestStack;
let broker: ChannelModel;
let channel: Channel;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  broker = await amqp.connect(BROKER);
  channel = await broker.createChannel();
});

afterAll(async () => {
  await broker?.close();
  await stack?.close();
  await closeDestinationTypes();
  await sandbox?.close();
});

const projectPath = () => `/projects/${stack.project.id}`;

/** A topic exchange with one queue bound to every routing key, both deleted when the broker's test connection closes. */
async function exchangeWithQueue(): Promise<{ exchange: string; queue: string }> {
  const exchange = `ferry-test-${randomUUID().slice(0, 8)}`;
  await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: true });
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, exchange, '#');
  return { exchange, queue };
}

/** Everything in the queue, taken off it (acknowledged). */
async function drain(queue: string): Promise<GetMessage[]> {
  const messages: GetMessage[] = [];
  for (;;) {
    const message = await channel.get(queue, { noAck: true });
    if (!message) return messages;
    messages.push(message);
  }
}

async function drainAtLeast(queue: string, count: number, timeoutMs = 10_000): Promise<GetMessage[]> {
  const messages: GetMessage[] = [];
  const deadline = Date.now() + timeoutMs;
  while (messages.length < count && Date.now() < deadline) {
    messages.push(...(await drain(queue)));
    if (messages.length < count) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return messages;
}

describe('rabbitmq destinations', () => {
  it('delivers a read to an exchange: every record once on the broker, persistent, with Ferry’s message ids', async () => {
    const { exchange, queue } = await exchangeWithQueue();
    const fixture = await createReadFixture(stack, {
      declared: { delivery: { pageSize: 50 } },
      destination: {
        type: 'rabbitmq',
        metadata: { serverUrl: BROKER, exchange, routingKeyTemplate: '{action}.{objectName}' },
        secrets: GUEST,
      },
    });
    // The fixture's webhook receiver is not used: a destination of another type stands in for it.
    await fixture.receiver.stop();
    const { operationId, result } = await runRead(stack, fixture, { readType: 'triggered' });
    expect(result.status).toBe('success');

    const messages = await drainAtLeast(queue, 3);
    expect(messages).toHaveLength(3);
    const records = messages.flatMap((message) => JSON.parse(message.content.toString()).result);
    const ids = records.map((record: { raw: { id: string } }) => record.raw.id);
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);
    for (const message of messages) {
      expect(message.properties.deliveryMode).toBe(2);
      expect(message.properties.contentType).toBe('application/json');
      expect(message.fields.routingKey).toBe('read.contacts');
    }
    const messageIds = messages.map((message) => message.properties.messageId as string);
    const ledger = await (
      await newEntityManager()
    ).execute<{ message_id: string; response_body: string }[]>(
      'select message_id, response_body from delivery_attempts where operation_id = ? and delivered order by message_id',
      [operationId],
    );
    expect(ledger.map((row) => row.message_id)).toEqual([...messageIds].sort());
    expect(ledger[0].response_body).toContain(`exchange "${exchange}"`);

    // A redelivery of the first message (a worker died before its checkpoint) carries the same id.
    const first = messages[0];
    const again = await attemptDelivery(
      {
        projectId: stack.project.id,
        destinationId: fixture.destinationId,
        messageId: first.properties.messageId as string,
        body: first.content,
        kind: 'record',
        operationId,
      },
      config(),
    );
    expect(again.delivered).toBe(true);
    const redelivered = await drainAtLeast(queue, 1);
    expect(redelivered.map((message) => message.properties.messageId)).toEqual([first.properties.messageId]);
  });

  it('keeps its credentials encrypted: shown only with includeSecrets, never in events or the ledger', async () => {
    const name = `rmq-${randomUUID().slice(0, 8)}`;
    const created = await stack.api('POST', `${projectPath()}/destinations`, {
      body: {
        name,
        type: 'rabbitmq',
        metadata: { serverUrl: 'amqp://127.0.0.1:1/', exchange: 'x' },
        secrets: { username: 'u', password: 'hunter2-secret' },
      },
    });
    // The broker is not there: that is not an error at create time, it may come up later.
    expect(created.status).toBe(201);
    expect(created.body.secrets).toBeUndefined();
    expect(created.body.metadata).toEqual({
      serverUrl: 'amqp://127.0.0.1:1/',
      exchange: 'x',
      routingKeyTemplate: '',
    });
    const shown = await stack.api('GET', `${projectPath()}/destinations/${name}?includeSecrets=true`);
    expect(shown.body.secrets).toEqual({ username: 'u', password: 'hunter2-secret' });
    const stored = await (
      await newEntityManager()
    ).execute<{ row: string }[]>('select row_to_json(d)::text as row from destinations d where id = ?', [
      created.body.id,
    ]);
    expect(stored[0].row).not.toContain('hunter2');

    const failed = await attemptDelivery(
      {
        projectId: stack.project.id,
        destinationId: created.body.id,
        messageId: `msg_${randomUUID()}`,
        body: '{"action":"read"}',
        kind: 'record',
      },
      config(),
    );
    expect(failed).toMatchObject({ delivered: false, retryable: true, disabled: false });
    const traces = await (
      await newEntityManager()
    ).execute<{ row: string }[]>(
      `select row_to_json(a)::text as row from delivery_attempts a where destination_id = ?
       union all select row_to_json(e)::text from events e where project_id = ? and data->>'destinationId' = ?`,
      [created.body.id, stack.project.id, created.body.id],
    );
    expect(traces.length).toBeGreaterThanOrEqual(2);
    for (const trace of traces) expect(trace.row).not.toContain('hunter2');
  });

  it('fails without losing: an unbound routing key is retryable, a missing exchange is not', async () => {
    const lonely = `ferry-lonely-${randomUUID().slice(0, 8)}`;
    await channel.assertExchange(lonely, 'topic', { durable: false, autoDelete: false });
    const make = async (exchange: string) =>
      (
        await stack.api('POST', `${projectPath()}/destinations`, {
          body: {
            name: `rmq-${randomUUID().slice(0, 8)}`,
            type: 'rabbitmq',
            metadata: { serverUrl: BROKER, exchange },
            secrets: GUEST,
          },
        })
      ).body.id as string;
    const send = (destinationId: string) =>
      attemptDelivery(
        {
          projectId: stack.project.id,
          destinationId,
          messageId: `msg_${randomUUID()}`,
          body: '{"action":"read","objectName":"contacts"}',
          kind: 'record',
        },
        config(),
      );
    try {
      const unrouted = await send(await make(lonely));
      expect(unrouted).toMatchObject({ delivered: false, retryable: true });
      expect(unrouted.error).toContain('no queue is bound');
      const missing = await send(await make(`ferry-missing-${randomUUID().slice(0, 8)}`));
      expect(missing).toMatchObject({ delivered: false, retryable: false });
      expect(missing.error).toMatch(/NOT[-_]FOUND/);
    } finally {
      await channel.deleteExchange(lonely);
    }
  });

  it('refuses bad settings with a 400 naming the field', async () => {
    const post = (body: Record<string, unknown>) =>
      stack.api('POST', `${projectPath()}/destinations`, {
        body: { name: `rmq-${randomUUID().slice(0, 8)}`, type: 'rabbitmq', ...body },
      });
    const names = async (body: Record<string, unknown>) => {
      const response = await post(body);
      expect(response.status).toBe(400);
      return response.body.issues.map((issue: { name: string }) => issue.name);
    };
    expect(await names({ metadata: { serverUrl: BROKER }, secrets: GUEST })).toEqual(['metadata.exchange']);
    expect(await names({ metadata: { serverUrl: 'http://x', exchange: 'e' }, secrets: GUEST })).toEqual([
      'metadata.serverUrl',
    ]);
    expect(
      await names({
        metadata: { serverUrl: 'amqp://guest:guest@127.0.0.1/', exchange: 'e' },
        secrets: GUEST,
      }),
    ).toEqual(['metadata.serverUrl']);
    expect(await names({ metadata: { serverUrl: BROKER, exchange: 'e' } })).toEqual([
      'secrets.username',
      'secrets.password',
    ]);
    // A secret of another type, and a webhook's field in metadata.
    expect(
      await names({
        metadata: { serverUrl: BROKER, exchange: 'e', url: 'http://x' },
        secrets: { ...GUEST, webhookSigningKey: 'k' },
      }),
    ).toEqual(['metadata.url', 'secrets.webhookSigningKey']);
    expect(
      await names({
        metadata: { serverUrl: BROKER, exchange: 'e', routingKeyTemplate: '{oops' },
        secrets: GUEST,
      }),
    ).toEqual(['metadata.routingKeyTemplate']);
    const unsupported = await stack.api('POST', `${projectPath()}/destinations`, {
      body: { name: 'wh', type: 'snowflake', metadata: {} },
    });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.issues[0].name).toBe('type');
    expect(unsupported.body.issues[0].detail).toContain('rabbitmq');
    const listed = await stack.api('GET', `${projectPath()}/destinations`);
    expect(listed.body.some((destination: { name: string }) => destination.name === 'wh')).toBe(false);
  });

  it('updates every public field by updateMask, and checks the result whole', async () => {
    const name = `rmq-${randomUUID().slice(0, 8)}`;
    await stack.api('POST', `${projectPath()}/destinations`, {
      body: { name, type: 'rabbitmq', metadata: { serverUrl: BROKER, exchange: 'a' }, secrets: GUEST },
    });
    const patch = (updateMask: string[], destination: Record<string, unknown>) =>
      stack.api('PATCH', `${projectPath()}/destinations/${name}`, { body: { updateMask, destination } });
    const updated = await patch(['metadata.exchange', 'metadata.routingKeyTemplate', 'secrets.password'], {
      metadata: { exchange: 'b', routingKeyTemplate: '{objectName}' },
      secrets: { password: 'new' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.metadata).toEqual({
      serverUrl: BROKER,
      exchange: 'b',
      routingKeyTemplate: '{objectName}',
    });
    const shown = await stack.api('GET', `${projectPath()}/destinations/${name}?includeSecrets=true`);
    expect(shown.body.secrets).toEqual({ username: 'guest', password: 'new' });
    // Clearing a required field names it; an unknown field is refused by the mask.
    const cleared = await patch(['metadata.exchange'], { metadata: {} });
    expect(cleared.status).toBe(400);
    expect(cleared.body.issues[0].name).toBe('destination.metadata.exchange');
    const unknown = await patch(['metadata.url'], { metadata: { url: 'http://x' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].name).toBe('updateMask');
    // Only a webhook has a signing secret to rotate.
    const rotate = await stack.api('GET', `${projectPath()}/destinations/${name}?rotate=true`);
    expect(rotate.status).toBe(400);
    expect(rotate.body.issues[0].name).toBe('rotate');
    const unchanged = await stack.api('GET', `${projectPath()}/destinations/${name}`);
    expect(unchanged.body.metadata.exchange).toBe('b');
  });
});
