import { createConnection } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { MqttClient } from 'mqtt';
import Type from 'typebox';
import { Secret } from '../../schemas/common.js';
import {
  acceptedSend,
  failedSend,
  SendTimeout,
  withDeadline,
  type DestinationType,
} from '../destination-type.js';
import { DestinationUrlError, guardedLookup, type DestinationPolicy } from '../url-guard.js';
import { assertServerAddress, describeServer, serverUrlIssues } from './server-url.js';

/**
 * MQTT (Ferry's own type): each message published to one topic with QoS 1 (or 2), the send done
 * when the broker acknowledges it. MQTT has no lasting message id, so Ferry's rides in the MQTT 5
 * user property `ferryMessageId`: a redelivery arrives again, with the same id.
 */

export interface MqttMetadata {
  serverUrl: string;
  topic: string;
  qos?: 1 | 2;
}

export interface MqttSecrets {
  username?: string;
  password?: string;
}

const SCHEMES = ['mqtt', 'mqtts'] as const;
export const MESSAGE_ID_PROPERTY = 'ferryMessageId';

/** CONNACK and PUBACK reason codes no later attempt changes: refused identity or topic, a bad packet. */
const PERMANENT_REASONS = new Set([128, 129, 130, 132, 133, 134, 135, 138, 140, 144, 149, 153]);
/** MQTT 3.1.1 CONNACK return codes for bad credentials and not authorized. */
const PERMANENT_V3 = new Set([4, 5]);

const clients = new Map<string, { version: string; client: MqttClient }>();

function drop(destinationId: string, client: MqttClient): void {
  if (clients.get(destinationId)?.client === client) clients.delete(destinationId);
  client.end(true);
}

/** A socket to the broker whose host name is checked by the SSRF guard as it resolves. */
function guardedStream(url: URL, policy: DestinationPolicy) {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const lookup = policy.allowPrivate ? undefined : guardedLookup(policy);
  if (url.protocol === 'mqtts:') {
    return tlsConnect({ host, port: Number(url.port) || 8883, servername: host, ...(lookup && { lookup }) });
  }
  return createConnection({ host, port: Number(url.port) || 1883, ...(lookup && { lookup }) });
}

async function connected(
  destinationId: string,
  version: string,
  metadata: MqttMetadata,
  secrets: MqttSecrets,
  policy: DestinationPolicy,
): Promise<MqttClient> {
  const held = clients.get(destinationId);
  if (held?.version === version && held.client.connected) return held.client;
  if (held) drop(destinationId, held.client);
  // Loaded on the first send: most processes never talk to an MQTT broker.
  const { MqttClient: Client } = await import('mqtt');
  const url = new URL(metadata.serverUrl);
  // mqtt.js closes on a refused or failed socket without saying why: the stream's own error does.
  let socketError: Error | undefined;
  const client = new Client(
    () => {
      const stream = guardedStream(url, policy);
      stream.once('error', (error) => (socketError = error));
      return stream;
    },
    {
      protocolVersion: 5,
      clientId: `ferry-${destinationId.slice(0, 8)}-${Math.random().toString(36).slice(2, 10)}`,
      ...(secrets.username !== undefined && { username: secrets.username }),
      ...(secrets.password !== undefined && { password: secrets.password }),
      // No reconnecting in the background: a lost connection fails its sends and the next send connects.
      reconnectPeriod: 0,
      connectTimeout: 10_000,
    },
  );
  clients.set(destinationId, { version, client });
  client.on('close', () => drop(destinationId, client));
  try {
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
      client.once('close', () =>
        reject(
          socketError ?? Object.assign(new Error('the broker closed the connection'), { code: 'ECONNRESET' }),
        ),
      );
    });
  } catch (error) {
    drop(destinationId, client);
    throw error;
  }
  // Later errors fail the publishes waiting on them; an unheard 'error' event would end the process.
  client.on('error', () => undefined);
  return client;
}

function failure(error: unknown, startedAt: number, timeoutMs: number, secrets: MqttSecrets) {
  if (error instanceof DestinationUrlError)
    return failedSend(startedAt, error.message, error.code === 'unresolvable', 'refused');
  if (error instanceof SendTimeout)
    return failedSend(startedAt, `no answer within ${timeoutMs} ms`, true, 'timeout');
  const code = (error as { code?: unknown }).code;
  let text = `${error instanceof Error ? error.message.split('\n')[0] : String(error)}${typeof code === 'number' ? ` (reason ${code})` : ''}`;
  if (typeof code === 'string' && !text.includes(code)) text = `${code}: ${text}`;
  for (const secret of [secrets.password, secrets.username])
    if (secret) text = text.split(secret).join('[redacted]');
  const permanent = typeof code === 'number' && (PERMANENT_REASONS.has(code) || PERMANENT_V3.has(code));
  return failedSend(startedAt, text.slice(0, 300), !permanent, permanent ? 'status' : 'network');
}

export const mqttType: DestinationType<MqttMetadata, MqttSecrets> = {
  type: 'mqtt',
  title: 'Each message published to an MQTT topic with QoS 1 (MQTT 5)',
  messageIdOnFarSide:
    'the MQTT 5 user property `ferryMessageId`; a redelivery arrives again with the same id',
  metadata: Type.Object(
    {
      serverUrl: Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'mqtt:// or mqtts:// (TLS), host and port, e.g. `mqtt://127.0.0.1:1883`; credentials go in secrets.',
      }),
      topic: Type.String({
        minLength: 1,
        maxLength: 1024,
        pattern: '^[^+#\\u0000]+$',
        description: 'The topic to publish to (no wildcards).',
      }),
      qos: Type.Optional(
        Type.Union([Type.Literal(1), Type.Literal(2)], {
          default: 1,
          description: 'QoS 1 (at least once, the default) or 2 (exactly once to the broker).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  secrets: Type.Object(
    {
      username: Type.Optional(Secret({ minLength: 1, maxLength: 1024 })),
      password: Type.Optional(Secret({ minLength: 1, maxLength: 1024 })),
    },
    { additionalProperties: false },
  ),
  example: { metadata: { serverUrl: 'mqtt://127.0.0.1:1883', topic: 'ferry/records', qos: 1 } },
  check: (metadata, secrets, policy) => [
    ...serverUrlIssues('metadata.serverUrl', metadata.serverUrl, SCHEMES, policy),
    // MQTT carries a password only with a user name.
    ...(secrets.password !== undefined && secrets.username === undefined
      ? [
          {
            in: 'body' as const,
            name: 'secrets.username',
            detail: 'secrets.username is required with secrets.password',
          },
        ]
      : []),
  ],
  describe: (metadata) => `${describeServer(metadata.serverUrl)} topic ${metadata.topic}`,
  async send(target, message, options) {
    const startedAt = Date.now();
    const { metadata, secrets } = target;
    try {
      assertServerAddress(new URL(metadata.serverUrl), options.policy);
      await withDeadline(
        (async () => {
          const client = await connected(
            target.destinationId,
            target.version,
            metadata,
            secrets,
            options.policy,
          );
          await client.publishAsync(
            metadata.topic,
            typeof message.body === 'string' ? message.body : Buffer.from(message.body),
            {
              qos: metadata.qos ?? 1,
              properties: {
                contentType: 'application/json',
                userProperties: { [MESSAGE_ID_PROPERTY]: message.messageId },
              },
            },
          );
        })(),
        options.timeoutMs,
        'mqtt',
      );
      return acceptedSend(startedAt, `mqtt ${metadata.topic} qos ${metadata.qos ?? 1}`);
    } catch (error) {
      return failure(error, startedAt, options.timeoutMs, secrets);
    }
  },
  async close() {
    const all = [...clients.values()];
    clients.clear();
    await Promise.all(all.map(({ client }) => client.endAsync(true)));
  },
};
