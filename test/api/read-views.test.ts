import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { config } from '../../src/config.js';
import { closeOrm, em as newEntityManager, transaction } from '../../src/db/orm.js';
import { IntegrationEntity } from '../../src/db/entities/integration.js';
import { createOrg, createProject } from '../../src/domain/projects.js';
import { findIntegration, integrationView, latestRevision } from '../../src/domain/integrations.js';
import { connectionView, connectionViews } from '../../src/domain/connections/views.js';
import { findConnection, listConnections } from '../../src/domain/connections/lookups.js';
import {
  findInstallation,
  getInstallationView as ormInstallationView,
  listInstallations,
} from '../../src/domain/installations/lookups.js';
import { findOperation, listInstallationOperations, operationView } from '../../src/domain/operations.js';
import {
  allViews,
  getConnectionView,
  getInstallationView,
  getIntegrationView,
  getOperationView,
  listConnectionViews,
  listInstallationViews,
  listIntegrationViews,
  operationPageView,
  type ListOptions,
  type ViewBatches,
} from '../../src/domain/read-views.js';
import { findProject, findProjectRow } from '../../src/domain/project-access.js';
import { seed } from '../../bench/api.js';
import { MAX_READ_BATCH } from '../../src/db/batched-reads.js';
import { readBatchSize } from '../../src/metrics.js';

/**
 * The lean read path (plain SQL, one joined statement) answers byte for byte what the ORM path
 * answers, on rows with every optional part present and absent: provider apps, workspace refs,
 * token times, an operation status, results and none, writes and reads (their Temporal links).
 */

const ROWS = 12;
let projectId: string;
let projectName: string;
let ids: { integration: string; name: string; installation: string; connection: string; operation: string }[];
let hot: { integration_id: string; installation_id: string };

const same = (lean: unknown, orm: unknown) => expect(JSON.stringify(lean)).toBe(JSON.stringify(orm));

/**
 * A lean list, read in batches of every size from one row to more than all (a last batch that is
 * full, part full, or the only one), must be the ORM path's list.
 */
async function sameList<T>(list: (options: ListOptions) => ViewBatches<T>, orm: unknown): Promise<void> {
  for (const batchRows of [1, 3, 4, 5, ROWS, ROWS + 1, undefined]) {
    same(await allViews(list({ batchRows })), orm);
  }
}

beforeAll(async () => {
  ({ projectId, projectName } = await transaction(async (em) => {
    const org = await createOrg(em, `o-${randomUUID().slice(0, 8)}`);
    const project = await createProject(em, { name: `p-${randomUUID().slice(0, 8)}`, orgId: org.id });
    return { projectId: project.id, projectName: project.name };
  }));
  const db = new pg.Client({ connectionString: config().databaseUrl });
  await db.connect();
  try {
    await seed(db, projectId, ROWS);
    // Variety the seed lacks: a provider app, workspace refs, token times, statuses, other actions.
    const appId = randomUUID();
    await db.query(
      `insert into provider_apps (id, project_id, provider, external_ref, client_id, client_secret_encrypted,
                                  scopes, metadata, create_time, update_time)
       values ($1, $2, 'sandboxOAuth', 'ext-1', 'client-1', 'sealed', '["a","b"]', '{"k":1}', now(), now())`,
      [appId, projectId],
    );
    await db.query(
      `update connections set provider_app_id = $1, provider_workspace_ref = 'ws-1', provider_consumer_ref = 'pc-1',
              auth_scheme = 'oauth2AuthorizationCode', scopes = '["a"]',
              access_token_issued_at = now(), access_token_expires_at = now() + interval '1 hour'
        where id in (select id from connections where project_id = $2 order by create_time limit 3)`,
      [appId, projectId],
    );
    await db.query(
      `update installations set last_operation_status = 'failure', health_status = 'unhealthy'
        where id in (select id from installations where project_id = $1 order by create_time limit 2)`,
      [projectId],
    );
    await db.query(
      `update operations set action_type = 'write', result = null,
              metadata = jsonb_build_object('mode', 'asynchronous', 'objectName', 'contacts')
        where id in (select id from operations where project_id = $1 order by create_time limit 4)`,
      [projectId],
    );
    await db.query(
      `update operations set action_type = 'subscribe', result = null, metadata = '{}'
        where id in (select id from operations where project_id = $1 order by create_time desc limit 2)`,
      [projectId],
    );
    // Rows created in the same microsecond: lists order them by name or id, across batches too.
    for (const table of ['integrations', 'connections', 'installations']) {
      await db.query(
        `update ${table} set create_time = (select max(create_time) from ${table} where project_id = $1)
          where id in (select id from ${table} where project_id = $1 order by create_time desc limit 4)`,
        [projectId],
      );
    }
    const { rows } = await db.query(
      `select i.id as integration, i.name, n.id as installation, n.connection_id as connection
         from integrations i join installations n on n.integration_id = i.id
        where i.project_id = $1 order by i.create_time`,
      [projectId],
    );
    const operations = await db.query(
      `select id from operations where project_id = $1 order by create_time`,
      [projectId],
    );
    rows.forEach((row, index) => (row.operation = operations.rows[index].id));
    ids = rows;
    [hot] = (
      await db.query(`select installation_id, integration_id from operations where project_id = $1 limit 1`, [
        projectId,
      ])
    ).rows;
  } finally {
    await db.end();
  }
});

afterAll(async () => closeOrm());

class Rollback extends Error {}

/** Batches read so far and the gets in them, per read. */
async function batchSizes(): Promise<Record<string, { count: number; sum: number }>> {
  const sizes: Record<string, { count: number; sum: number }> = {};
  for (const { labels, value, metricName } of (await readBatchSize.get()).values) {
    const entry = (sizes[String(labels.read)] ??= { count: 0, sum: 0 });
    if (metricName?.endsWith('_count')) entry.count = value;
    if (metricName?.endsWith('_sum')) entry.sum = value;
  }
  return sizes;
}

describe('the lean read path answers as the ORM path does', () => {
  it('integrations: the list and each by id and by name', async () => {
    const em = await newEntityManager();
    const integrations = await em.find(
      IntegrationEntity,
      { projectId },
      { orderBy: { createTime: 'asc', name: 'asc' } },
    );
    const orm = [];
    for (const integration of integrations)
      orm.push(integrationView(integration, await latestRevision(em, integration)));
    await sameList((options) => listIntegrationViews(em, projectId, options), orm);
    for (const { integration, name } of ids) {
      const expected = integrationView(
        await findIntegration(em, projectId, integration),
        await latestRevision(em, await findIntegration(em, projectId, integration)),
      );
      same(await getIntegrationView(em, projectId, integration), expected);
      same(await getIntegrationView(em, projectId, name), expected);
    }
    await expect(getIntegrationView(em, projectId, randomUUID())).rejects.toThrow(
      /Integration ".*" was not found/,
    );
    await expect(getIntegrationView(em, projectId, 'nope')).rejects.toThrow(
      'Integration "nope" was not found.',
    );
  });

  it('connections: the list, filtered, and each one', async () => {
    const em = await newEntityManager();
    await sameList(
      (options) => listConnectionViews(em, projectId, {}, options),
      await connectionViews(em, await listConnections(em, projectId, {})),
    );
    for (const filters of [
      { provider: 'sandboxApiKey' },
      { provider: 'other' },
      { groupRef: 'group-2' },
      { groupRef: 'group-none' },
      { consumerRef: 'user-3' },
      { groupRef: 'group-3', consumerRef: 'user-3' },
    ]) {
      await sameList(
        (options) => listConnectionViews(em, projectId, filters, options),
        await connectionViews(em, await listConnections(em, projectId, filters)),
      );
    }
    for (const { connection } of ids) {
      same(
        await getConnectionView(em, projectId, connection),
        await connectionView(em, await findConnection(em, projectId, connection)),
      );
    }
    await expect(getConnectionView(em, projectId, randomUUID())).rejects.toThrow(
      /Connection ".*" was not found/,
    );
  });

  it('installations: the list, by group, and each one (integration by id or name)', async () => {
    const em = await newEntityManager();
    await sameList(
      (options) => listInstallationViews(em, projectId, {}, options),
      await listInstallations(em, projectId, {}),
    );
    for (const groupRef of ['group-1', 'group-5', 'group-none']) {
      await sameList(
        (options) => listInstallationViews(em, projectId, { groupRef }, options),
        await listInstallations(em, projectId, { groupRef }),
      );
    }
    for (const { integration } of ids.slice(0, 3)) {
      await sameList(
        (options) => listInstallationViews(em, projectId, { integrationId: integration }, options),
        await listInstallations(em, projectId, { integrationId: integration }),
      );
    }
    for (const { integration, name, installation } of ids) {
      const expected = await ormInstallationView(
        em,
        await findInstallation(em, projectId, installation, integration),
      );
      const byId = await getInstallationView(em, projectId, integration, installation);
      same(byId.view, expected);
      expect(byId.groupRef).toBe(expected.group?.groupRef);
      same((await getInstallationView(em, projectId, name, installation)).view, expected);
    }
    const [first, second] = ids;
    // Another integration's installation, a missing integration: the ORM path's 404s.
    await expect(getInstallationView(em, projectId, second.integration, first.installation)).rejects.toThrow(
      `Installation "${first.installation}" was not found.`,
    );
    await expect(getInstallationView(em, projectId, 'nope', first.installation)).rejects.toThrow(
      'Integration "nope" was not found.',
    );
  });

  it('operations: each one, and pages with the same tokens', async () => {
    const em = await newEntityManager();
    for (const { operation } of ids) {
      same(
        await getOperationView(em, projectId, operation, config()),
        operationView(await findOperation(em, projectId, operation), config()),
      );
    }
    await expect(getOperationView(em, projectId, 'x', config())).rejects.toThrow(
      'Operation "x" was not found.',
    );
    let token: string | undefined;
    let pages = 0;
    do {
      const lean = await operationPageView(
        em,
        projectId,
        hot.integration_id,
        hot.installation_id.toUpperCase(),
        {
          pageSize: 5,
          pageToken: token,
        },
        config(),
      );
      const orm = await listInstallationOperations(
        em,
        projectId,
        hot.installation_id,
        {
          pageSize: 5,
          pageToken: token,
        },
        config(),
      );
      same(lean, orm);
      token = lean.pagination.nextPageToken;
      pages++;
    } while (token);
    expect(pages).toBe(Math.ceil(ROWS / 5));
    const other = ids.find((row) => row.installation !== hot.installation_id)!;
    same(
      await operationPageView(
        em,
        projectId,
        other.integration,
        other.installation,
        { pageSize: 5 },
        config(),
      ),
      {
        results: [],
        pagination: { done: true },
      },
    );
    await expect(
      operationPageView(em, projectId, hot.integration_id, randomUUID(), { pageSize: 5 }, config()),
    ).rejects.toThrow(/Installation ".*" was not found/);
    await expect(
      operationPageView(
        em,
        projectId,
        hot.integration_id,
        hot.installation_id,
        {
          pageSize: 5,
          pageToken: 'bad',
        },
        config(),
      ),
    ).rejects.toMatchObject({ status: 400, issues: [expect.objectContaining({ name: 'pageToken' })] });
  });

  it('gets asked together share one statement and answer as each alone', async () => {
    const em = await newEntityManager();
    const missing = randomUUID();
    // One get at a time: each reads alone.
    const alone = async () => {
      const answers: unknown[] = [];
      for (const row of ids) {
        answers.push(await getOperationView(em, projectId, row.operation, config()));
        answers.push(await getIntegrationView(em, projectId, row.name));
        answers.push(await getIntegrationView(em, projectId, row.integration));
        answers.push((await getInstallationView(em, projectId, row.name, row.installation)).view);
        answers.push(await getConnectionView(em, projectId, row.connection));
      }
      return answers;
    };
    const expected = await alone();
    const before = await batchSizes();
    const together = await Promise.all(
      ids.flatMap((row) => [
        getOperationView(em, projectId, row.operation, config()),
        getIntegrationView(em, projectId, row.name),
        getIntegrationView(em, projectId, row.integration),
        getInstallationView(em, projectId, row.name, row.installation).then((found) => found.view),
        getConnectionView(em, projectId, row.connection),
      ]),
    );
    same(together, expected);
    const after = await batchSizes();
    // Five reads (integration by name and by id are two statements), each one batch of every row.
    for (const read of ['operation', 'connection', 'installation']) {
      expect(after[read].sum - before[read].sum).toBe(ROWS);
      expect(after[read].count - before[read].count).toBe(1);
    }
    expect(after.integration.count - before.integration.count).toBe(2);

    // A get that finds nothing is a 404 of its own, as is another project's get of the same id;
    // the others in its batch are answered.
    const otherProject = await transaction(async (tx) => {
      const org = await createOrg(tx, `o-${randomUUID().slice(0, 8)}`);
      return (await createProject(tx, { name: `p-${randomUUID().slice(0, 8)}`, orgId: org.id })).id;
    });
    const mixed = await Promise.allSettled([
      getOperationView(em, projectId, ids[0].operation, config()),
      getOperationView(em, projectId, missing, config()),
      getOperationView(em, projectId, ids[1].operation, config()),
      getOperationView(em, otherProject, ids[1].operation, config()),
    ]);
    expect(mixed.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((mixed[1] as PromiseRejectedResult).reason).toMatchObject({ status: 404 });
    expect((mixed[3] as PromiseRejectedResult).reason).toMatchObject({ status: 404 });
    same((mixed[2] as PromiseFulfilledResult<unknown>).value, expected[5]);

    // Values travel as array literals: names that look like their syntax are still plain names.
    const odd = ['NULL', 'a,b', 'x"y', 'back\\slash', '{}', '{"a"}', ' ', 'ü'];
    const byName = await Promise.allSettled([
      ...odd.map((name) => getIntegrationView(em, projectId, name)),
      getIntegrationView(em, projectId, ids[2].name),
    ]);
    expect(byName.map((result) => result.status)).toEqual([...odd.map(() => 'rejected'), 'fulfilled']);
    for (const [index, name] of odd.entries()) {
      expect((byName[index] as PromiseRejectedResult).reason).toMatchObject({
        status: 404,
        message: `Integration "${name}" was not found.`,
      });
    }

    // More than a batch holds: split, every answer still its own.
    const many = Array.from({ length: MAX_READ_BATCH * 2 + 1 }, (_, index) => ids[index % ROWS].operation);
    const counted = (await batchSizes()).operation;
    const answers = await Promise.all(many.map((id) => getOperationView(em, projectId, id, config())));
    expect(answers.map((answer) => answer.id)).toEqual(many);
    expect((await batchSizes()).operation.count - counted.count).toBe(3);

    // Inside a transaction a get reads on it, alone: it sees the transaction's own writes.
    await transaction(async (tx) => {
      await tx
        .getConnection()
        .execute(
          `update operations set status = 'failure' where id = ?`,
          [ids[0].operation],
          'run',
          tx.getTransactionContext(),
        );
      const [inside] = await Promise.all([getOperationView(tx, projectId, ids[0].operation, config())]);
      expect(inside.status).toBe('failure');
      throw new Rollback();
    }).catch((error) => {
      if (!(error instanceof Rollback)) throw error;
    });
    expect((await getOperationView(em, projectId, ids[0].operation, config())).status).toBe('success');
  });

  it('projects: a plain row by id or name, as findProject finds it', async () => {
    const em = await newEntityManager();
    const expected = await findProject(em, projectId);
    same(await findProjectRow(em, projectId), expected);
    same(await findProjectRow(em, projectName), expected);
    expect(await findProjectRow(em, randomUUID())).toBeNull();
  });
});
