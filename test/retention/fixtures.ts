import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { config } from '../../src/config.js';

/**
 * Rows as Ferry's runs write them, inserted directly so a test can give each the age it needs:
 * a project with one installation (its integration, group, consumer and connection), a destination,
 * and helpers for operations and what names them.
 */

export const DAY = 86_400_000;

export class RetentionFixture {
  private constructor(
    readonly db: pg.Client,
    readonly projectId: string,
    readonly installationId: string,
    readonly destinationId: string,
    readonly subscriptionId: string,
  ) {}

  static async create(): Promise<RetentionFixture> {
    const db = new pg.Client({ connectionString: config().databaseUrl });
    await db.connect();
    const [org, project, integration, group, consumer, connection, installation, destination, subscription] =
      Array.from({ length: 9 }, () => randomUUID());
    const name = `retention-${project.slice(0, 8)}`;
    const statements: [string, unknown[]][] = [
      ['insert into orgs (id, name) values ($1, $2)', [org, name]],
      ['insert into projects (id, org_id, name, app_name) values ($1, $2, $3, $3)', [project, org, name]],
      [
        `insert into integrations (id, project_id, name, provider, latest_revision_id) values ($1, $2, 'i', 'sandbox', $1)`,
        [integration, project],
      ],
      [
        `insert into groups (id, project_id, group_ref, group_name) values ($1, $2, 'acme', 'Acme')`,
        [group, project],
      ],
      [
        `insert into consumers (id, project_id, consumer_ref, consumer_name) values ($1, $2, 'ada', 'Ada')`,
        [consumer, project],
      ],
      [
        `insert into connections (id, project_id, provider, group_id, consumer_id, auth_scheme, status, credentials_encrypted)
         values ($1, $2, 'sandbox', $3, $4, 'apiKey', 'operational', 'sealed')`,
        [connection, project, group, consumer],
      ],
      [
        `insert into installations (id, project_id, integration_id, group_id, connection_id, config_id, created_by)
         values ($1, $2, $3, $4, $5, $1, 'test')`,
        [installation, project, integration, group, connection],
      ],
      [
        `insert into destinations (id, project_id, name, type, url, secrets_encrypted)
         values ($1, $2, 'hooks', 'webhook', 'http://127.0.0.1:9/', 'sealed')`,
        [destination, project],
      ],
      [
        `insert into subscriptions (id, project_id, installation_id, provider, object_name, provider_subscription_id)
         values ($1, $2, $3, 'sandbox', 'contacts', 'sub-1')`,
        [subscription, project, installation],
      ],
    ];
    await db.query('begin');
    for (const [sql, params] of statements) await db.query(sql, params);
    await db.query('commit');
    return new RetentionFixture(db, project, installation, destination, subscription);
  }

  async close(): Promise<void> {
    await this.db.end();
  }

  /** An operation that started `ageDays` ago and ended (or last changed) `endedDaysAgo` ago. */
  async operation(options: {
    ageDays: number;
    endedDaysAgo?: number;
    status?: 'success' | 'failure' | 'in_progress';
    actionType?: 'read' | 'write' | 'subscribe';
    metadata?: Record<string, unknown>;
    installationId?: string;
  }): Promise<string> {
    const id = randomUUID();
    await this.db.query(
      `insert into operations (id, project_id, integration_id, installation_id, config_id, action_type, status, metadata, create_time, update_time)
       values ($1, $2, $3, $3, $3, $4, $5, $6, now() - make_interval(secs => $7::float8 / 1000), now() - make_interval(secs => $8::float8 / 1000))`,
      [
        id,
        this.projectId,
        options.installationId ?? this.installationId,
        options.actionType ?? 'read',
        options.status ?? 'success',
        JSON.stringify(options.metadata ?? { objects: ['contacts'] }),
        options.ageDays * DAY,
        (options.endedDaysAgo ?? options.ageDays) * DAY,
      ],
    );
    return id;
  }

  async logs(operationId: string, ageDays: number, count = 1): Promise<void> {
    await this.db.query(
      `insert into operation_logs (project_id, operation_id, timestamp, severity, msg)
       select $1, $2, now() - make_interval(secs => $3::float8 / 1000), 'INFO', 'Read a page.' from generate_series(1, $4)`,
      [this.projectId, operationId, ageDays * DAY, count],
    );
  }

  async attempts(
    operationId: string | null,
    ageDays: number,
    options: { kind?: 'record' | 'notification'; count?: number } = {},
  ): Promise<void> {
    await this.db.query(
      `insert into delivery_attempts (project_id, destination_id, message_id, attempt, kind, operation_id, delivered, status, duration_ms, create_time)
       select $1, $2, 'msg_' || g, 1, $3, $4, true, 200, 12, now() - make_interval(secs => $5::float8 / 1000)
         from generate_series(1, $6) g`,
      [
        this.projectId,
        this.destinationId,
        options.kind ?? 'record',
        operationId,
        ageDays * DAY,
        options.count ?? 1,
      ],
    );
  }

  async checkpoint(operationId: string, ageDays: number): Promise<void> {
    await this.db.query(
      `insert into read_checkpoints (operation_id, project_id, installation_id, object_name, plan, page_index, create_time, update_time)
       values ($1, $2, $3, 'contacts', '{}', 3, now() - make_interval(secs => $4::float8 / 1000), now() - make_interval(secs => $4::float8 / 1000))`,
      [operationId, this.projectId, this.installationId, ageDays * DAY],
    );
  }

  async storedPages(operationId: string, ageDays: number, count = 1): Promise<void> {
    await this.db.query(
      `insert into stored_pages (project_id, installation_id, object_name, operation_id, page_index, part_index, message_id, num_records, body, create_time)
       select $1, $2, 'contacts', $3, g, 0, 'msg_' || g, 500, '{"result":[]}', now() - make_interval(secs => $4::float8 / 1000)
         from generate_series(1, $5) g`,
      [this.projectId, this.installationId, operationId, ageDays * DAY, count],
    );
  }

  async event(ageDays: number, routed = true): Promise<string> {
    const id = randomUUID();
    await this.db.query(
      `insert into events (id, project_id, type, data, create_time, routed_time)
       values ($1, $2, 'read.backfill.done', '{}', now() - make_interval(secs => $3::float8 / 1000), $4)`,
      [id, this.projectId, ageDays * DAY, routed ? new Date() : null],
    );
    return id;
  }

  async subscriptionEvent(ageDays: number, operationId?: string): Promise<string> {
    const id = randomUUID();
    await this.db.query(
      `insert into subscription_events (id, project_id, subscription_id, installation_id, provider_event_id, event, operation_id, create_time)
       values ($1::uuid, $2, $3, $4, $1::text, '{}', $5, now() - make_interval(secs => $6::float8 / 1000))`,
      [id, this.projectId, this.subscriptionId, this.installationId, operationId ?? null, ageDays * DAY],
    );
    return id;
  }

  /** How many rows of `table` belong to this fixture's project (optionally of one operation). */
  async count(table: string, where = 'true', params: unknown[] = []): Promise<number> {
    const { rows } = await this.db.query<{ count: string }>(
      `select count(*) from ${table} where project_id = $1 and (${where})`,
      [this.projectId, ...params],
    );
    return Number(rows[0].count);
  }
}
