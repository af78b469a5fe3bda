import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CreateStreamCommand } from '@aws-sdk/client-kinesis';
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { em as newEntityManager } from '../../src/db/orm.js';
import { DeliveryAttemptEntity } from '../../src/db/entities/delivery.js';
import { DestinationEntity } from '../../src/db/entities/operation.js';
import { buildResultMessage, messageIdFor } from '../../src/delivery/messages.js';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
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
 * S3, SQS and Kinesis destinations through Ferry's API and its delivery (ledger, retries), with
 * what landed counted on moto by its own client; bad input is a 400 naming the field.
 */

const suite = motoAvailable() ? describe : describe.skip;

let stack: TestStack;
let moto: MotoServer;
let s3: MotoClients['s3'];
let sqs: MotoClients['sqs'];
let kinesis: MotoClients['kinesis'];
const secrets = { ...MOTO_CREDENTIALS, awsSessionToken: 'FwoGZXIvYXdzEferry-session-token-DO-NOT-LOG' };

beforeAll(async () => {
  if (!motoInstalled) return;
  [stack, moto] = await Promise.all([startTestStack(), startMoto()]);
  ({ s3, sqs, kinesis } = motoClients(moto.endpoint));
}, 60_000);

afterAll(async () => {
  for (const client of [s3, sqs, kinesis]) client?.destroy();
  await closeDestinationTypes();
  await moto?.stop();
  await stack?.close();
});

const create = (body: Record<string, unknown>) =>
  stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: { name: `d-${randomUUID().slice(0, 8)}`, ...body },
  });

async function destination(type: string, metadata: Record<string, unknown>): Promise<string> {
  const created = await create({ type, metadata: { endpointUrl: moto.endpoint, ...metadata }, secrets });
  expect(created.status).toBe(201);
  expect(JSON.stringify(created.body)).not.toContain(secrets.awsSecretKey);
  return created.body.id as string;
}

function page(records = 3) {
  const operationId = randomUUID();
  const result = Array.from({ length: records }, (_, index) => ({
    fields: { id: `r${index}` },
    mappedFields: {},
    raw: {},
  }));
  const body = JSON.stringify(
    buildResultMessage(
      {
        action: 'read',
        projectId: stack.project.id,
        provider: 'hubspot',
        groupRef: 'g1',
        groupName: 'Group',
        consumerRef: 'c1',
        consumerName: 'Consumer',
        installationId: 'inst_1',
        installationUpdateTime: '2026-11-27T10:00:00.000Z',
        objectName: 'contacts',
        rawObjectName: 'contacts',
        operationId,
        operationTime: '2026-11-27T19:17:24.000Z',
        readType: 'backfill',
      },
      result,
    ),
  );
  return { operationId, messageId: messageIdFor(operationId, 0, 0), body };
}

function deliver(destinationId: string, message: ReturnType<typeof page>) {
  return attemptDelivery(
    { projectId: stack.project.id, destinationId, kind: 'record', ...message },
    config(),
  );
}

async function ledger(destinationId: string) {
  const rows = await (
    await newEntityManager()
  ).find(DeliveryAttemptEntity, { destinationId }, { orderBy: { id: 'asc' } });
  const text = JSON.stringify(rows);
  for (const value of Object.values(secrets)) expect(text).not.toContain(value);
  return rows;
}

suite('s3 destinations', () => {
  it('deliver one object per message; a redelivery overwrites it and the ledger says where it went', async () => {
    const bucket = `ferry-${randomUUID().slice(0, 8)}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const id = await destination('s3', { bucket });
    const message = page();
    expect(await deliver(id, message)).toMatchObject({ delivered: true });
    expect(await deliver(id, message)).toMatchObject({ delivered: true });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const key = `2026/11/27/191724-${message.messageId}.json`;
    expect(listed.Contents?.map((object) => object.Key)).toEqual([key]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(head.Metadata?.['ferry-message-id']).toBe(message.messageId);
    const rows = await ledger(id);
    expect(rows.map((row) => [row.attempt, row.delivered, row.responseBody])).toEqual([
      [1, true, `s3://${bucket}/${key}`],
      [2, true, `s3://${bucket}/${key}`],
    ]);
  });

  it('record a retryable failure without credentials when the endpoint is down', async () => {
    const id = await destination('s3', { bucket: 'ferry-down', endpointUrl: 'http://127.0.0.1:1' });
    expect(await deliver(id, page())).toMatchObject({ delivered: false, retryable: true });
    const [row] = await ledger(id);
    expect(row).toMatchObject({ delivered: false, error: expect.stringContaining('ECONNREFUSED') });
  });

  it('show secrets only with includeSecrets=true, and take a PATCH of metadata.keyTemplate', async () => {
    const bucket = `ferry-${randomUUID().slice(0, 8)}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const id = await destination('s3', { bucket });
    const path = `/projects/${stack.project.id}/destinations/${id}`;
    const plain = await stack.api('GET', path);
    expect(plain.body.metadata).toMatchObject({ bucket, region: 'us-east-1', storageClass: 'STANDARD' });
    expect(plain.body.secrets).toBeUndefined();
    const stored = await (await newEntityManager()).findOneOrFail(DestinationEntity, { id });
    expect(JSON.stringify(stored)).not.toContain(secrets.awsSecretKey);
    expect((await stack.api('GET', `${path}?includeSecrets=true`)).body.secrets).toEqual(secrets);
    const patched = await stack.api('PATCH', path, {
      body: {
        updateMask: ['metadata.keyTemplate'],
        destination: { metadata: { keyTemplate: "join('/', [objectName, messageId])" } },
      },
    });
    expect(patched.status).toBe(200);
    const message = page();
    expect(await deliver(id, message)).toMatchObject({ delivered: true });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents?.map((object) => object.Key)).toEqual([`contacts/${message.messageId}`]);
  });
});

suite('sqs destinations', () => {
  async function drain(queueUrl: string): Promise<Message[]> {
    const all: Message[] = [];
    for (;;) {
      const got = await sqs.send(
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

  it('carry the same message id when a message is delivered twice; a FIFO queue keeps one', async () => {
    const standard = (
      await sqs.send(new CreateQueueCommand({ QueueName: `ferry-${randomUUID().slice(0, 8)}` }))
    ).QueueUrl!;
    const fifo = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: `ferry-${randomUUID().slice(0, 8)}.fifo`,
          Attributes: { FifoQueue: 'true' },
        }),
      )
    ).QueueUrl!;
    const message = page();
    for (const queueUrl of [standard, fifo]) {
      const id = await destination('sqs', { queueUrl });
      expect(await deliver(id, message)).toMatchObject({ delivered: true });
      expect(await deliver(id, message)).toMatchObject({ delivered: true });
      const rows = await ledger(id);
      expect(rows[0].responseBody).toMatch(/^sqs ferry-\S+ message /);
    }
    expect((await drain(standard)).map(idOf)).toEqual([message.messageId, message.messageId]);
    const once = await drain(fifo);
    expect(once.map(idOf)).toEqual([message.messageId]);
    expect(once[0].Body).toBe(message.body);
  });
});

suite('kinesis destinations', () => {
  it('put one record per message, keyed by partitionKeyTemplate, the ledger holding its sequence number', async () => {
    const streamName = `ferry-${randomUUID().slice(0, 8)}`;
    await kinesis.send(new CreateStreamCommand({ StreamName: streamName, ShardCount: 1 }));
    const id = await destination('kinesis', { streamName, partitionKeyTemplate: 'installationId' });
    const messages = [page(), page()];
    for (const message of messages) expect(await deliver(id, message)).toMatchObject({ delivered: true });
    const got = { Records: await streamRecords(kinesis, streamName) };
    expect(got.Records.map((r) => [r.PartitionKey, Buffer.from(r.Data!).toString()])).toEqual(
      messages.map((m) => ['inst_1', m.body]),
    );
    const rows = await ledger(id);
    expect(rows.map((row) => row.responseBody)).toEqual(
      got.Records.map((r) => `kinesis ${streamName} shardId-000000000000 seq ${r.SequenceNumber}`),
    );
  });
});

suite('bad AWS destination input', () => {
  it.each([
    ['s3', {}, secrets, ['metadata.bucket']],
    ['s3', { bucket: 'Not_A_Bucket' }, secrets, ['metadata.bucket']],
    ['s3', { bucket: 'ferry-x', keyTemplate: 'a..b' }, secrets, ['metadata.keyTemplate']],
    ['s3', { bucket: 'ferry-x', keyTemplate: 'no_such_fn(a)' }, secrets, ['metadata.keyTemplate']],
    ['s3', { bucket: 'ferry-x', endpointUrl: 'ftp://127.0.0.1/x' }, secrets, ['metadata.endpointUrl']],
    [
      's3',
      { bucket: 'ferry-x', endpointUrl: 'http://user:pw@127.0.0.1:9' },
      secrets,
      ['metadata.endpointUrl'],
    ],
    ['s3', { bucket: 'ferry-x', storageClass: 'COLD' }, secrets, ['metadata.storageClass']],
    ['s3', { bucket: 'ferry-x' }, { awsKeyId: 'AKIAX' }, ['secrets.awsSecretKey']],
    [
      's3',
      { bucket: 'ferry-x' },
      { ...secrets, webhookSigningKey: 'whsec_x' },
      ['secrets.webhookSigningKey'],
    ],
    ['sqs', {}, secrets, ['metadata.queueUrl']],
    ['sqs', { queueUrl: 'not a url' }, secrets, ['metadata.queueUrl']],
    ['sqs', { queueUrl: 'http://127.0.0.1:9/123456789012/' }, secrets, ['metadata.queueUrl']],
    ['sqs', { queueUrl: 'http://127.0.0.1:9/123456789012/a/b' }, secrets, ['metadata.queueUrl']],
    ['kinesis', { streamName: 'ferry' }, {}, ['secrets.awsKeyId', 'secrets.awsSecretKey']],
    [
      'kinesis',
      { streamName: 'ferry', partitionKeyTemplate: '[' },
      secrets,
      ['metadata.partitionKeyTemplate'],
    ],
  ])('%s %j answers 400 naming the field and keeps nothing', async (type, metadata, given, names) => {
    const name = `bad-${randomUUID().slice(0, 8)}`;
    const response = await create({ name, type, metadata, secrets: given });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: { name: string }) => issue.name).sort()).toEqual(
      [...names].sort(),
    );
    expect(JSON.stringify(response.body)).not.toContain(secrets.awsSecretKey);
    expect(
      await (await newEntityManager()).count(DestinationEntity, { projectId: stack.project.id, name }),
    ).toBe(0);
  });

  it('accepts an endpoint whose host does not resolve yet', async () => {
    const response = await create({
      type: 's3',
      metadata: { bucket: 'ferry-later', endpointUrl: 'http://minio.ferry-test.invalid:9000' },
      secrets,
    });
    expect(response.status).toBe(201);
  });
});
