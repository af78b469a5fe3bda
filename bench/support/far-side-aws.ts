import {
  CreateStreamCommand,
  DeleteStreamCommand,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  ListShardsCommand,
  PutRecordsCommand,
} from '@aws-sdk/client-kinesis';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { defaultObjectKey } from '../../src/delivery/types/s3.js';
import { DEFAULT_MAX_MESSAGE_BYTES, MESSAGE_ID_ATTRIBUTE, queueParts } from '../../src/delivery/types/sqs.js';
import { MOTO_CREDENTIALS, MOTO_REGION, motoClients } from '../../test/support/moto.js';
import { recordIdsOf, type FarSide, type Landed } from './far-side-shape.js';

/**
 * S3, SQS and Kinesis far sides on moto: a bucket, queue or one-shard stream of the bench's own.
 * The bench reads moto directly (`endpoint`); Ferry may be pointed elsewhere (`ferryEndpoint`, a
 * proxy the bench can cut). moto keeps everything in memory: `recreate` makes the bucket, queue or
 * stream again after a restart, and what was read before it stays in `landed`.
 */

export const AWS_TYPES = ['s3', 'sqs', 'kinesis'];

export interface AwsPlace {
  endpoint: string;
  ferryEndpoint?: string;
}

export async function awsFarSide(type: string, name: string, place: AwsPlace): Promise<FarSide> {
  const ferryEndpoint = place.ferryEndpoint ?? place.endpoint;
  const common = { endpointUrl: ferryEndpoint };
  const secrets = MOTO_CREDENTIALS;
  const clients = motoClients(place.endpoint);
  if (type === 's3') {
    const client = clients.s3;
    const recreate = async () => void (await client.send(new CreateBucketCommand({ Bucket: name })));
    await recreate();
    const objects = new Map<string, Landed>();
    return {
      type,
      destination: { type, metadata: { ...common, bucket: name }, secrets },
      async send(message) {
        await client.send(
          new PutObjectCommand({
            Bucket: name,
            Key: defaultObjectKey(message.messageId, undefined),
            Body: message.body,
            ContentType: 'application/json',
            Metadata: { 'ferry-message-id': message.messageId },
          }),
        );
      },
      async landed() {
        let token: string | undefined;
        do {
          const page = await client.send(
            new ListObjectsV2Command({ Bucket: name, ContinuationToken: token }),
          );
          for (const { Key } of page.Contents ?? []) {
            if (!Key || objects.has(Key)) continue;
            const object = await client.send(new GetObjectCommand({ Bucket: name, Key }));
            const body = await object.Body!.transformToString();
            objects.set(Key, {
              messageId: object.Metadata?.['ferry-message-id'] ?? Key,
              recordIds: recordIdsOf(body),
            });
          }
          token = page.NextContinuationToken;
        } while (token);
        return [...objects.values()];
      },
      recreate,
      close: async () => clients.destroy(),
    };
  }
  if (type === 'sqs') {
    const client = clients.sqs;
    let queueUrl = '';
    const recreate = async () => {
      queueUrl = (await client.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl!;
    };
    await recreate();
    const got: Landed[] = [];
    return {
      type,
      destination: { type, metadata: { ...common, queueUrl }, secrets },
      async send(message) {
        for (const part of queueParts(message, DEFAULT_MAX_MESSAGE_BYTES)) {
          await client.send(
            new SendMessageCommand({
              QueueUrl: queueUrl,
              MessageBody: part.body,
              MessageAttributes: {
                [MESSAGE_ID_ATTRIBUTE]: { DataType: 'String', StringValue: part.messageId },
              },
            }),
          );
        }
      },
      async landed() {
        for (;;) {
          const { Messages = [] } = await client.send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              MaxNumberOfMessages: 10,
              MessageAttributeNames: ['All'],
            }),
          );
          if (!Messages.length) return got;
          for (const message of Messages) {
            const id = message.MessageAttributes?.[MESSAGE_ID_ATTRIBUTE]?.StringValue;
            got.push({ messageId: String(id), recordIds: recordIdsOf(message.Body!) });
          }
          await client.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: Messages.map((message, index) => ({
                Id: String(index),
                ReceiptHandle: message.ReceiptHandle!,
              })),
            }),
          );
        }
      },
      recreate,
      close: async () => clients.destroy(),
    };
  }
  const client = clients.kinesis;
  let iterator: string | undefined;
  const recreate = async () => {
    await client.send(new CreateStreamCommand({ StreamName: name, ShardCount: 1 }));
    iterator = undefined;
  };
  await recreate();
  const got: Landed[] = [];
  return {
    type,
    destination: { type, metadata: { ...common, streamName: name, region: MOTO_REGION }, secrets },
    async send(message) {
      const answer = await client.send(
        new PutRecordsCommand({
          StreamName: name,
          Records: [{ Data: Buffer.from(message.body), PartitionKey: message.messageId }],
        }),
      );
      if (answer.FailedRecordCount)
        throw new Error(`kinesis refused a record: ${answer.Records?.[0]?.ErrorCode}`);
    },
    async landed() {
      if (!iterator) {
        const shards = await client.send(new ListShardsCommand({ StreamName: name }));
        const first = await client.send(
          new GetShardIteratorCommand({
            StreamName: name,
            ShardId: shards.Shards![0].ShardId!,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        );
        iterator = first.ShardIterator!;
      }
      for (;;) {
        const page: GetRecordsCommandOutput = await client.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
        );
        for (const record of page.Records ?? [])
          got.push({
            messageId: record.PartitionKey!,
            recordIds: recordIdsOf(Buffer.from(record.Data!).toString()),
          });
        iterator = page.NextShardIterator ?? iterator;
        if (!page.Records?.length) return got;
      }
    },
    recreate,
    async close() {
      await client.send(new DeleteStreamCommand({ StreamName: name })).catch(() => undefined);
      clients.destroy();
    },
  };
}
