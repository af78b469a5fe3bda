import type { SQSClient } from '@aws-sdk/client-sqs';
import Type from 'typebox';
import type { ProblemIssue } from '../../core/problem.js';
import { redactUrl } from '../url-guard.js';
import { acceptedSend, failedSend, type DestinationType, type OutgoingMessage } from '../destination-type.js';
import {
  encodeEntry,
  MessageTooLargeError,
  splitEncoded,
  type ResultEntry,
  type ResultMessageContext,
} from '../messages.js';
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
  endpointIssue,
  Region,
  type AwsSecrets,
} from './aws.js';

/**
 * SQS: each message becomes one queue message (more when it is over the queue's size limit: a
 * result message is split again into parts, `<messageId>.<n>`), its body the JSON a webhook
 * receives and Ferry's message id in the `ferryMessageId` attribute. On a FIFO queue the id is
 * also the deduplication id, so SQS drops a redelivery within its five-minute window; messages of
 * one installation and object share a message group, keeping their order.
 */

export interface SqsMetadata {
  queueUrl: string;
  region?: string;
  endpointUrl?: string;
}

/** SQS's size limit before it tells us the queue's own (256 KiB, the long-standing default). */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024;
export const MESSAGE_ID_ATTRIBUTE = 'ferryMessageId';

const SqsMetadataSchema = Type.Object(
  {
    queueUrl: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'The queue’s URL, e.g. `https://sqs.us-east-1.amazonaws.com/123456789012/ferry` (a `.fifo` queue gets deduplication ids).',
    }),
    region: Type.Optional({
      ...Region,
      description: 'The AWS region; default: the one in the queue URL, else `us-east-1`.',
    }),
    endpointUrl: Type.Optional(EndpointUrl),
  },
  { additionalProperties: false },
);

/** `/<account id>/<queue name>`: the path of every SQS queue URL (AWS, moto, LocalStack). */
const QUEUE_PATH = /^\/[^/]+\/([A-Za-z0-9_-]{1,80}(\.fifo)?)$/;

/** The queue's name from its URL, or undefined when the URL names none. */
export function queueName(queueUrl: string): string | undefined {
  try {
    const url = new URL(queueUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return QUEUE_PATH.exec(url.pathname)?.[1];
  } catch {
    return undefined;
  }
}

/** The queue URL as events and logs show it: without a query string or user info. */
function safeQueueUrl(queueUrl: string): string {
  try {
    return redactUrl(new URL(queueUrl));
  } catch {
    return '(invalid queue URL)';
  }
}

/** The region an AWS queue URL names (`sqs.<region>.amazonaws.com`, `<region>.queue.amazonaws.com`). */
export function queueRegion(metadata: SqsMetadata): string {
  if (metadata.region) return metadata.region;
  try {
    const host = new URL(metadata.queueUrl).hostname;
    const match =
      /^sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(host) ??
      /^([a-z0-9-]+)\.queue\.amazonaws\.com$/.exec(host);
    return match?.[1] ?? DEFAULT_REGION;
  } catch {
    return DEFAULT_REGION;
  }
}

/** Where the client connects: the endpoint when given, else the queue URL's own origin. */
function connectTo(metadata: SqsMetadata): string {
  return metadata.endpointUrl ?? new URL(metadata.queueUrl).origin;
}

/** The bytes SQS counts for a message: its body plus each attribute's name, type and value. */
export function sqsMessageBytes(body: string | Buffer, messageId: string): number {
  return (
    Buffer.byteLength(body) + MESSAGE_ID_ATTRIBUTE.length + 'String'.length + Buffer.byteLength(messageId)
  );
}

export interface QueuePart {
  messageId: string;
  body: string;
}

/**
 * The queue messages one Ferry message becomes: itself when it fits, else (a result message) its
 * records split again under `maxBytes`, each part with an id of its own derived from the message's.
 */
export function queueParts(message: OutgoingMessage, maxBytes: number): QueuePart[] {
  const text = typeof message.body === 'string' ? message.body : message.body.toString('utf8');
  if (sqsMessageBytes(text, message.messageId) <= maxBytes)
    return [{ messageId: message.messageId, body: text }];
  const parsed = JSON.parse(text) as Partial<ResultMessageContext> & { result?: unknown };
  if (!Array.isArray(parsed.result) || typeof parsed.action !== 'string')
    throw new MessageTooLargeError(0, Buffer.byteLength(text), maxBytes);
  // Room for the longest part id the attribute may carry.
  const idRoom = sqsMessageBytes('', `${message.messageId}.${parsed.result.length}`);
  const parts = splitEncoded(
    parsed as ResultMessageContext,
    (parsed.result as ResultEntry[]).map(encodeEntry),
    parsed.result.length,
    maxBytes - idRoom,
  );
  return parts.map((part) => ({
    messageId: `${message.messageId}.${part.partIndex}`,
    body: part.body.toString('utf8'),
  }));
}

/** A FIFO queue's message group: one per installation and object (or notification type), keeping their order. */
export function messageGroup(body: string): string {
  const head = JSON.parse(body) as {
    installationId?: unknown;
    objectName?: unknown;
    notificationType?: unknown;
    data?: { installationId?: unknown };
  };
  const installation = head.installationId ?? head.data?.installationId;
  const group = [installation, head.objectName ?? head.notificationType]
    .filter((part) => typeof part === 'string')
    .join(':');
  return (group || 'ferry').replace(/[^\x21-\x7e]/g, '_').slice(0, 128);
}

const clients = new ClientPool<SQSClient>();
const queueLimits = new Map<string, number>();

/** The queue's MaximumMessageSize, asked once per destination version; the default when SQS will not say. */
async function maxMessageBytes(
  client: SQSClient,
  key: string,
  queueUrl: string,
  signal: AbortSignal,
): Promise<number> {
  const known = queueLimits.get(key);
  if (known) return known;
  const { GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  try {
    const answer = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['MaximumMessageSize'] }),
      { abortSignal: signal },
    );
    const limit = Number(answer.Attributes?.MaximumMessageSize);
    if (!Number.isInteger(limit) || limit < 1024) return DEFAULT_MAX_MESSAGE_BYTES;
    queueLimits.set(key, limit);
    return limit;
  } catch (error) {
    // A refusal (no sqs:GetQueueAttributes permission) is remembered, so each send does not ask
    // again; a lost connection or a queue not made yet is not. Sending says why if the queue is really unusable.
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 403)
      queueLimits.set(key, DEFAULT_MAX_MESSAGE_BYTES);
    return DEFAULT_MAX_MESSAGE_BYTES;
  }
}

export const sqsType: DestinationType<SqsMetadata, AwsSecrets> = {
  type: 'sqs',
  title: 'One queue message per message on an Amazon SQS queue (standard or FIFO)',
  messageIdOnFarSide:
    'the `ferryMessageId` message attribute; on a FIFO queue also the MessageDeduplicationId, so SQS drops a redelivery',
  metadata: SqsMetadataSchema,
  secrets: AwsSecretsSchema,
  example: {
    metadata: { queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/ferry-records' },
    secrets: { awsKeyId: 'AKIA…', awsSecretKey: '…' },
  },
  async check(metadata, _secrets, policy) {
    const issues: ProblemIssue[] = [];
    if (!queueName(metadata.queueUrl)) {
      issues.push({
        in: 'body',
        name: 'metadata.queueUrl',
        detail:
          'must be an http(s) queue URL ending in the queue’s name, e.g. https://sqs.us-east-1.amazonaws.com/123456789012/ferry',
      });
    } else if (metadata.endpointUrl === undefined) {
      const queue = await endpointIssue('metadata.queueUrl', metadata.queueUrl, policy);
      if (queue) issues.push(queue);
    }
    return [...issues, ...(await awsSettingsIssues(metadata, policy))];
  },
  describe: (metadata) => `sqs ${safeQueueUrl(metadata.queueUrl)}`,
  async send(target, message, options) {
    const startedAt = Date.now();
    const { metadata, secrets } = target;
    const deadline = attemptDeadline(options.timeoutMs);
    try {
      const endpoint = connectTo(metadata);
      await assertEndpoint(endpoint, options.policy);
      // Always an explicit endpoint: otherwise the SDK swaps in the queue URL's host and warns on the console.
      // Loaded on the first send: the SDK takes ~0.4 s to import, and most processes never need it.
      const { SendMessageCommand, SQSClient } = await import('@aws-sdk/client-sqs');
      const client = clients.get(
        target.destinationId,
        target.version,
        () =>
          new SQSClient(
            clientConfig({ endpointUrl: endpoint }, secrets, options.policy, queueRegion(metadata)),
          ),
      );
      const limitKey = `${target.destinationId}\u0000${target.version}`;
      const limit = await maxMessageBytes(client, limitKey, metadata.queueUrl, deadline.signal);
      let parts: QueuePart[];
      try {
        parts = queueParts(message, limit);
      } catch (error) {
        if (!(error instanceof MessageTooLargeError)) throw error;
        return failedSend(
          startedAt,
          `over the queue's ${limit}-byte limit: ${error.message}`,
          false,
          'invalid-request',
        );
      }
      const fifo = metadata.queueUrl.endsWith('.fifo');
      const sent: string[] = [];
      for (const part of parts) {
        const answer = await client.send(
          new SendMessageCommand({
            QueueUrl: metadata.queueUrl,
            MessageBody: part.body,
            MessageAttributes: {
              [MESSAGE_ID_ATTRIBUTE]: { DataType: 'String', StringValue: part.messageId },
            },
            ...(fifo && { MessageDeduplicationId: part.messageId, MessageGroupId: messageGroup(part.body) }),
          }),
          { abortSignal: deadline.signal },
        );
        sent.push(
          `${answer.MessageId ?? '?'}${answer.SequenceNumber ? ` seq ${answer.SequenceNumber}` : ''}`,
        );
      }
      const where = sent.length <= 3 ? sent.join(', ') : `${sent.length} messages, first ${sent[0]}`;
      return acceptedSend(startedAt, `sqs ${queueName(metadata.queueUrl)} message ${where}`);
    } catch (error) {
      return awsFailure(error, startedAt, secrets, deadline.timedOut(), options.timeoutMs);
    } finally {
      deadline.done();
    }
  },
  async close() {
    clients.close();
    queueLimits.clear();
  },
};
