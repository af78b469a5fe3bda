import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, type RedisClientType } from 'redis';
import { em as newEntityManager } from '../../src/db/orm.js';
import { DeliveryAttemptEntity } from '../../src/db/entities/delivery.js';
import { DestinationEntity } from '../../src/db/entities/operation.js';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { redisType, sentMarker } from '../../src/delivery/types/redis.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Redis stream destinations against the Redis on 127.0.0.1:6379: entries counted with XRANGE, a
 * redelivery adding none, bad input a 400 naming the field, no password in the ledger.
 */

const SERVER = 'redis://127.0.0.1:6379/0';
let stack: TestStack;
let redis: RedisClientType;
const streams: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  redis = createClient({ url: SERVER }) as RedisClientType;
  await redis.connect();
});

afterAll(async () => {
  if (streams.length) await redis.del(streams);
  for (const stream of streams) {
    const markers = await redis.keys(`${stream}:ferry-sent:*`);
    if (markers.length) await redis.del(markers);
  }
  await redis?.close();
  await closeDestinationTypes();
  await stack?.close();
});

function newStream(): string {
  const stream = `ferry-test:${randomUUID()}`;
  streams.push(stream);
  return stream;
}

const create = (body: Record<string, unknown>) =>
  stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: { name: `r-${randomUUID().slice(0, 8)}`, type: 'redis', ...body },
  });

function deliver(
  destinationId: string,
  messageId: string,
  body = JSON.stringify({ notificationType: 'test', data: {} }),
) {
  return attemptDelivery(
    {
      projectId: stack.project.id,
      destinationId,
      messageId,
      body,
      kind: 'notification',
    },
    config(),
  );
}

describe('redis stream destinations', () => {
  it('add one entry per message with its id; a redelivery adds none and names the first entry', async () => {
    const stream = newStream();
    const created = await create({ metadata: { serverUrl: SERVER, stream } });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({ dedupWindowSecs: 86400 });
    const id = created.body.id as string;
    expect(await deliver(id, 'msg_one')).toMatchObject({ delivered: true });
    expect(await deliver(id, 'msg_one')).toMatchObject({ delivered: true });
    expect(await deliver(id, 'msg_two')).toMatchObject({ delivered: true });
    const entries = (await redis.xRange(stream, '-', '+')) ?? [];
    expect(entries.map((entry) => entry.message.messageId)).toEqual(['msg_one', 'msg_two']);
    expect(JSON.parse(entries[0].message.body)).toEqual({ notificationType: 'test', data: {} });
    expect(await redis.ttl(sentMarker(stream, 'msg_one'))).toBeGreaterThan(86_000);
    const rows = await (
      await newEntityManager()
    ).find(DeliveryAttemptEntity, { destinationId: id }, { orderBy: { id: 'asc' } });
    expect(rows.map((row) => row.responseBody)).toEqual([
      `redis ${stream} ${entries[0].id}`,
      `redis ${stream} ${entries[0].id} (already there)`,
      `redis ${stream} ${entries[1].id}`,
    ]);
  });

  it('trims the stream to about maxLen entries', async () => {
    const stream = newStream();
    const target = {
      destinationId: randomUUID(),
      version: '1',
      metadata: { serverUrl: SERVER, stream, maxLen: 1 },
      secrets: {},
    };
    for (let index = 0; index < 300; index++) {
      const result = await redisType.send(
        target,
        { messageId: `msg_${index}`, body: '{}' },
        { timeoutMs: 5_000, policy: { allowPrivate: true } },
      );
      expect(result.ok).toBe(true);
    }
    // `MAXLEN ~` trims whole nodes (100 entries by default), never below the limit.
    expect(await redis.xLen(stream)).toBeLessThan(300);
  });

  it('fail retryably when nothing listens, and for good on a refused password, which never shows', async () => {
    const closed = await create({ metadata: { serverUrl: 'redis://127.0.0.1:1', stream: newStream() } });
    expect(closed.status).toBe(201);
    expect(await deliver(closed.body.id, 'msg_x')).toMatchObject({ delivered: false, retryable: true });
    const password = `pw-${randomUUID()}`;
    const refused = await create({
      metadata: { serverUrl: SERVER, stream: newStream() },
      secrets: { username: 'nobody', password },
    });
    expect(refused.status).toBe(201);
    expect(await deliver(refused.body.id, 'msg_y')).toMatchObject({ delivered: false, retryable: false });
    const rows = await (
      await newEntityManager()
    ).find(DeliveryAttemptEntity, { destinationId: refused.body.id });
    expect(rows[0].error).toMatch(/WRONGPASS|AUTH/);
    expect(JSON.stringify(rows)).not.toContain(password);
  });

  it.each([
    [{ stream: 's' }, {}, ['metadata.serverUrl']],
    [{ serverUrl: SERVER }, {}, ['metadata.stream']],
    [{ serverUrl: 'http://127.0.0.1:6379', stream: 's' }, {}, ['metadata.serverUrl']],
    [{ serverUrl: 'redis://user:pw@127.0.0.1:6379', stream: 's' }, {}, ['metadata.serverUrl']],
    [{ serverUrl: SERVER, stream: 's', maxLen: 0 }, {}, ['metadata.maxLen']],
    [{ serverUrl: SERVER, stream: 's' }, { awsKeyId: 'x' }, ['secrets.awsKeyId']],
  ])('%j %j answers 400 naming the field and keeps nothing', async (metadata, secrets, names) => {
    const name = `bad-${randomUUID().slice(0, 8)}`;
    const response = await create({ name, metadata, secrets });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: { name: string }) => issue.name)).toEqual(names);
    expect(
      await (await newEntityManager()).count(DestinationEntity, { projectId: stack.project.id, name }),
    ).toBe(0);
  });
});
