import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CreateStreamCommand } from '@aws-sdk/client-kinesis';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type {
  DestinationTarget,
  OutgoingMessage,
  SendOptions,
  SendResult,
} from '../../src/delivery/destination-type.js';
import { buildResultMessage, messageIdFor, type ResultMessageContext } from '../../src/delivery/messages.js';
import {
  kinesisType,
  putRecordsRetryingFailed,
  type KinesisMetadata,
} from '../../src/delivery/types/kinesis.js';
import { s3Type, type S3Metadata } from '../../src/delivery/types/s3.js';
import { sqsType, type SqsMetadata } from '../../src/delivery/types/sqs.js';
import type { AwsSecrets } from '../../src/delivery/types/aws.js';
import {
  MOTO_CREDENTIALS,
  MOTO_REGION,
  motoAvailable,
  motoClients,
  motoInstalled,
  startMoto,
  streamRecords,
  type MotoClients,
  type MotoServer,
} from '../support/moto.js';

/**
 * The S3, SQS and Kinesis types' `send`, against moto in server mode: what lands is counted on the
 * server, never taken from Ferry's answer.
 */

const suite = motoAvailable() ? describe : describe.skip;

let moto: MotoServer;
const allowLocal: SendOptions = { timeoutMs: 10_000, policy: { allowPrivate: true } };
const secrets: AwsSecrets = { ...MOTO_CREDENTIALS };

let clients: MotoClients;

beforeAll(async () => {
  if (!motoInstalled) return;
  moto = await startMoto();
  clients = motoClients(moto.endpoint);
}, 60_000);

afterAll(async () => {
  await Promise.all([s3Type.close?.(), sqsType.close?.(), kinesisType.close?.()]);
  clients?.destroy();
  await moto?.stop();
});

const context: ResultMessageContext = {
  action: 'read',
  projectId: 'proj_1',
  provider: 'hubspot',
  groupRef: 'g1',
  groupName: 'Group',
  consumerRef: 'c1',
  consumerName: 'Consumer',
  installationId: 'inst_1',
  installationUpdateTime: '2026-11-27T10:00:00.000Z',
  objectName: 'contacts',
  rawObjectName: 'contacts',
  operationId: 'op_1',
  operationTime: '2026-11-27T19:17:24.123Z',
  readType: 'backfill',
};

function resultMessage(records: number, fieldBytes = 20, page = 0): OutgoingMessage {
  const result = Array.from({ length: records }, (_, index) => ({
    fields: { id: `r${page}-${index}`, note: 'x'.repeat(fieldBytes) },
    mappedFields: {},
    raw: {},
  }));
  return {
    messageId: messageIdFor(`op_${randomUUID()}`, page, 0),
    body: JSON.stringify(buildResultMessage(context, result)),
  };
}

function target<M>(metadata: M): DestinationTarget<M, AwsSecrets> {
  return { destinationId: `dest_${randomUUID()}`, version: '1', metadata, secrets };
}

function expectNoSecrets(result: SendResult) {
  const text = JSON.stringify(result);
  for (const value of Object.values(secrets)) expect(text).not.toContain(value);
}

suite('s3', () => {
  async function bucket() {
    const name = `ferry-${randomUUID().slice(0, 8)}`;
    await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
    return name;
  }
  async function objects(name: string) {
    const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: name }));
    return (listed.Contents ?? []).map((object) => object.Key!);
  }

  it('puts one object per message under a time-and-id key; a redelivery overwrites it', async () => {
    const name = await bucket();
    const to = target<S3Metadata>({ bucket: name, endpointUrl: moto.endpoint, region: MOTO_REGION });
    const message = resultMessage(3);
    const first = await s3Type.send(to, message, allowLocal);
    expect(first).toMatchObject({ ok: true });
    const key = `2026/11/27/191724-${message.messageId}.json`;
    expect(first.responseBody).toBe(`s3://${name}/${key}`);
    const again = await s3Type.send(to, { ...message, timestamp: new Date() }, allowLocal);
    expect(again).toMatchObject({ ok: true, responseBody: first.responseBody });
    expect(await objects(name)).toEqual([key]);
    const stored = await clients.s3.send(new GetObjectCommand({ Bucket: name, Key: key }));
    expect(await stored.Body!.transformToString()).toBe(message.body);
    expect(stored.Metadata).toEqual({ 'ferry-message-id': message.messageId });
    expect(stored.ContentType).toBe('application/json');
  });

  it('places objects by keyTemplate over the message and its id', async () => {
    const name = await bucket();
    const to = target<S3Metadata>({
      bucket: name,
      endpointUrl: moto.endpoint,
      keyTemplate: "join('/', [installationId, objectName, messageId])",
    });
    const messages = [resultMessage(1), resultMessage(2)];
    for (const message of messages)
      expect(await s3Type.send(to, message, allowLocal)).toMatchObject({ ok: true });
    expect((await objects(name)).sort()).toEqual(
      messages.map((m) => `inst_1/contacts/${m.messageId}`).sort(),
    );
  });

  it('fails for good when the template gives no key, and retryably when the bucket is missing', async () => {
    const noKey = await s3Type.send(
      target<S3Metadata>({ bucket: 'ferry-any', endpointUrl: moto.endpoint, keyTemplate: 'notAField' }),
      resultMessage(1),
      allowLocal,
    );
    expect(noKey).toMatchObject({ ok: false, retryable: false, failure: 'invalid-request' });
    expect(noKey.error).toContain('null');
    const missing = await s3Type.send(
      target<S3Metadata>({ bucket: 'ferry-missing', endpointUrl: moto.endpoint }),
      resultMessage(1),
      allowLocal,
    );
    expect(missing).toMatchObject({ ok: false, retryable: true });
    expect(missing.error).toContain('NoSuchBucket');
    expectNoSecrets(missing);
  });

  it('refuses a loopback endpoint unless private destinations are allowed, before connecting', async () => {
    const refused = await s3Type.send(
      target<S3Metadata>({ bucket: 'ferry-any', endpointUrl: moto.endpoint }),
      resultMessage(1),
      { timeoutMs: 5_000, policy: { allowPrivate: false } },
    );
    expect(refused).toMatchObject({ ok: false, retryable: false, failure: 'refused' });
  });

  it('answers a retryable network failure without credentials when nothing listens', async () => {
    const closed = await s3Type.send(
      target<S3Metadata>({ bucket: 'ferry-any', endpointUrl: 'http://127.0.0.1:1' }),
      resultMessage(1),
      allowLocal,
    );
    expect(closed).toMatchObject({ ok: false, retryable: true, failure: 'network' });
    expectNoSecrets(closed);
  });
});

suite('a moto restart', () => {
  it('fails sends retryably while moto is down; the next attempt after it is back lands once', async () => {
    const name = `ferry-${randomUUID().slice(0, 8)}`;
    await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
    const to = target<S3Metadata>({ bucket: name, endpointUrl: moto.endpoint });
    const message = resultMessage(2);
    expect(await s3Type.send(to, message, allowLocal)).toMatchObject({ ok: true });
    await moto.kill();
    const down = await s3Type.send(to, message, allowLocal);
    expect(down).toMatchObject({ ok: false, retryable: true, failure: 'network' });
    expectNoSecrets(down);
    await moto.restart();
    // moto keeps nothing across a restart: the bucket comes back empty, as a recreated one would.
    await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
    expect(await s3Type.send(to, message, allowLocal)).toMatchObject({ ok: true });
    const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: name }));
    expect(listed.Contents?.map((object) => object.Key)).toEqual([
      `2026/11/27/191724-${message.messageId}.json`,
    ]);
  });
});

suite('sqs', () => {
  async function queue(name: string, attributes: Record<string, string> = {}) {
    const created = await clients.sqs.send(
      new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
    );
    return created.QueueUrl!;
  }
  async function drain(queueUrl: string): Promise<Message[]> {
    const all: Message[] = [];
    for (;;) {
      const got = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 60,
        }),
      );
      if (!got.Messages?.length) return all;
      all.push(...got.Messages);
    }
  }
  const idOf = (message: Message) => message.MessageAttributes?.ferryMessageId?.StringValue;

  it('sends each message with its id as an attribute; a redelivery carries the same id', async () => {
    const queueUrl = await queue(`ferry-${randomUUID().slice(0, 8)}`);
    const to = target<SqsMetadata>({ queueUrl, endpointUrl: moto.endpoint });
    const message = resultMessage(2);
    const first = await sqsType.send(to, message, allowLocal);
    expect(first).toMatchObject({ ok: true });
    expect(first.responseBody).toMatch(/^sqs ferry-\w+ message \S+$/);
    expect(await sqsType.send(to, message, allowLocal)).toMatchObject({ ok: true });
    const received = await drain(queueUrl);
    expect(received.map(idOf)).toEqual([message.messageId, message.messageId]);
    expect(received.every((m) => m.Body === message.body)).toBe(true);
  });

  it('gives a FIFO queue the message id as deduplication id, so a redelivery is dropped', async () => {
    const queueUrl = await queue(`ferry-${randomUUID().slice(0, 8)}.fifo`, { FifoQueue: 'true' });
    const to = target<SqsMetadata>({ queueUrl, endpointUrl: moto.endpoint });
    const [one, two] = [resultMessage(1), resultMessage(1, 20, 1)];
    for (const message of [one, one, two])
      expect(await sqsType.send(to, message, allowLocal)).toMatchObject({ ok: true });
    const received = await drain(queueUrl);
    expect(received.map(idOf)).toEqual([one.messageId, two.messageId]);
  });

  it('splits a message over the queue’s size limit into parts that each fit, every record once and in order', async () => {
    const limit = 4096;
    const queueUrl = await queue(`ferry-${randomUUID().slice(0, 8)}`, { MaximumMessageSize: String(limit) });
    const to = target<SqsMetadata>({ queueUrl, endpointUrl: moto.endpoint });
    const message = resultMessage(40, 300);
    expect(Buffer.byteLength(message.body)).toBeGreaterThan(3 * limit);
    expect(await sqsType.send(to, message, allowLocal)).toMatchObject({ ok: true });
    const received = await drain(queueUrl);
    expect(received.length).toBeGreaterThan(3);
    const parts = received
      .map((m) => ({
        id: idOf(m)!,
        body: JSON.parse(m.Body!) as { result: { fields: { id: string } }[] },
        bytes: Buffer.byteLength(m.Body!),
      }))
      .sort((a, b) => Number(a.id.split('.').at(-1)) - Number(b.id.split('.').at(-1)));
    expect(parts.map((p) => p.id)).toEqual(parts.map((_, index) => `${message.messageId}.${index}`));
    for (const part of parts)
      expect(part.bytes + 'ferryMessageIdString'.length + part.id.length).toBeLessThanOrEqual(limit);
    const ids = parts.flatMap((p) => p.body.result.map((r) => r.fields.id));
    expect(ids).toEqual(Array.from({ length: 40 }, (_, index) => `r0-${index}`));
  });

  it('fails retryably for a queue that does not exist, naming it without credentials', async () => {
    const result = await sqsType.send(
      target<SqsMetadata>({
        queueUrl: `${moto.endpoint}/123456789012/ferry-nowhere`,
        endpointUrl: moto.endpoint,
      }),
      resultMessage(1),
      allowLocal,
    );
    expect(result).toMatchObject({ ok: false, retryable: true });
    expectNoSecrets(result);
  });
});

suite('kinesis', () => {
  async function stream() {
    const name = `ferry-${randomUUID().slice(0, 8)}`;
    await clients.kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: 1 }));
    return name;
  }
  async function records(name: string) {
    return (await streamRecords(clients.kinesis, name)).map((r) => ({
      key: r.PartitionKey!,
      data: Buffer.from(r.Data!).toString('utf8'),
    }));
  }

  it('puts one record per message keyed by the message id; a redelivery carries the same key', async () => {
    const name = await stream();
    const to = target<KinesisMetadata>({ streamName: name, endpointUrl: moto.endpoint });
    const message = resultMessage(2);
    const first = await kinesisType.send(to, message, allowLocal);
    expect(first).toMatchObject({ ok: true });
    expect(first.responseBody).toMatch(new RegExp(`^kinesis ${name} shardId-\\d+ seq \\d+$`));
    expect(await kinesisType.send(to, message, allowLocal)).toMatchObject({ ok: true });
    expect(await records(name)).toEqual([
      { key: message.messageId, data: message.body },
      { key: message.messageId, data: message.body },
    ]);
  });

  it('keys records by partitionKeyTemplate', async () => {
    const name = await stream();
    const to = target<KinesisMetadata>({
      streamName: name,
      endpointUrl: moto.endpoint,
      partitionKeyTemplate: 'installationId',
    });
    expect(await kinesisType.send(to, resultMessage(1), allowLocal)).toMatchObject({ ok: true });
    expect((await records(name)).map((r) => r.key)).toEqual(['inst_1']);
  });

  it('puts again only the records PutRecords marks failed', async () => {
    const calls: string[][] = [];
    let refuse = new Set(['b', 'c']);
    const outcome = await putRecordsRetryingFailed(
      async (batch) => {
        calls.push(batch.map((r) => r.PartitionKey!));
        const answer = batch.map((r) =>
          refuse.has(r.PartitionKey!)
            ? { ErrorCode: 'ProvisionedThroughputExceededException' }
            : { ShardId: 's', SequenceNumber: `seq-${r.PartitionKey}` },
        );
        refuse = new Set(['c']);
        return answer;
      },
      ['a', 'b', 'c'].map((key) => ({ PartitionKey: key, Data: Buffer.from(key) })),
      4,
      1,
    );
    expect(calls.slice(0, 2)).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c'],
    ]);
    expect(calls.slice(2).every((call) => call.length === 1 && call[0] === 'c')).toBe(true);
    expect(outcome.failed).toBe(1);
    expect(outcome.results.map((r) => r.SequenceNumber)).toEqual(['seq-a', 'seq-b', undefined]);
  });
});
