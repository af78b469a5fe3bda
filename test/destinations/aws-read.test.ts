import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CreateStreamCommand } from '@aws-sdk/client-kinesis';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  MOTO_CREDENTIALS,
  motoAvailable,
  motoClients,
  motoInstalled,
  startMoto,
  streamRecords,
  type MotoClients,
  type MotoServer,
} from '../support/moto.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * A read through a worker into S3, SQS and Kinesis destinations on moto: every record of the
 * sandbox's objects lands once, counted in the bucket, on the queue and on the stream.
 */

const suite = motoAvailable() ? describe : describe.skip;

const CONTACTS = 120;
const COMPANIES = 7;
const DEALS = 9;

let sandbox: Sandbox;
let stack: TestStack;
let moto: MotoServer;
let s3: MotoClients['s3'];
let sqs: MotoClients['sqs'];
let kinesis: MotoClients['kinesis'];
const bucket = `ferry-${randomUUID().slice(0, 8)}`;
const streamName = `ferry-${randomUUID().slice(0, 8)}`;
let queueUrl: string;

interface Delivered {
  messageId?: string;
  body: { objectName: string; result: { fields: Record<string, unknown>; raw: Record<string, unknown> }[] };
}

beforeAll(async () => {
  if (!motoInstalled) return;
  [sandbox, moto] = await Promise.all([
    startSandbox({ port: 0, contacts: CONTACTS, companies: COMPANIES, deals: DEALS }),
    startMoto(),
  ]);
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  ({ s3, sqs, kinesis } = motoClients(moto.endpoint));
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `ferry-${randomUUID().slice(0, 8)}` })))
    .QueueUrl!;
  await kinesis.send(new CreateStreamCommand({ StreamName: streamName, ShardCount: 1 }));

  const destinations = {
    'to-s3': { type: 's3', metadata: { bucket } },
    'to-sqs': { type: 'sqs', metadata: { queueUrl } },
    'to-kinesis': { type: 'kinesis', metadata: { streamName } },
  };
  for (const [name, { type, metadata }] of Object.entries(destinations)) {
    const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
      body: { name, type, metadata: { ...metadata, endpointUrl: moto.endpoint }, secrets: MOTO_CREDENTIALS },
    });
    expect(created.status).toBe(201);
  }
  const routes = { contacts: 'to-s3', companies: 'to-sqs', deals: 'to-kinesis' };
  const name = `aws-${randomUUID().slice(0, 8)}`;
  const integration = await stack.api('POST', `/projects/${stack.project.id}/integrations`, {
    body: {
      name,
      provider: 'sandboxApiKey',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider: 'sandboxApiKey',
          read: {
            objects: Object.entries(routes).map(([objectName, destination]) => ({
              objectName,
              destination,
              schedule: '0 0 1 1 *',
              optionalFieldsAuto: 'all',
              backfill: { defaultPeriod: { fullHistory: true } },
              delivery: { pageSize: 50 },
            })),
          },
        },
      },
    },
  });
  expect(integration.status).toBe(201);
  const groupRef = `acme-${randomUUID().slice(0, 8)}`;
  const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
    body: { provider: 'sandboxApiKey', groupRef, consumerRef: 'jane', apiKey: 'sandbox-demo-key' },
  });
  expect(connection.status).toBe(201);
  const installation = await stack.api(
    'POST',
    `/projects/${stack.project.id}/integrations/${integration.body.id}/installations`,
    {
      body: {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: {
              objects: Object.fromEntries(
                Object.entries(routes).map(([objectName, destination]) => [
                  objectName,
                  {
                    objectName,
                    destination,
                    schedule: '0 0 1 1 *',
                    selectedFields: {},
                    selectedFieldsAuto: 'all',
                  },
                ]),
              ),
            },
          },
        },
      },
    },
  );
  expect(installation.status).toBe(201);
}, 90_000);

afterAll(async () => {
  for (const client of [s3, sqs, kinesis]) client?.destroy();
  await stack?.close();
  await closeDestinationTypes();
  await moto?.stop();
  await sandbox?.close();
});

async function eventually<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const recordIds = (messages: Delivered[]) =>
  messages.flatMap((m) => m.body.result.map((r) => String(r.raw.id ?? r.fields.id)));

async function objectsInBucket(): Promise<Delivered[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
      return {
        messageId: object.Metadata?.['ferry-message-id'],
        body: JSON.parse(await object.Body!.transformToString()),
      };
    }),
  );
}

const onQueue: Delivered[] = [];
async function messagesOnQueue(): Promise<Delivered[]> {
  const got = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      MessageAttributeNames: ['All'],
      VisibilityTimeout: 300,
    }),
  );
  for (const message of got.Messages ?? [])
    onQueue.push({
      messageId: message.MessageAttributes?.ferryMessageId?.StringValue,
      body: JSON.parse(message.Body!),
    });
  return onQueue;
}

async function recordsOnStream(): Promise<Delivered[]> {
  return (await streamRecords(kinesis, streamName)).map((r) => ({
    messageId: r.PartitionKey,
    body: JSON.parse(Buffer.from(r.Data!).toString()),
  }));
}

suite('a read into AWS destinations', () => {
  it.each([
    ['contacts', 's3', objectsInBucket, CONTACTS],
    ['companies', 'sqs', messagesOnQueue, COMPANIES],
    ['deals', 'kinesis', recordsOnStream, DEALS],
  ] as const)(
    'backfills %s into %s, every record once, counted on moto',
    async (objectName, _type, probe, expected) => {
      const messages = await eventually(
        `${expected} ${objectName}`,
        probe,
        (found) => recordIds(found).length >= expected,
      );
      const ids = recordIds(messages);
      expect(ids).toHaveLength(expected);
      expect(new Set(ids).size).toBe(expected);
      expect(messages.every((m) => m.body.objectName === objectName && /^msg_/.test(m.messageId ?? ''))).toBe(
        true,
      );
      expect(new Set(messages.map((m) => m.messageId)).size).toBe(messages.length);
    },
  );
});
