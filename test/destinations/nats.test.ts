import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createReadFixture, runRead } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * NATS JetStream destinations against the server on 127.0.0.1:4222: what a read delivers is
 * counted in the stream (not in Ferry), each message with `Nats-Msg-Id` = Ferry's message id; a
 * redelivery is dropped by the stream's duplicate window.
 */

const CONTACTS = 120;
const SERVER = 'nats://127.0.0.1:4222';
const tag = randomUUID().slice(0, 8);
const stream = `FERRY_TEST_${tag}`;

let sandbox: Sandbox;
let stack: TestStack;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  nc = await connect({ servers: SERVER });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`ferrytest.${tag}.>`], duplicate_window: nanos(120_000) });
});

afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => {});
  await nc?.close();
  await stack?.close();
  await closeDestinationTypes();
  await sandbox?.close();
});

const projectPath = () => `/projects/${stack.project.id}`;

describe('nats destinations', () => {
  it('publishes a read to a stream: every record once, Nats-Msg-Id = Ferry’s id; a redelivery is dropped', async () => {
    const fixture = await createReadFixture(stack, {
      declared: { delivery: { pageSize: 50 } },
      destination: {
        type: 'nats',
        metadata: { serverUrl: SERVER, subjectTemplate: `ferrytest.${tag}.{action}.{objectName}`, stream },
      },
    });
    // The fixture's webhook receiver is not used: a destination of another type stands in for it.
    await fixture.receiver.stop();
    const { operationId, result } = await runRead(stack, fixture, { readType: 'triggered' });
    expect(result.status).toBe('success');

    const info = await jsm.streams.info(stream);
    expect(info.state.messages).toBe(3);
    const stored = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      stored.push((await jsm.streams.getMessage(stream, { seq }))!);
    }
    const ids = stored.flatMap((message) =>
      JSON.parse(Buffer.from(message.data).toString()).result.map(
        (record: { raw: { id: string } }) => record.raw.id,
      ),
    );
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);
    expect(stored.every((message) => message.subject === `ferrytest.${tag}.read.contacts`)).toBe(true);
    const msgIds = stored.map((message) => message.header.get('Nats-Msg-Id'));
    expect(new Set(msgIds).size).toBe(3);
    expect(msgIds.every((id) => id.startsWith('msg_'))).toBe(true);

    // Sent again under its id, the message is acknowledged as a duplicate and not stored twice.
    const again = await attemptDelivery(
      {
        projectId: stack.project.id,
        destinationId: fixture.destinationId,
        messageId: msgIds[0],
        body: Buffer.from(stored[0].data),
        kind: 'record',
        operationId,
      },
      config(),
    );
    expect(again.delivered).toBe(true);
    expect((await jsm.streams.info(stream)).state.messages).toBe(3);
  });

  it('fails retryably when no stream takes the subject or the server is down, and refuses a wrong stream', async () => {
    const make = async (metadata: Record<string, unknown>) => {
      const created = await stack.api('POST', `${projectPath()}/destinations`, {
        body: {
          name: `nats-${randomUUID().slice(0, 8)}`,
          type: 'nats',
          metadata,
          secrets: { token: 'nats-secret-token' },
        },
      });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
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
    const nowhere = await send(await make({ serverUrl: SERVER, subjectTemplate: `nobody.${tag}.x` }));
    expect(nowhere).toMatchObject({ delivered: false, retryable: true });
    const down = await send(await make({ serverUrl: 'nats://127.0.0.1:1', subjectTemplate: 'a.b' }));
    expect(down).toMatchObject({ delivered: false, retryable: true });
    expect(down.error).not.toContain('nats-secret-token');
    const wrong = await send(
      await make({ serverUrl: SERVER, subjectTemplate: `ferrytest.${tag}.x`, stream: 'SOME_OTHER_STREAM' }),
    );
    expect(wrong).toMatchObject({ delivered: false, retryable: false });
  });

  it('refuses bad settings with a 400 naming the field', async () => {
    const names = async (body: Record<string, unknown>) => {
      const response = await stack.api('POST', `${projectPath()}/destinations`, {
        body: { name: `nats-${randomUUID().slice(0, 8)}`, type: 'nats', ...body },
      });
      expect(response.status).toBe(400);
      return response.body.issues.map((issue: { name: string }) => issue.name);
    };
    expect(await names({ metadata: { serverUrl: SERVER } })).toEqual(['metadata.subjectTemplate']);
    expect(await names({ metadata: { serverUrl: 'amqp://x', subjectTemplate: 'a' } })).toEqual([
      'metadata.serverUrl',
    ]);
    expect(await names({ metadata: { serverUrl: SERVER, subjectTemplate: 'a.*' } })).toEqual([
      'metadata.subjectTemplate',
    ]);
    expect(
      await names({ metadata: { serverUrl: SERVER, subjectTemplate: 'a' }, secrets: { password: 'p' } }),
    ).toEqual(['secrets.username']);
  });
});
