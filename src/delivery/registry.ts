import type { DestinationType } from './destination-type.js';
import { kinesisType } from './types/kinesis.js';
import { mqttType } from './types/mqtt.js';
import { natsType } from './types/nats.js';
import { postgresType } from './types/postgres.js';
import { rabbitmqType } from './types/rabbitmq.js';
import { redisType } from './types/redis.js';
import { s3Type } from './types/s3.js';
import { slackType } from './types/slack.js';
import { sqsType } from './types/sqs.js';
import { webhookType } from './types/webhook.js';

/**
 * Every destination type Ferry can deliver to. A new type is one module under types/ and one line
 * in `BUILT_IN` below; the API, the OpenAPI document and the console list what is registered here.
 */

// The registry holds types of every shape; each module is typed precisely where it is written.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDestinationType = DestinationType<any, any>;

const BUILT_IN: readonly AnyDestinationType[] = [
  webhookType,
  rabbitmqType,
  postgresType,
  natsType,
  slackType,
  s3Type,
  sqsType,
  kinesisType,
  redisType,
  mqttType,
];

const registered = new Map<string, AnyDestinationType>(BUILT_IN.map((type) => [type.type, type]));

/**
 * Types the public service offers that Ferry cannot prove against a server running here: asked
 * for, they are a 400 naming the supported types.
 */
export const UNSUPPORTED_PUBLIC_TYPES = [
  'snowflake',
  'bigquery',
  'redshift',
  'pubsub',
  'azureservicebus',
  'clickhouse',
] as const;

/** Adds a type (tests may register their own); a second type of the same name is a mistake. */
export function registerDestinationType(type: AnyDestinationType): void {
  if (registered.has(type.type)) throw new Error(`destination type "${type.type}" is already registered`);
  registered.set(type.type, type);
}

export function destinationType(name: string): AnyDestinationType | undefined {
  return registered.get(name);
}

/** The registered types' names, webhook first, in registration order. */
export function destinationTypeNames(): string[] {
  return [...registered.keys()];
}

export function destinationTypes(): AnyDestinationType[] {
  return [...registered.values()];
}

/** Closes every type's pooled clients (worker shutdown, end of a test). */
export async function closeDestinationTypes(): Promise<void> {
  await Promise.all([...registered.values()].map((type) => type.close?.()));
}
