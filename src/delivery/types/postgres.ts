import { isIP } from 'node:net';
import pg from 'pg';
import Type from 'typebox';
import { Secret } from '../../schemas/common.js';
import {
  acceptedSend,
  failedSend,
  SendTimeout,
  withDeadline,
  type DestinationTarget,
  type DestinationType,
} from '../destination-type.js';
import { DestinationUrlError } from '../url-guard.js';
import { checkedAddress, serverUrlIssues } from './network.js';
import { errorCode, isRetryableCode, shortReason } from './broker-errors.js';

/**
 * A PostgreSQL table: one row per record (message id and the record's index in it, installation,
 * object, record id, operation, `fields`, `mappedFields`, `raw` as jsonb), all of a message's rows
 * in one statement, `on conflict do nothing` on (message_id, record_index): a redelivered message
 * adds no row. A notification is one row (its type as the operation, the whole message as `raw`).
 * Ferry creates the table (`if not exists`) when `createTable` is on.
 */

export interface PostgresMetadata {
  serverUrl: string;
  schema?: string;
  table: string;
  createTable?: boolean;
  ssl?: boolean;
}

export interface PostgresSecrets {
  username: string;
  password?: string;
}

const IDENTIFIER = '^[A-Za-z_][A-Za-z0-9_]{0,62}$';

interface Link {
  version: string;
  pool: pg.Pool;
  /** The table was created (or found) by this pool. */
  ready?: Promise<void>;
}

const links = new Map<string, Link>();

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

function tableName(metadata: PostgresMetadata): string {
  return `${quote(metadata.schema ?? 'public')}.${quote(metadata.table)}`;
}

/** The table Ferry creates; the columns are the contract with whoever reads it. */
function createTableSql(metadata: PostgresMetadata): string {
  return `create table if not exists ${tableName(metadata)} (
    message_id text not null,
    record_index integer not null,
    project_id text,
    installation_id text,
    object_name text,
    record_id text,
    operation text not null,
    operation_id text,
    fields jsonb,
    mapped_fields jsonb,
    raw jsonb,
    insert_time timestamptz not null default now(),
    primary key (message_id, record_index)
  )`;
}

async function linkFor(
  target: DestinationTarget<PostgresMetadata, PostgresSecrets>,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<Link> {
  const existing = links.get(target.destinationId);
  if (existing?.version === target.version) return existing;
  if (existing) {
    links.delete(target.destinationId);
    void existing.pool.end().catch(() => {});
  }
  const url = new URL(target.metadata.serverUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const pool = new pg.Pool({
    host: await checkedAddress(host, allowPrivate),
    port: Number(url.port) || 5432,
    database: decodeURIComponent(url.pathname.slice(1)) || 'postgres',
    user: target.secrets.username,
    password: target.secrets.password,
    max: 4,
    connectionTimeoutMillis: timeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: 'ferry-destination',
    ...(target.metadata.ssl && { ssl: { servername: isIP(host) ? undefined : host } }),
  });
  // An idle client's error (the server restarted) must not crash the worker; the next query reconnects.
  pool.on('error', () => {});
  const link: Link = { version: target.version, pool };
  links.set(target.destinationId, link);
  return link;
}

interface Row {
  recordIndex: number;
  installationId: unknown;
  objectName: unknown;
  recordId: unknown;
  operation: string;
  fields: unknown;
  mappedFields: unknown;
  raw: unknown;
}

const text = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : null;

/** The rows of one message: its records, or the notification itself. */
function rowsOf(message: Record<string, unknown>): Row[] {
  const records = message.result;
  if (!Array.isArray(records)) {
    return [
      {
        recordIndex: 0,
        installationId: (message.data as Record<string, unknown> | undefined)?.installationId,
        objectName: (message.data as Record<string, unknown> | undefined)?.objectName,
        recordId: null,
        operation: text(message.notificationType) ?? text(message.action) ?? 'message',
        fields: null,
        mappedFields: null,
        raw: message,
      },
    ];
  }
  return records.map((entry: Record<string, unknown>, recordIndex) => {
    const raw = (entry.raw ?? null) as Record<string, unknown> | null;
    const fields = (entry.fields ?? null) as Record<string, unknown> | null;
    const operation = entry.deleted
      ? 'delete'
      : (text(entry.subscribeEventType) ?? (message.action === 'read' ? 'upsert' : text(message.action)));
    return {
      recordIndex,
      installationId: message.installationId,
      objectName: message.objectName,
      recordId: entry.id ?? raw?.id ?? fields?.id ?? null,
      operation: operation ?? 'upsert',
      fields,
      mappedFields: entry.mappedFields ?? null,
      raw,
    };
  });
}

function insertSql(metadata: PostgresMetadata, count: number): string {
  const values = Array.from({ length: count }, (_, row) => {
    const base = row * 8;
    const at = (n: number) => `$${base + n + 4}`;
    return `($1, ${at(0)}, $2, ${at(1)}, ${at(2)}, ${at(3)}, ${at(4)}, $3, ${at(5)}::jsonb, ${at(6)}::jsonb, ${at(7)}::jsonb)`;
  });
  return `insert into ${tableName(metadata)}
    (message_id, record_index, project_id, installation_id, object_name, record_id, operation, operation_id,
     fields, mapped_fields, raw)
    values ${values.join(', ')}
    on conflict (message_id, record_index) do nothing`;
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** PostgreSQL's own word on whether to try again: connection trouble, overload, a lost race. */
function isRetryableState(state: string | undefined): boolean {
  if (!state) return false;
  return /^(08|53|57P0|40001|40P01|55P03)/.test(state);
}

const ROWS_PER_STATEMENT = 1000;

export const postgresType: DestinationType<PostgresMetadata, PostgresSecrets> = {
  type: 'postgres',
  title: 'A PostgreSQL table: one row per record, redeliveries add none',
  messageIdOnFarSide: 'the `message_id` column, with `record_index` the primary key',
  metadata: Type.Object(
    {
      serverUrl: Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'postgres://host:port/database, without credentials: they go in secrets.',
      }),
      schema: Type.Optional(
        Type.String({ pattern: IDENTIFIER, default: 'public', description: 'The table’s schema.' }),
      ),
      table: Type.String({ pattern: IDENTIFIER, description: 'The table rows go to.' }),
      createTable: Type.Optional(
        Type.Boolean({
          default: false,
          description: 'Create the table (if it does not exist) before the first insert.',
        }),
      ),
      ssl: Type.Optional(Type.Boolean({ description: 'Connect with TLS.' })),
    },
    { additionalProperties: false },
  ),
  secrets: Type.Object(
    {
      username: Secret({ minLength: 1, maxLength: 255 }),
      password: Type.Optional(Secret({ maxLength: 1024 })),
    },
    { additionalProperties: false },
  ),
  example: {
    metadata: { serverUrl: 'postgres://127.0.0.1:5432/warehouse', table: 'ferry_records', createTable: true },
    secrets: { username: 'ferry', password: '…' },
  },
  check: (metadata) => serverUrlIssues(metadata.serverUrl, ['postgres', 'postgresql']),
  describe(metadata) {
    try {
      const url = new URL(metadata.serverUrl);
      return `${url.protocol}//${url.host}${url.pathname} table ${metadata.schema ?? 'public'}.${metadata.table}`;
    } catch {
      return `table ${metadata.table}`;
    }
  },
  async send(target, message, options) {
    const startedAt = Date.now();
    const metadata = target.metadata;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(typeof message.body === 'string' ? message.body : message.body.toString('utf8'));
    } catch {
      return failedSend(startedAt, 'the message is not JSON', false, 'invalid-request');
    }
    const rows = rowsOf(parsed);
    try {
      const link = await linkFor(target, options.timeoutMs, options.policy.allowPrivate);
      await withDeadline(
        (async () => {
          if (metadata.createTable) {
            link.ready ??= link.pool.query(createTableSql(metadata)).then(() => {});
            await link.ready.catch((error: unknown) => {
              link.ready = undefined;
              throw error;
            });
          }
          const client = await link.pool.connect();
          // A connection the server ends while it is checked out (a restart, pg_terminate_backend)
          // emits 'error' on the client: unheard, it would end the worker. Heard, the query in
          // flight fails (retryable) and the client is discarded.
          let broken: Error | undefined;
          const onError = (error: Error) => (broken = error);
          client.on('error', onError);
          try {
            await client.query('begin');
            for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
              const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
              const params: unknown[] = [message.messageId, text(parsed.projectId), text(parsed.operationId)];
              for (const row of chunk) {
                params.push(
                  row.recordIndex,
                  text(row.installationId),
                  text(row.objectName),
                  text(row.recordId),
                  row.operation,
                  json(row.fields),
                  json(row.mappedFields),
                  json(row.raw),
                );
              }
              await client.query(insertSql(metadata, chunk.length), params);
            }
            await client.query('commit');
          } catch (error) {
            await client.query('rollback').catch(() => {});
            throw error;
          } finally {
            client.off('error', onError);
            client.release(broken);
          }
        })(),
        options.timeoutMs,
        'writing to PostgreSQL',
      );
      return acceptedSend(startedAt, `${postgresType.describe(metadata)}: ${rows.length} rows`);
    } catch (error) {
      if (error instanceof SendTimeout) return failedSend(startedAt, error.message, true, 'timeout');
      if (error instanceof DestinationUrlError) {
        return failedSend(startedAt, error.message, error.code === 'unresolvable', 'refused');
      }
      const code = errorCode(error);
      const retryable = isRetryableCode(code) || isRetryableState(code) || !code;
      return failedSend(
        startedAt,
        `PostgreSQL: ${shortReason(error)}`,
        retryable,
        retryable ? 'network' : 'status',
      );
    }
  },
  async close() {
    const open = [...links.values()];
    links.clear();
    await Promise.all(open.map((link) => link.pool.end().catch(() => {})));
  },
};
