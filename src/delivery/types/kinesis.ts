import type { KinesisClient, PutRecordsRequestEntry, PutRecordsResultEntry } from '@aws-sdk/client-kinesis';
import Type from 'typebox';
import { acceptedSend, failedSend, type DestinationType } from '../destination-type.js';
import {
  assertEndpoint,
  attemptDeadline,
  awsFailure,
  AwsSecretsSchema,
  ClientPool,
  clientConfig,
  DEFAULT_REGION,
  EndpointUrl,
  awsSettingsIssues,
  Region,
  withoutSecrets,
  type AwsSecrets,
} from './aws.js';
import { evaluateTemplate, TemplateError } from './message-template.js';

/**
 * Kinesis Data Streams: each message one record (its data the JSON a webhook receives), put with
 * PutRecords. PutRecords succeeds as a call while failing some records (throttled shards); only
 * those are put again, so a record that landed is not repeated. The partition key is the message id
 * unless `partitionKeyTemplate` says otherwise: Kinesis has no message id of its own, and the key
 * is what a consumer sees beside the data.
 */

export interface KinesisMetadata {
  region?: string;
  streamName: string;
  partitionKeyTemplate?: string;
  endpointUrl?: string;
}

const MAX_PARTITION_KEY_CHARS = 256;
/** Rounds of putting failed records again within one attempt, before the attempt fails retryably. */
export const PUT_ROUNDS = 4;

const KinesisMetadataSchema = Type.Object(
  {
    region: Type.Optional({ ...Region, default: DEFAULT_REGION }),
    streamName: Type.String({ pattern: '^[a-zA-Z0-9_.-]{1,128}$', description: 'The data stream’s name.' }),
    partitionKeyTemplate: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'A JMESPath expression over the message (plus `messageId`) giving the partition key, e.g. `installationId` to keep an installation’s messages in order on one shard. Default: the message id.',
      }),
    ),
    endpointUrl: Type.Optional(EndpointUrl),
  },
  { additionalProperties: false },
);

export function partitionKey(
  metadata: Pick<KinesisMetadata, 'partitionKeyTemplate'>,
  body: string,
  messageId: string,
): string {
  if (metadata.partitionKeyTemplate === undefined) return messageId;
  const key = evaluateTemplate(metadata.partitionKeyTemplate, JSON.parse(body), messageId);
  if ([...key].length > MAX_PARTITION_KEY_CHARS)
    throw new TemplateError(
      `the template gave a partition key over Kinesis's ${MAX_PARTITION_KEY_CHARS}-character limit`,
    );
  return key;
}

export type PutRecords = (records: PutRecordsRequestEntry[]) => Promise<PutRecordsResultEntry[]>;

export interface PutOutcome {
  /** The answer for each record, in the order given: a sequence number, or the last error. */
  results: PutRecordsResultEntry[];
  failed: number;
  rounds: number;
}

/**
 * Puts the records, then again only those the answer marks failed (a throttled shard, an internal
 * error), up to `rounds` calls with a short backoff between them.
 */
export async function putRecordsRetryingFailed(
  put: PutRecords,
  records: PutRecordsRequestEntry[],
  rounds = PUT_ROUNDS,
  backoffMs = 100,
): Promise<PutOutcome> {
  const results: PutRecordsResultEntry[] = records.map(() => ({}));
  let pending = records.map((_, index) => index);
  let round = 0;
  while (pending.length && round < rounds) {
    if (round > 0) await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (round - 1)));
    round++;
    const answer = await put(pending.map((index) => records[index]));
    if (answer.length !== pending.length)
      throw new Error(`PutRecords answered ${answer.length} results for ${pending.length} records`);
    const still: number[] = [];
    answer.forEach((entry, position) => {
      results[pending[position]] = entry;
      if (entry.ErrorCode || !entry.SequenceNumber) still.push(pending[position]);
    });
    pending = still;
  }
  return { results, failed: pending.length, rounds: round };
}

const clients = new ClientPool<KinesisClient>();

export const kinesisType: DestinationType<KinesisMetadata, AwsSecrets> = {
  type: 'kinesis',
  title: 'One record per message on an Amazon Kinesis data stream',
  messageIdOnFarSide:
    'the record’s partition key (unless partitionKeyTemplate is set); Kinesis has no message id',
  metadata: KinesisMetadataSchema,
  secrets: AwsSecretsSchema,
  example: {
    metadata: { region: 'us-east-1', streamName: 'ferry-records', partitionKeyTemplate: 'installationId' },
    secrets: { awsKeyId: 'AKIA…', awsSecretKey: '…' },
  },
  check: (metadata, _secrets, policy) =>
    awsSettingsIssues(metadata, policy, { partitionKeyTemplate: metadata.partitionKeyTemplate }),
  describe: (metadata) => `kinesis ${metadata.streamName}`,
  async send(target, message, options) {
    const startedAt = Date.now();
    const { metadata, secrets } = target;
    const deadline = attemptDeadline(options.timeoutMs);
    try {
      await assertEndpoint(metadata.endpointUrl, options.policy);
      const data = typeof message.body === 'string' ? Buffer.from(message.body, 'utf8') : message.body;
      let key: string;
      try {
        key = partitionKey(metadata, data.toString('utf8'), message.messageId);
      } catch (error) {
        if (!(error instanceof TemplateError) && !(error instanceof SyntaxError)) throw error;
        return failedSend(startedAt, `no partition key: ${error.message}`, false, 'invalid-request');
      }
      // Loaded on the first send: the SDK takes ~0.4 s to import, and most processes never need it.
      const { KinesisClient, PutRecordsCommand } = await import('@aws-sdk/client-kinesis');
      const client = clients.get(
        target.destinationId,
        target.version,
        () => new KinesisClient(clientConfig(metadata, secrets, options.policy)),
      );
      const put: PutRecords = async (records) => {
        const answer = await client.send(
          new PutRecordsCommand({ StreamName: metadata.streamName, Records: records }),
          {
            abortSignal: deadline.signal,
          },
        );
        return answer.Records ?? [];
      };
      const outcome = await putRecordsRetryingFailed(put, [{ Data: data, PartitionKey: key }]);
      const [record] = outcome.results;
      if (outcome.failed) {
        const reason = withoutSecrets(
          `${record.ErrorCode ?? 'no sequence number'}: ${record.ErrorMessage ?? ''}`,
          secrets,
        );
        return failedSend(
          startedAt,
          `the stream refused the record ${outcome.rounds} times (${reason})`,
          true,
          'status',
        );
      }
      return acceptedSend(
        startedAt,
        `kinesis ${metadata.streamName} ${record.ShardId ?? '?'} seq ${record.SequenceNumber}`,
      );
    } catch (error) {
      return awsFailure(error, startedAt, secrets, deadline.timedOut(), options.timeoutMs);
    } finally {
      deadline.done();
    }
  },
  async close() {
    clients.close();
  },
};
