import type { S3Client } from '@aws-sdk/client-s3';
import Type from 'typebox';
import { acceptedSend, failedSend, type DestinationType, type OutgoingMessage } from '../destination-type.js';
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
  type AwsSecrets,
} from './aws.js';
import { evaluateTemplate, TemplateError } from './message-template.js';

/**
 * S3 (and S3-compatible stores through `endpointUrl`): one object per message, its body the JSON a
 * webhook receives. The key is a function of the message alone (the default: the message's time
 * and id; or `keyTemplate`), so a redelivered message overwrites its own object instead of adding one.
 */

export const STORAGE_CLASSES = [
  'STANDARD',
  'REDUCED_REDUNDANCY',
  'STANDARD_IA',
  'ONEZONE_IA',
  'INTELLIGENT_TIERING',
  'GLACIER',
  'GLACIER_IR',
  'DEEP_ARCHIVE',
  'OUTPOSTS',
  'EXPRESS_ONEZONE',
] as const;

export interface S3Metadata {
  region?: string;
  bucket: string;
  keyTemplate?: string;
  storageClass?: (typeof STORAGE_CLASSES)[number];
  endpointUrl?: string;
}

const MAX_KEY_BYTES = 1024;

const S3MetadataSchema = Type.Object(
  {
    region: Type.Optional({ ...Region, default: DEFAULT_REGION }),
    bucket: Type.String({
      pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
      description: 'The bucket (it may be created after the destination).',
    }),
    keyTemplate: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          "A JMESPath expression over the message (plus `messageId`) giving the object's key, e.g. `join('/', [objectName, operationId, messageId])`. Default: the message's time and id, `2026/11/27/191724-msg_….json`, so a redelivery overwrites its own object.",
      }),
    ),
    storageClass: Type.Optional(
      Type.Union(
        STORAGE_CLASSES.map((name) => Type.Literal(name)),
        { description: 'The objects’ storage class.', default: 'STANDARD' },
      ),
    ),
    endpointUrl: Type.Optional(EndpointUrl),
  },
  { additionalProperties: false },
);

/** The message's own time, stable across attempts: a result's operation time, else none. */
function messageTime(parsed: unknown, fallback?: Date): Date | undefined {
  const operationTime = (parsed as { operationTime?: unknown } | null)?.operationTime;
  if (typeof operationTime === 'string') {
    const time = new Date(operationTime);
    if (!Number.isNaN(time.getTime())) return time;
  }
  return fallback;
}

/** `2026/11/27/191724-msg_….json`: sorted by time in a listing, unique per message id. */
export function defaultObjectKey(messageId: string, time: Date | undefined): string {
  if (!time) return `messages/${messageId}.json`;
  const iso = time.toISOString();
  const clock = iso.slice(11, 19).replaceAll(':', '');
  return `${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}/${clock}-${messageId}.json`;
}

/** The object key of a message; a TemplateError when the template cannot place it. */
export function objectKey(
  metadata: Pick<S3Metadata, 'keyTemplate'>,
  message: OutgoingMessage & { createdAt?: Date },
): string {
  const text = typeof message.body === 'string' ? message.body : message.body.toString('utf8');
  const parsed: unknown = JSON.parse(text);
  if (metadata.keyTemplate === undefined)
    return defaultObjectKey(message.messageId, messageTime(parsed, message.createdAt));
  const key = evaluateTemplate(metadata.keyTemplate, parsed, message.messageId);
  if (Buffer.byteLength(key) > MAX_KEY_BYTES)
    throw new TemplateError(`the template gave a key over S3's ${MAX_KEY_BYTES}-byte limit`);
  return key;
}

const clients = new ClientPool<S3Client>();

export const s3Type: DestinationType<S3Metadata, AwsSecrets> = {
  type: 's3',
  title: 'One object per message in an S3 (or S3-compatible) bucket',
  messageIdOnFarSide:
    'the object’s `x-amz-meta-ferry-message-id` metadata; the default key holds it too, so a redelivery overwrites its own object',
  metadata: S3MetadataSchema,
  secrets: AwsSecretsSchema,
  example: {
    metadata: { region: 'us-east-1', bucket: 'ferry-records', storageClass: 'STANDARD' },
    secrets: { awsKeyId: 'AKIA…', awsSecretKey: '…' },
  },
  check: (metadata, _secrets, policy) =>
    awsSettingsIssues(metadata, policy, { keyTemplate: metadata.keyTemplate }),
  describe: (metadata) => `s3://${metadata.bucket}`,
  async send(target, message, options) {
    const startedAt = Date.now();
    const { metadata, secrets } = target;
    const deadline = attemptDeadline(options.timeoutMs);
    try {
      await assertEndpoint(metadata.endpointUrl, options.policy);
      let key: string;
      try {
        key = objectKey(metadata, message);
      } catch (error) {
        if (!(error instanceof TemplateError) && !(error instanceof SyntaxError)) throw error;
        return failedSend(startedAt, `no object key: ${error.message}`, false, 'invalid-request');
      }
      // Loaded on the first send: the SDK takes ~0.4 s to import, and most processes never need it.
      const { PutObjectCommand, S3Client } = await import('@aws-sdk/client-s3');
      const client = clients.get(
        target.destinationId,
        target.version,
        // Path-style requests: S3-compatible stores and local endpoints rarely serve bucket subdomains.
        () =>
          new S3Client({
            ...clientConfig(metadata, secrets, options.policy),
            forcePathStyle: metadata.endpointUrl !== undefined,
          }),
      );
      const body = typeof message.body === 'string' ? Buffer.from(message.body, 'utf8') : message.body;
      const put = await client.send(
        new PutObjectCommand({
          Bucket: metadata.bucket,
          Key: key,
          Body: body,
          ContentType: 'application/json',
          StorageClass: metadata.storageClass ?? 'STANDARD',
          Metadata: { 'ferry-message-id': message.messageId },
        }),
        { abortSignal: deadline.signal },
      );
      const version = put.VersionId ? ` version ${put.VersionId}` : '';
      return acceptedSend(startedAt, `s3://${metadata.bucket}/${key}${version}`);
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
