import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import Type from 'typebox';
import type { ProblemIssue } from '../../core/problem.js';
import { Secret } from '../../schemas/common.js';
import { failedSend, type SendResult } from '../destination-type.js';
import {
  assertDeliverableUrl,
  DestinationUrlError,
  guardedLookup,
  type DestinationPolicy,
} from '../url-guard.js';
import { templateProblem } from './message-template.js';

/**
 * What S3, SQS and Kinesis share: the credential fields (COMPAT.md's names), region and endpoint
 * settings, one client per destination version whose connections are checked by the SSRF guard,
 * and the reading of an AWS failure into a retryable verdict and an error without credentials.
 */

export interface AwsSecrets {
  awsKeyId: string;
  awsSecretKey: string;
  awsSessionToken?: string;
}

export interface AwsEndpointSettings {
  region?: string;
  endpointUrl?: string;
}

export const DEFAULT_REGION = 'us-east-1';

export const Region = Type.String({
  pattern: '^[a-z0-9-]{1,32}$',
  description: 'The AWS region, e.g. `us-east-1` (the default).',
});

export const EndpointUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'An S3-compatible or local endpoint instead of AWS (MinIO, moto: `http://127.0.0.1:5000`). Private and loopback addresses are refused unless FERRY_ALLOW_PRIVATE_DESTINATIONS is on.',
});

/**
 * Keys are required: without them the AWS SDK would fall back to the Ferry server's own role, and
 * anyone who may create a destination could write wherever the server may.
 */
export const AwsSecretsSchema = Type.Object(
  {
    awsKeyId: Secret({ minLength: 1, maxLength: 128, description: 'The access key id.' }),
    awsSecretKey: Secret({ minLength: 1, maxLength: 256, description: 'The secret access key.' }),
    awsSessionToken: Type.Optional(
      Secret({ minLength: 1, maxLength: 8192, description: 'A session token, for temporary credentials.' }),
    ),
  },
  { additionalProperties: false },
);

/** An endpoint URL's problem as a 400 issue. An unresolvable host is fine: it may come up later. */
export async function endpointIssue(
  name: string,
  url: string | undefined,
  policy: DestinationPolicy,
): Promise<ProblemIssue | undefined> {
  if (url === undefined) return undefined;
  try {
    await assertDeliverableUrl(url, policy);
    return undefined;
  } catch (error) {
    if (!(error instanceof DestinationUrlError)) throw error;
    if (error.code === 'unresolvable') return undefined;
    return { in: 'body', name, detail: error.message };
  }
}

/**
 * The checks every AWS type makes beyond its schema, as 400 issues naming the field: the endpoint
 * URL, and each template's syntax (`templates`: field name to template, absent when not set).
 */
export async function awsSettingsIssues(
  settings: AwsEndpointSettings,
  policy: DestinationPolicy,
  templates: Record<string, string | undefined> = {},
): Promise<ProblemIssue[]> {
  const issues: ProblemIssue[] = [];
  const endpoint = await endpointIssue('metadata.endpointUrl', settings.endpointUrl, policy);
  if (endpoint) issues.push(endpoint);
  for (const [field, template] of Object.entries(templates)) {
    const problem = template === undefined ? undefined : templateProblem(template);
    if (problem) issues.push({ in: 'body', name: `metadata.${field}`, detail: problem });
  }
  return issues;
}

/** What a client needs from the destination, and the connection options every AWS client shares. */
export function clientConfig(
  settings: AwsEndpointSettings,
  secrets: AwsSecrets,
  policy: DestinationPolicy,
  region = settings.region ?? DEFAULT_REGION,
) {
  const lookup = policy.allowPrivate ? undefined : guardedLookup(policy);
  return {
    region,
    ...(settings.endpointUrl !== undefined && { endpoint: settings.endpointUrl }),
    credentials: {
      accessKeyId: secrets.awsKeyId,
      secretAccessKey: secrets.awsSecretKey,
      ...(secrets.awsSessionToken !== undefined && { sessionToken: secrets.awsSessionToken }),
    },
    // Ferry retries on its own schedule, with the attempts ledger written before each try.
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler({
      httpAgent: new HttpAgent({ keepAlive: true, ...(lookup && { lookup }) }),
      httpsAgent: new HttpsAgent({ keepAlive: true, ...(lookup && { lookup }) }),
      connectionTimeout: 10_000,
    }),
  };
}

interface Destroyable {
  destroy(): void;
}

/**
 * One client per destination, made again when its settings change (`version`): clients hold
 * connection pools, so they are kept between messages and destroyed when replaced or closed.
 */
export class ClientPool<Client extends Destroyable> {
  private readonly clients = new Map<string, { version: string; client: Client }>();

  get(destinationId: string, version: string, make: () => Client): Client {
    const held = this.clients.get(destinationId);
    if (held?.version === version) return held.client;
    held?.client.destroy();
    const client = make();
    this.clients.set(destinationId, { version, client });
    return client;
  }

  close(): void {
    for (const { client } of this.clients.values()) client.destroy();
    this.clients.clear();
  }
}

/** Checks an endpoint the client will connect to before sending, for a readable refusal (IP literals skip `lookup`). */
export async function assertEndpoint(url: string | undefined, policy: DestinationPolicy): Promise<void> {
  if (url !== undefined) await assertDeliverableUrl(url, policy);
}

const THROTTLED = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'SlowDown',
  'KMSThrottlingException',
  'ServiceUnavailable',
  'InternalError',
  'InternalFailure',
]);

/** The bucket, queue or stream may be created later, as a server may come up later. */
const MISSING = new Set([
  'NoSuchBucket',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'ResourceNotFoundException',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'ETIMEDOUT',
]);

/** Replaces every credential in `text`: AWS sometimes quotes the key id, and a proxy may echo more. */
export function withoutSecrets(text: string, secrets: Partial<AwsSecrets>): string {
  let clean = text;
  for (const value of [secrets.awsSecretKey, secrets.awsSessionToken, secrets.awsKeyId]) {
    if (value && value.length >= 4) clean = clean.split(value).join('[redacted]');
  }
  return clean.length > 500 ? `${clean.slice(0, 500)}…` : clean;
}

interface AwsError {
  name?: string;
  code?: string;
  message?: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
  cause?: { code?: string };
}

/** A failed AWS call as a SendResult: retryable when trying later may succeed, credentials scrubbed. */
export function awsFailure(
  error: unknown,
  startedAt: number,
  secrets: Partial<AwsSecrets>,
  timedOut: boolean,
  timeoutMs: number,
): SendResult {
  if (error instanceof DestinationUrlError)
    return failedSend(startedAt, error.message, error.code === 'unresolvable', 'refused');
  const failure = (error ?? {}) as AwsError;
  const name = failure.name ?? 'Error';
  if (timedOut || name === 'TimeoutError' || name === 'AbortError' || name === 'RequestTimeout')
    return failedSend(startedAt, `no answer within ${timeoutMs} ms`, true, 'timeout');
  // A socket error thrown across realms (a test's VM context) reaches us only as text in a wrapper.
  const code = failure.code ?? failure.cause?.code ?? /\b(E[A-Z]{4,})\b/.exec(failure.message ?? '')?.[1];
  if (code && NETWORK_CODES.has(code))
    return failedSend(startedAt, `connection failed (${code})`, true, 'network');
  const status = failure.$metadata?.httpStatusCode;
  const retryable =
    Boolean(failure.$retryable) ||
    THROTTLED.has(name) ||
    MISSING.has(name) ||
    (status !== undefined && (status >= 500 || status === 429 || status === 408));
  const text = withoutSecrets(`${name}${status ? ` (${status})` : ''}: ${failure.message ?? ''}`, secrets);
  return failedSend(startedAt, text, retryable, status === undefined ? 'network' : 'status');
}

/** An abort signal for the whole attempt, and whether it fired. */
export function attemptDeadline(timeoutMs: number): {
  signal: AbortSignal;
  timedOut: () => boolean;
  done: () => void;
} {
  const controller = new AbortController();
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
    controller.abort();
  }, timeoutMs);
  return { signal: controller.signal, timedOut: () => fired, done: () => clearTimeout(timer) };
}
