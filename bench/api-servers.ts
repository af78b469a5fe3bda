import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pg from 'pg';
import { hashToken } from '../src/crypto/secrets.js';

/**
 * The servers `bench:api` measures, each in a process of its own (the load generator must not share
 * their thread): `ferry` is Ferry's api listener as `ferry server` starts it; `bare` is a plain Koa
 * app over a `pg` pool of the same size (10) with one hand-written query per endpoint (after the
 * same API key check), answering the same JSON shapes. Each prints `{"port": N}` once listening and
 * exits on SIGTERM/SIGINT or when its parent goes.
 */

const iso = (date: Date | null) => (date ? date.toISOString() : undefined);

type Row = Record<string, unknown>;

const groupOf = (row: Row, prefix: string) => ({
  groupRef: row[`${prefix}ref`],
  groupName: row[`${prefix}name`],
  projectId: row.project_id,
  createTime: iso(row[`${prefix}create_time`] as Date),
  updateTime: iso(row[`${prefix}update_time`] as Date),
});

const connectionSelect = `
  c.id as c_id, c.project_id, c.provider as c_provider, c.auth_scheme as c_auth_scheme, c.status as c_status,
  c.provider_metadata as c_provider_metadata, c.create_time as c_create_time, c.update_time as c_update_time,
  g.group_ref as g_ref, g.group_name as g_name, g.create_time as g_create_time, g.update_time as g_update_time,
  u.consumer_ref as u_ref, u.consumer_name as u_name, u.create_time as u_create_time, u.update_time as u_update_time`;
const connectionJoins = `join groups g on g.id = c.group_id join consumers u on u.id = c.consumer_id`;

const connectionOf = (row: Row) => ({
  id: row.c_id,
  projectId: row.project_id,
  provider: row.c_provider,
  group: groupOf(row, 'g_'),
  consumer: {
    consumerRef: row.u_ref,
    consumerName: row.u_name,
    projectId: row.project_id,
    createTime: iso(row.u_create_time as Date),
    updateTime: iso(row.u_update_time as Date),
  },
  authScheme: row.c_auth_scheme,
  status: row.c_status,
  providerMetadata: row.c_provider_metadata,
  createTime: iso(row.c_create_time as Date),
  updateTime: iso(row.c_update_time as Date),
});

const integrationOf = (row: Row) => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  provider: row.provider,
  createTime: iso(row.create_time as Date),
  updateTime: iso(row.update_time as Date),
  latestRevision: {
    id: row.r_id,
    specVersion: row.spec_version,
    createTime: iso(row.r_create_time as Date),
    content: row.content,
  },
});

const installationOf = (row: Row) => ({
  id: row.id,
  projectId: row.project_id,
  integrationId: row.integration_id,
  healthStatus: row.health_status,
  connection: connectionOf(row),
  createTime: iso(row.create_time as Date),
  createdBy: row.created_by,
  config: {
    id: row.cf_id,
    revisionId: row.cf_revision_id,
    createTime: iso(row.cf_create_time as Date),
    createdBy: row.cf_created_by,
    content: row.cf_content,
  },
  group: groupOf(row, 'g_'),
  ...(row.last_operation_status ? { lastOperationStatus: row.last_operation_status } : {}),
  updateTime: iso(row.update_time as Date),
});

const temporalUi = (process.env.FERRY_TEMPORAL_UI_URL ?? 'http://localhost:8233').replace(/\/$/, '');
const namespace = encodeURIComponent(process.env.TEMPORAL_NAMESPACE ?? 'default');

/** The Temporal run an operation links to, as Ferry's operations carry it in `metadata.temporal`. */
const temporalRunOf = (row: Row) => {
  const metadata = row.metadata as Record<string, unknown>;
  const workflowId =
    row.action_type === 'read'
      ? metadata.inline === true
        ? `installation/${row.installation_id as string}`
        : `read/${row.id as string}`
      : row.action_type === 'write' && metadata.mode === 'asynchronous'
        ? `write/${row.id as string}`
        : undefined;
  return workflowId
    ? { workflowId, url: `${temporalUi}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}` }
    : undefined;
};

const operationOf = (row: Row) => ({
  id: row.id,
  projectId: row.project_id,
  integrationId: row.integration_id,
  installationId: row.installation_id,
  configId: row.config_id,
  actionType: row.action_type,
  status: row.status,
  ...(row.result != null && { result: row.result }),
  metadata: { ...(row.metadata as Row), ...(temporalRunOf(row) && { temporal: temporalRunOf(row) }) },
  createTime: iso(row.create_time as Date),
  updateTime: iso(row.update_time as Date),
});

const installationSelect = `
  select i.*, cf.id as cf_id, cf.revision_id as cf_revision_id, cf.create_time as cf_create_time,
         cf.created_by as cf_created_by, cf.content as cf_content, ${connectionSelect}
    from installations i
    join installation_configs cf on cf.id = i.config_id
    join connections c on c.id = i.connection_id
    ${connectionJoins}`;

async function bare(): Promise<() => Promise<void>> {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const app = new Koa();
  const routes: [RegExp, (projectId: string, match: string[]) => Promise<unknown>][] = [
    [
      /^\/v1\/projects\/[^/]+\/integrations$/,
      async (projectId) =>
        (
          await pool.query(
            `select i.*, r.id as r_id, r.spec_version, r.create_time as r_create_time, r.content
               from integrations i join revisions r on r.id = i.latest_revision_id
              where i.project_id = $1 order by i.create_time, i.name`,
            [projectId],
          )
        ).rows.map(integrationOf),
    ],
    [
      /^\/v1\/projects\/[^/]+\/integrations\/([^/]+)$/,
      async (projectId, [id]) => {
        const { rows } = await pool.query(
          `select i.*, r.id as r_id, r.spec_version, r.create_time as r_create_time, r.content
             from integrations i join revisions r on r.id = i.latest_revision_id
            where i.project_id = $1 and i.id = $2`,
          [projectId, id],
        );
        return rows[0] ? integrationOf(rows[0]) : undefined;
      },
    ],
    [
      /^\/v1\/projects\/[^/]+\/installations$/,
      async (projectId) =>
        (
          await pool.query(`${installationSelect} where i.project_id = $1 order by i.create_time, i.id`, [
            projectId,
          ])
        ).rows.map(installationOf),
    ],
    [
      /^\/v1\/projects\/[^/]+\/integrations\/([^/]+)\/installations\/([^/]+)$/,
      async (projectId, [integrationId, id]) => {
        const { rows } = await pool.query(
          `${installationSelect} where i.project_id = $1 and i.integration_id = $2 and i.id = $3`,
          [projectId, integrationId, id],
        );
        return rows[0] ? installationOf(rows[0]) : undefined;
      },
    ],
    [
      /^\/v1\/projects\/[^/]+\/integrations\/([^/]+)\/installations\/([^/]+)\/operations$/,
      async (projectId, [integrationId, installationId]) => {
        const { rows } = await pool.query(
          `select o.* from operations o
            where o.project_id = $1 and o.installation_id = $3
              and exists (select 1 from installations i where i.id = $3 and i.integration_id = $2)
            order by o.seq desc limit 201`,
          [projectId, integrationId, installationId],
        );
        const page = rows.slice(0, 200);
        return {
          results: page.map(operationOf),
          pagination: {
            done: rows.length <= 200,
            ...(rows.length > 200 && { nextPageToken: String(page[199].seq) }),
          },
        };
      },
    ],
    [
      /^\/v1\/projects\/[^/]+\/operations\/([^/]+)$/,
      async (projectId, [id]) => {
        const { rows } = await pool.query(`select * from operations where project_id = $1 and id = $2`, [
          projectId,
          id,
        ]);
        return rows[0] ? operationOf(rows[0]) : undefined;
      },
    ],
    [
      /^\/v1\/projects\/[^/]+\/connections$/,
      async (projectId) =>
        (
          await pool.query(
            `select ${connectionSelect} from connections c ${connectionJoins}
              where c.project_id = $1 order by c.create_time, c.id`,
            [projectId],
          )
        ).rows.map(connectionOf),
    ],
    [
      /^\/v1\/projects\/[^/]+\/connections\/([^/]+)$/,
      async (projectId, [id]) => {
        const { rows } = await pool.query(
          `select ${connectionSelect} from connections c ${connectionJoins} where c.project_id = $1 and c.id = $2`,
          [projectId, id],
        );
        return rows[0] ? connectionOf(rows[0]) : undefined;
      },
    ],
  ];
  app.use(async (ctx) => {
    const key = ctx.get('x-api-key');
    const { rows } = await pool.query<{ project_id: string }>(
      'select project_id from api_keys where key_hash = $1 and active',
      [hashToken(key)],
    );
    if (!rows[0]) {
      ctx.status = 401;
      return;
    }
    for (const [pattern, handler] of routes) {
      const match = pattern.exec(ctx.path);
      if (!match) continue;
      const body = await handler(rows[0].project_id, match.slice(1));
      if (body === undefined) ctx.status = 404;
      else ctx.body = body;
      return;
    }
    ctx.status = 404;
  });
  const server = createServer(app.callback());
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await pool.end();
  };
}

async function ferry(): Promise<() => Promise<void>> {
  const { startServers } = await import('../src/api/server.js');
  const { closeOrm } = await import('../src/db/orm.js');
  const { readBatchSize } = await import('../src/metrics.js');
  // The bench asks between cells how many gets shared each statement (`batch-sizes`).
  process.on('message', (message) => {
    if (message !== 'batch-sizes') return;
    void readBatchSize.get().then(({ values }) => {
      const total = (suffix: string) =>
        values
          .filter((value) => value.metricName?.endsWith(suffix))
          .reduce((sum, value) => sum + value.value, 0);
      process.send?.({ batchSizes: { statements: total('_count'), gets: total('_sum') } });
    });
  });
  const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
  process.stdout.write(`${JSON.stringify({ port: Number(new URL(servers.urls.api).port) })}\n`);
  return async () => {
    await servers.close();
    await closeOrm();
  };
}

const stop = await (process.argv[2] === 'bare' ? bare() : ferry());
let stopping = false;
const exit = () => {
  if (stopping) return;
  stopping = true;
  void stop().finally(() => process.exit(0));
};
process.once('SIGTERM', exit);
process.once('SIGINT', exit);
// Started by bench/api.ts with an IPC channel: when the bench goes, so does the server.
process.once('disconnect', exit);
