import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, headers as natsHeaders } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { connectAsync } from 'mqtt';
import pg from 'pg';
import { createClient } from 'redis';
import { Agent, request } from 'undici';
import { awsFarSide, AWS_TYPES, type AwsPlace } from './far-side-aws.js';
import { recordIdsOf, type FarSide, type Landed } from './far-side-shape.js';

/**
 * The far side of a destination, for the benches: where a destination of each type points (a queue,
 * table, stream, bucket of the bench's own on the real server), a plain send of one message with the
 * same client library Ferry's type uses (the baseline loop), and what landed, read back from the
 * server itself: each message (row group, object, entry) with its message id and its records' ids.
 */

export interface Tally {
  /** Messages (rows grouped by message id, objects, entries) on the server. */
  messages: number;
  /** Distinct record ids on the server. */
  records: number;
  /** Expected records that are not there. */
  lost: number;
  /** A record again under a message id it already came with (a redelivery the far side may drop). */
  duplicatesSameMessageId: number;
  /** A record again under another message id: the same record delivered twice, never allowed. */
  duplicatesOtherMessageId: number;
}

/** What landed, against the `expected` record count (the sandbox's contacts, each id once). */
export function tally(landed: Landed[], expected: number): Tally {
  const seen = new Map<string, Set<string>>();
  let same = 0;
  let other = 0;
  for (const { messageId, recordIds } of landed) {
    for (const id of recordIds) {
      const under = seen.get(id);
      if (!under) seen.set(id, new Set([messageId]));
      else if (under.has(messageId)) same++;
      else {
        other++;
        under.add(messageId);
      }
    }
  }
  return {
    messages: landed.length,
    records: seen.size,
    lost: Math.max(0, expected - seen.size),
    duplicatesSameMessageId: same,
    duplicatesOtherMessageId: other,
  };
}

export interface Servers {
  /** Where Ferry connects, when it must go through a proxy the bench controls (else the real server). */
  ferryUrl?: string;
  /** The server's own address, where the bench reads (a broker of the bench's own). */
  serverUrl?: string;
  /** moto's endpoint, for s3, sqs and kinesis. */
  aws?: AwsPlace;
  /** The database (postgres type): the bench's own. */
  databaseUrl?: string;
}

export type { FarSide, Landed };

export const FAR_SIDE_TYPES = ['webhook', 'rabbitmq', 'postgres', 'nats', 'redis', 'mqtt', ...AWS_TYPES];

const tag = () => randomUUID().slice(0, 8);

export async function openFarSide(type: string, label: string, servers: Servers): Promise<FarSide> {
  const name = `ferry_bench_${label.replace(/[^a-z0-9]/gi, '_')}_${tag()}`;
  if (AWS_TYPES.includes(type)) return awsFarSide(type, name.replace(/_/g, '-'), servers.aws!);
  switch (type) {
    case 'webhook':
      return webhook();
    case 'rabbitmq':
      return rabbitmq(name, servers.serverUrl ?? 'amqp://127.0.0.1:5672/', servers.ferryUrl);
    case 'postgres':
      return postgres(name, servers.databaseUrl!);
    case 'nats':
      return nats(name, servers.serverUrl ?? 'nats://127.0.0.1:4222', servers.ferryUrl);
    case 'redis':
      return redis(name);
    case 'mqtt':
      return mqtt(name);
    default:
      throw new Error(`no far side for type ${type}; one of ${FAR_SIDE_TYPES.join(', ')}`);
  }
}

/** A receiver in this process keeping each message's `webhook-id` and record ids; 200 at once. */
async function webhook(): Promise<FarSide> {
  const got: Landed[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      got.push({
        messageId: String(req.headers['webhook-id']),
        recordIds: recordIdsOf(Buffer.concat(chunks)),
      });
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: 8 });
  return {
    type: 'webhook',
    destination: { type: 'webhook', metadata: { url } },
    async send(message) {
      const answer = await request(url, {
        method: 'POST',
        headers: message.headers,
        body: message.body,
        dispatcher,
      });
      await answer.body.dump();
    },
    landed: async () => got,
    async close() {
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A topic exchange and a durable queue bound to it; the plain loop publishes persistent, with confirms. */
async function rabbitmq(name: string, serverUrl: string, ferryUrl = serverUrl): Promise<FarSide> {
  const model = await amqp.connect(serverUrl);
  const setup = await model.createChannel();
  await setup.assertExchange(name, 'topic', { durable: true });
  await setup.assertQueue(name, { durable: true });
  await setup.bindQueue(name, name, '#');
  await setup.close();
  let publisher: amqp.ConfirmChannel | undefined;
  const got: Landed[] = [];
  return {
    type: 'rabbitmq',
    destination: {
      type: 'rabbitmq',
      metadata: { serverUrl: ferryUrl, exchange: name, routingKeyTemplate: '{objectName}' },
      secrets: { username: 'guest', password: 'guest' },
    },
    async send(message) {
      publisher ??= await model.createConfirmChannel();
      await new Promise<void>((resolve, reject) =>
        publisher!.publish(
          name,
          'contacts',
          Buffer.from(message.body),
          {
            persistent: true,
            mandatory: true,
            messageId: message.messageId,
            contentType: 'application/json',
          },
          (error) => (error ? reject(error) : resolve()),
        ),
      );
    },
    async landed() {
      // A connection of its own: the broker may have restarted since the far side was opened.
      const reader = await amqp.connect(serverUrl);
      const channel = await reader.createChannel();
      for (;;) {
        const message = await channel.get(name, { noAck: true });
        if (!message) break;
        got.push({
          messageId: String(message.properties.messageId),
          recordIds: recordIdsOf(message.content),
        });
      }
      await reader.close();
      return got;
    },
    async close() {
      const channel = await model.createChannel();
      await channel.deleteQueue(name);
      await channel.deleteExchange(name);
      await model.close();
    },
  };
}

/** A table Ferry creates (createTable); the plain loop creates the same one and inserts the same rows. */
async function postgres(name: string, databaseUrl: string): Promise<FarSide> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const url = new URL(databaseUrl);
  let created = false;
  return {
    type: 'postgres',
    destination: {
      type: 'postgres',
      metadata: { serverUrl: `postgres://${url.host}${url.pathname}`, table: name, createTable: true },
      secrets: { username: 'postgres' },
    },
    async send(message) {
      if (!created) {
        await pool.query(`create table if not exists ${name} (message_id text not null,
          record_index integer not null, project_id text, installation_id text, object_name text,
          record_id text, operation text not null, operation_id text, fields jsonb, mapped_fields jsonb,
          raw jsonb, insert_time timestamptz not null default now(), primary key (message_id, record_index))`);
        created = true;
      }
      const parsed = JSON.parse(message.body);
      const params: unknown[] = [message.messageId, parsed.projectId, parsed.operationId];
      const $ = (value: unknown) => `$${params.push(value)}`;
      const json = (value: unknown) => $(JSON.stringify(value ?? null));
      const values = (parsed.result as Record<string, { id?: unknown }>[]).map(
        (entry, index) =>
          `($1, ${$(index)}, $2, ${$(parsed.installationId)}, ${$(parsed.objectName)}, ${$(String(entry.raw?.id))}, 'upsert', $3, ${json(entry.fields)}, ${json(entry.mappedFields)}, ${json(entry.raw)})`,
      );
      await pool.query(
        `insert into ${name} (message_id, record_index, project_id, installation_id, object_name,
          record_id, operation, operation_id, fields, mapped_fields, raw) values ${values.join(', ')}
          on conflict (message_id, record_index) do nothing`,
        params,
      );
    },
    async landed() {
      const rows = await pool.query<{ message_id: string; ids: string[] }>(
        `select message_id, array_agg(record_id) as ids from ${name} group by message_id`,
      );
      return rows.rows.map((row) => ({ messageId: row.message_id, recordIds: row.ids }));
    },
    async close() {
      await pool.query(`drop table if exists ${name}`);
      await pool.end();
    },
  };
}

/** A JetStream stream on a subject of its own, with a two-minute duplicate window (the default). */
async function nats(name: string, serverUrl: string, ferryUrl = serverUrl): Promise<FarSide> {
  const connection = await natsConnect({ servers: serverUrl, maxReconnectAttempts: -1 });
  const manager = await jetstreamManager(connection);
  const subject = `ferrybench.${name}`;
  await manager.streams.add({ name, subjects: [`${subject}.>`] });
  const js = jetstream(connection);
  const got: Landed[] = [];
  let next = 1;
  return {
    type: 'nats',
    destination: {
      type: 'nats',
      metadata: { serverUrl: ferryUrl, subjectTemplate: `${subject}.{objectName}`, stream: name },
    },
    async send(message) {
      const extra = natsHeaders();
      extra.set('Content-Type', 'application/json');
      await js.publish(`${subject}.contacts`, message.body, { msgID: message.messageId, headers: extra });
    },
    async landed() {
      const last = (await manager.streams.info(name)).state.last_seq;
      for (; next <= last; next++) {
        const stored = await manager.streams.getMessage(name, { seq: next });
        if (!stored) continue;
        got.push({
          messageId: String(stored.header.get('Nats-Msg-Id')),
          recordIds: recordIdsOf(Buffer.from(stored.data)),
        });
      }
      return got;
    },
    async close() {
      await manager.streams.delete(name).catch(() => false);
      await connection.close();
    },
  };
}

/** A stream key of its own; the plain loop XADDs (without Ferry's marker key: what a plain program does). */
async function redis(name: string): Promise<FarSide> {
  const client = createClient({ url: 'redis://127.0.0.1:6379' });
  client.on('error', () => {});
  await client.connect();
  return {
    type: 'redis',
    destination: { type: 'redis', metadata: { serverUrl: 'redis://127.0.0.1:6379', stream: name } },
    async send(message) {
      await client.xAdd(name, '*', { messageId: message.messageId, body: message.body });
    },
    async landed() {
      const got: Landed[] = [];
      let from = '-';
      for (;;) {
        const entries = (await client.xRange(name, from, '+', { COUNT: 200 })) ?? [];
        for (const entry of entries)
          got.push({ messageId: entry.message.messageId, recordIds: recordIdsOf(entry.message.body) });
        if (entries.length < 200) return got;
        from = `(${entries[entries.length - 1].id}`;
      }
    },
    async close() {
      const markers = await client.keys(`${name}:ferry-sent:*`);
      for (let at = 0; at < markers.length; at += 500) await client.del(markers.slice(at, at + 500));
      await client.del(name);
      await client.quit();
    },
  };
}

/** A subscriber (QoS 1) on a topic of its own, connected before anything is sent. */
async function mqtt(name: string): Promise<FarSide> {
  const server = 'mqtt://127.0.0.1:1883';
  const topic = `ferrybench/${name}`;
  const got: Landed[] = [];
  const subscriber = await connectAsync(server, {
    protocolVersion: 5,
    clientId: `${name}-reader`,
    clean: true,
  });
  subscriber.on('message', (_topic, payload, packet) => {
    const id = packet.properties?.userProperties?.ferryMessageId;
    got.push({ messageId: String(id), recordIds: recordIdsOf(payload) });
  });
  await subscriber.subscribeAsync(topic, { qos: 1 });
  const publisher = await connectAsync(server, { protocolVersion: 5 });
  return {
    type: 'mqtt',
    destination: { type: 'mqtt', metadata: { serverUrl: server, topic } },
    async send(message) {
      await publisher.publishAsync(topic, message.body, {
        qos: 1,
        properties: {
          contentType: 'application/json',
          userProperties: { ferryMessageId: message.messageId },
        },
      });
    },
    landed: async () => got,
    async close() {
      await publisher.endAsync();
      await subscriber.endAsync();
    },
  };
}
