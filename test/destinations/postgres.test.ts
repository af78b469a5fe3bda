import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { closeDestinationTypes } from '../../src/delivery/registry.js';
import { postgresType } from '../../src/delivery/types/postgres.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createReadFixture, runRead } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * PostgreSQL destinations against the server on 127.0.0.1:5432: a read lands one row per record in
 * a table Ferry creates, counted with a client of the test's own; a redelivered message adds no row.
 */

const CONTACTS = 120;
const SERVER = 'postgres://127.0.0.1:5432/postgres';
const table = `ferry_dest_${randomUUID().slice(0, 8)}`;

let sandbox: Sandbox;
let stack: TestStack;
let client: pg.Client;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await client.connect();
});

afterAll(async () => {
  await client?.query(`drop table if exists ${table}`).catch(() => {});
  await client?.end();
  await stack?.close();
  await closeDestinationTypes();
  await sandbox?.close();
});

const projectPath = () => `/projects/${stack.project.id}`;

describe('postgres destinations', () => {
  it('lands a read as one row per record in a table it creates; a redelivery adds no row', async () => {
    const fixture = await createReadFixture(stack, {
      declared: { delivery: { pageSize: 50 } },
      destination: {
        type: 'postgres',
        metadata: { serverUrl: SERVER, table, createTable: true },
        secrets: { username: 'postgres' },
      },
    });
    // The fixture's webhook receiver is not used: a destination of another type stands in for it.
    await fixture.receiver.stop();
    const { operationId, result } = await runRead(stack, fixture, { readType: 'triggered' });
    expect(result.status).toBe('success');

    const rows = await client.query(
      `select message_id, record_index, installation_id, object_name, record_id, operation, operation_id,
              fields, mapped_fields, raw from ${table}`,
    );
    expect(rows.rowCount).toBe(CONTACTS);
    expect(new Set(rows.rows.map((row) => row.record_id)).size).toBe(CONTACTS);
    expect(new Set(rows.rows.map((row) => row.message_id)).size).toBe(3);
    const first = rows.rows.find((row) => row.record_index === 0)!;
    expect(first).toMatchObject({
      installation_id: fixture.installationId,
      object_name: 'contacts',
      operation: 'upsert',
      operation_id: operationId,
    });
    expect(typeof first.fields.email).toBe('string');
    expect(first.raw.id).toBe(first.record_id);
    expect(Object.keys(first.mapped_fields)).toEqual(expect.arrayContaining(['surname']));

    // The message as it was sent, sent again under its id: no new row.
    const messageId = first.message_id as string;
    const again = rows.rows
      .filter((row) => row.message_id === messageId)
      .sort((a, b) => a.record_index - b.record_index)
      .map((row) => ({
        id: row.record_id,
        fields: row.fields,
        mappedFields: row.mapped_fields,
        raw: row.raw,
      }));
    const redelivered = await attemptDelivery(
      {
        projectId: stack.project.id,
        destinationId: fixture.destinationId,
        messageId,
        body: JSON.stringify({
          action: 'read',
          installationId: fixture.installationId,
          objectName: 'contacts',
          operationId,
          result: again,
        }),
        kind: 'record',
        operationId,
      },
      config(),
    );
    expect(redelivered.delivered).toBe(true);
    const count = await client.query(`select count(*)::int as n from ${table}`);
    expect(count.rows[0].n).toBe(CONTACTS);
  });

  it('fails a send retryably when the server ends its connection mid-send, and the next send lands', async () => {
    const ended = `ferry_dest_${randomUUID().slice(0, 8)}`;
    const target = {
      destinationId: randomUUID(),
      version: '1',
      metadata: { serverUrl: SERVER, table: ended, createTable: true },
      secrets: { username: 'postgres' },
    };
    const options = { timeoutMs: 10_000, policy: { allowPrivate: true } };
    const message = (messageId: string, id: string) => ({
      messageId,
      body: JSON.stringify({ action: 'read', objectName: 'contacts', result: [{ fields: {}, raw: { id } }] }),
    });
    expect(await postgresType.send(target, message('msg_first', '1'), options)).toMatchObject({ ok: true });
    // A lock of the test's own holds the next insert; the server then ends the waiting connection.
    const locker = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query(`lock table ${ended} in access exclusive mode`);
      const sending = postgresType.send(target, message('msg_second', '2'), options);
      let terminated = 0;
      for (let tries = 0; tries < 100 && !terminated; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const answer = await client.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where application_name = 'ferry-destination' and wait_event_type = 'Lock' and query like $1`,
          [`%${ended}%`],
        );
        terminated = answer.rowCount ?? 0;
      }
      expect(terminated).toBe(1);
      expect(await sending).toMatchObject({ ok: false, retryable: true });
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    expect(await postgresType.send(target, message('msg_second', '2'), options)).toMatchObject({ ok: true });
    const rows = await client.query(`select record_id from ${ended} order by record_id`);
    expect(rows.rows.map((row) => row.record_id)).toEqual(['1', '2']);
    await client.query(`drop table ${ended}`);
  });

  it('answers a missing table as a failure that will not pass by itself, and a closed port as retryable', async () => {
    const make = async (serverUrl: string, createTable: boolean) =>
      (
        await stack.api('POST', `${projectPath()}/destinations`, {
          body: {
            name: `pg-${randomUUID().slice(0, 8)}`,
            type: 'postgres',
            metadata: { serverUrl, table: `missing_${randomUUID().slice(0, 8)}`, createTable },
            secrets: { username: 'postgres', password: 'pg-secret-value' },
          },
        })
      ).body.id as string;
    const send = (destinationId: string) =>
      attemptDelivery(
        {
          projectId: stack.project.id,
          destinationId,
          messageId: `msg_${randomUUID()}`,
          body: '{"action":"read","result":[{"id":"1","fields":{},"mappedFields":{},"raw":{"id":"1"}}]}',
          kind: 'record',
        },
        config(),
      );
    const missing = await send(await make(SERVER, false));
    expect(missing).toMatchObject({ delivered: false, retryable: false });
    expect(missing.error).toContain('does not exist');
    const down = await send(await make('postgres://127.0.0.1:1/postgres', false));
    expect(down).toMatchObject({ delivered: false, retryable: true });
    expect(down.error).not.toContain('pg-secret-value');
  });

  it('refuses bad settings with a 400 naming the field, and updates by updateMask', async () => {
    const post = (body: Record<string, unknown>) =>
      stack.api('POST', `${projectPath()}/destinations`, {
        body: { name: `pg-${randomUUID().slice(0, 8)}`, type: 'postgres', ...body },
      });
    const names = async (body: Record<string, unknown>) => {
      const response = await post(body);
      expect(response.status).toBe(400);
      return response.body.issues.map((issue: { name: string }) => issue.name);
    };
    const secrets = { username: 'postgres' };
    expect(await names({ metadata: { serverUrl: SERVER }, secrets })).toEqual(['metadata.table']);
    expect(await names({ metadata: { serverUrl: SERVER, table: 'bad-name;' }, secrets })).toEqual([
      'metadata.table',
    ]);
    expect(await names({ metadata: { serverUrl: 'postgres://u:p@h/db', table: 't' }, secrets })).toEqual([
      'metadata.serverUrl',
    ]);
    expect(
      await names({ metadata: { serverUrl: SERVER, table: 't' }, secrets: { ...secrets, awsKeyId: 'k' } }),
    ).toEqual(['secrets.awsKeyId']);

    const created = await post({ metadata: { serverUrl: SERVER, table: 't1' }, secrets });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toEqual({
      serverUrl: SERVER,
      schema: 'public',
      table: 't1',
      createTable: false,
    });
    const updated = await stack.api('PATCH', `${projectPath()}/destinations/${created.body.id}`, {
      body: {
        updateMask: ['metadata.table', 'metadata.createTable', 'secrets.password'],
        destination: { metadata: { table: 't2', createTable: true }, secrets: { password: 'x' } },
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.metadata).toMatchObject({ table: 't2', createTable: true });
    expect(updated.body.secrets).toBeUndefined();
  });
});
