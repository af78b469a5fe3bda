import type { RedisClientType } from 'redis';
import Type from 'typebox';
import { Secret } from '../../schemas/common.js';
import {
  acceptedSend,
  failedSend,
  withDeadline,
  SendTimeout,
  type DestinationType,
} from '../destination-type.js';
import { DestinationUrlError, guardedLookup } from '../url-guard.js';
import { assertServerAddress, describeServer, serverUrlIssues } from './server-url.js';

/**
 * Redis streams (Ferry's own type): each message one stream entry, `XADD <stream> * messageId <id>
 * body <json>`. Streams have no duplicate detection of their own, so the XADD runs in a script
 * beside a marker key per message id (`<stream>:ferry-sent:<id>`, kept for `dedupWindowSecs`): a
 * message delivered again within the window adds no entry, and the answer names the first one.
 */

export interface RedisMetadata {
  serverUrl: string;
  stream: string;
  maxLen?: number;
  dedupWindowSecs?: number;
}

export interface RedisSecrets {
  username?: string;
  password?: string;
}

const SCHEMES = ['redis', 'rediss'] as const;
export const DEFAULT_DEDUP_WINDOW_SECS = 86_400;

/** Adds the entry unless this message id was added within the window; answers [added, entry id]. */
const XADD_ONCE = `
local seen = redis.call('GET', KEYS[2])
if seen then return {0, seen} end
local id
if ARGV[4] ~= '' then
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'messageId', ARGV[1], 'body', ARGV[2])
else
  id = redis.call('XADD', KEYS[1], '*', 'messageId', ARGV[1], 'body', ARGV[2])
end
redis.call('SET', KEYS[2], id, 'EX', ARGV[3])
return {1, id}
`;

/** The key that marks a message id as added to the stream. */
export const sentMarker = (stream: string, messageId: string) => `${stream}:ferry-sent:${messageId}`;

type Client = RedisClientType;

const clients = new Map<string, { version: string; client: Client }>();

function drop(destinationId: string, client: Client): void {
  if (clients.get(destinationId)?.client === client) clients.delete(destinationId);
  if (client.isOpen) client.destroy();
}

async function connected(
  destinationId: string,
  version: string,
  metadata: RedisMetadata,
  secrets: RedisSecrets,
  allowPrivate: boolean,
  allowedAddresses: readonly string[] | undefined,
): Promise<Client> {
  const held = clients.get(destinationId);
  if (held?.version === version && held.client.isReady) return held.client;
  if (held) drop(destinationId, held.client);
  // Loaded on the first send: most processes never talk to Redis.
  const { createClient } = await import('redis');
  const policy = { allowPrivate, allowedAddresses };
  const client = createClient({
    url: metadata.serverUrl,
    ...(secrets.username !== undefined && { username: secrets.username }),
    ...(secrets.password !== undefined && { password: secrets.password }),
    // A lost connection fails the sends waiting on it; the next send connects afresh.
    disableOfflineQueue: true,
    socket: {
      reconnectStrategy: false,
      connectTimeout: 10_000,
      ...(!allowPrivate && { lookup: guardedLookup(policy) }),
    },
  }) as Client;
  // Errors surface through the commands that fail; an unheard 'error' event would end the process.
  client.on('error', () => undefined);
  client.on('end', () => drop(destinationId, client));
  clients.set(destinationId, { version, client });
  try {
    await client.connect();
  } catch (error) {
    drop(destinationId, client);
    throw error;
  }
  return client;
}

/** Replies that no later attempt will change: refused credentials, a key of another type, a bad script. */
const PERMANENT =
  /^(WRONGPASS|NOAUTH|NOPERM|WRONGTYPE|ERR AUTH|ERR invalid|ERR syntax|ERR Error running script)/;

function failure(error: unknown, startedAt: number, timeoutMs: number, secrets: RedisSecrets) {
  if (error instanceof DestinationUrlError)
    return failedSend(startedAt, error.message, error.code === 'unresolvable', 'refused');
  if (error instanceof SendTimeout)
    return failedSend(startedAt, `no answer within ${timeoutMs} ms`, true, 'timeout');
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  let text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  for (const secret of [secrets.password, secrets.username])
    if (secret) text = text.split(secret).join('[redacted]');
  const permanent = PERMANENT.test(message);
  return failedSend(startedAt, text.slice(0, 300), !permanent, permanent ? 'status' : 'network');
}

export const redisType: DestinationType<RedisMetadata, RedisSecrets> = {
  type: 'redis',
  title: 'One entry per message on a Redis stream (XADD)',
  messageIdOnFarSide:
    'the entry’s `messageId` field; a redelivery within `dedupWindowSecs` adds no entry (a marker key per message id)',
  metadata: Type.Object(
    {
      serverUrl: Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'redis:// or rediss:// (TLS), host, port and database, e.g. `redis://127.0.0.1:6379/0`; credentials go in secrets.',
      }),
      stream: Type.String({ minLength: 1, maxLength: 512, description: 'The stream’s key.' }),
      maxLen: Type.Optional(
        Type.Integer({ minimum: 1, description: 'Trim the stream to about this many entries (`MAXLEN ~`).' }),
      ),
      dedupWindowSecs: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 30 * 86_400,
          default: DEFAULT_DEDUP_WINDOW_SECS,
          description: 'How long a message id is remembered, so a redelivery adds no entry.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  secrets: Type.Object(
    {
      username: Type.Optional(
        Secret({ minLength: 1, maxLength: 256, description: 'An ACL user (Redis 6+).' }),
      ),
      password: Type.Optional(Secret({ minLength: 1, maxLength: 1024 })),
    },
    { additionalProperties: false },
  ),
  example: {
    metadata: { serverUrl: 'redis://127.0.0.1:6379/0', stream: 'ferry:records', maxLen: 1_000_000 },
  },
  check: (metadata, _secrets, policy) =>
    serverUrlIssues('metadata.serverUrl', metadata.serverUrl, SCHEMES, policy),
  describe: (metadata) => `${describeServer(metadata.serverUrl)} stream ${metadata.stream}`,
  async send(target, message, options) {
    const startedAt = Date.now();
    const { metadata, secrets } = target;
    try {
      assertServerAddress(new URL(metadata.serverUrl), options.policy);
      const answer = await withDeadline(
        (async () => {
          const client = await connected(
            target.destinationId,
            target.version,
            metadata,
            secrets,
            options.policy.allowPrivate,
            options.policy.allowedAddresses,
          );
          const body = typeof message.body === 'string' ? message.body : message.body.toString('utf8');
          return client.sendCommand([
            'EVAL',
            XADD_ONCE,
            '2',
            metadata.stream,
            sentMarker(metadata.stream, message.messageId),
            message.messageId,
            body,
            String(metadata.dedupWindowSecs ?? DEFAULT_DEDUP_WINDOW_SECS),
            metadata.maxLen === undefined ? '' : String(metadata.maxLen),
          ]);
        })(),
        options.timeoutMs,
        'redis',
      );
      const [added, entryId] = answer as unknown as [number, string];
      return acceptedSend(startedAt, `redis ${metadata.stream} ${entryId}${added ? '' : ' (already there)'}`);
    } catch (error) {
      return failure(error, startedAt, options.timeoutMs, secrets);
    }
  },
  async close() {
    const all = [...clients.entries()];
    clients.clear();
    for (const [, { client }] of all) if (client.isOpen) client.destroy();
  },
};
