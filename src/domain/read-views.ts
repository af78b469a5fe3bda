import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../core/ids.js';
import {
  ConnectionEntity,
  ConsumerEntity,
  GroupEntity,
  ProviderAppEntity,
  type Connection,
} from '../db/entities/connection.js';
import { InstallationConfigEntity, InstallationEntity } from '../db/entities/installation.js';
import { IntegrationEntity, RevisionEntity } from '../db/entities/integration.js';
import { OperationEntity } from '../db/entities/operation.js';
import { batchedRows, type KeyedRead } from '../db/batched-reads.js';
import { memoized, rawRows, rowBatches, rowMapper, selectColumns } from '../db/raw.js';
import type { ConnectionView } from '../schemas/connections.js';
import type { InstallationView } from '../schemas/installations.js';
import type { IntegrationView } from '../schemas/integrations.js';
import type { OperationView } from '../schemas/operations.js';
import { connectionViewOf } from './connections/views.js';
import { installationView } from './installations/views.js';
import { findIntegration, integrationView } from './integrations.js';
import {
  decodePageToken,
  findOperation,
  operationPage,
  operationView,
  type OperationViewSettings,
  type OperationPage,
} from './operations.js';
import { findInstallationOfIntegration } from './reads/installation-context.js';
import { findInstallation } from './installations/lookups.js';
import { findConnection } from './connections/lookups.js';
import { FAILING_DESTINATIONS_SQL, failingDestinations } from './installations/health.js';

/**
 * The views of the API's busiest gets and lists, each read in one statement (joins instead of a
 * query per related table) on the driver (see `db/raw.ts`), then built by the same view functions
 * as everywhere else, so the answers are the same as the ORM path's. When a get finds nothing, the
 * ORM path runs to throw the same 404 it always did (which of integration or installation is missing).
 */

type Row = Record<string, unknown>;

/** `alias.id = ? or alias.name = ?` as `findIntegration` matches an id or a name. */
function integrationMatch(
  alias: string,
  idOrName: string,
): { sql: string; params: string[]; types: string[] } {
  return isUuid(idOrName)
    ? { sql: `(${alias}.id = ? or ${alias}.name = ?)`, params: [idOrName, idOrName], types: ['uuid', 'text'] }
    : { sql: `${alias}.name = ?`, params: [idOrName], types: ['text'] };
}

/** A get's statement, built once per ORM and shape of match. */
function keyedRead(em: EntityManager, name: string, shape: string, build: () => Omit<KeyedRead, 'name'>) {
  return memoized<KeyedRead>(em, `get:${name}:${shape}`, () => ({ name, ...build() }));
}

/** A list's views, a batch at a time (see `rowBatches`): the API writes each batch's JSON as it comes. */
export type ViewBatches<T> = AsyncIterable<T[]>;

export interface ListOptions {
  /** Rows per statement; `LIST_BATCH_ROWS` by default. */
  batchRows?: number;
}

async function* viewBatches<T>(batches: AsyncIterable<Row[]>, view: (row: Row) => T): ViewBatches<T> {
  for await (const rows of batches) yield rows.map(view);
}

/** Every view of a list, for callers that need them all at once. */
export async function allViews<T>(batches: ViewBatches<T>): Promise<T[]> {
  const views: T[] = [];
  for await (const batch of batches) views.push(...batch);
  return views;
}

// Integrations ----------------------------------------------------------------------------------

function integrationQuery(em: EntityManager) {
  return memoized(em, 'integrationQuery', () => buildIntegrationQuery(em));
}

function buildIntegrationQuery(em: EntityManager) {
  const integration = rowMapper(em, IntegrationEntity, 'i');
  const revision = rowMapper(em, RevisionEntity, 'r');
  return {
    sql: `select ${selectColumns(em, IntegrationEntity, 'i')}, ${selectColumns(em, RevisionEntity, 'r')}
            from integrations i join revisions r on r.id = i.latest_revision_id`,
    view: (row: Row) => integrationView(integration(row), revision(row)),
  };
}

/** A project's integrations, oldest first, a batch at a time. */
export function listIntegrationViews(
  em: EntityManager,
  projectId: string,
  options: ListOptions = {},
): ViewBatches<IntegrationView> {
  const { sql, view } = integrationQuery(em);
  return viewBatches(
    rowBatches(em, {
      sql,
      where: 'i.project_id = ?',
      params: [projectId],
      order: ['i.create_time', 'i.name'],
      ...options,
    }),
    view,
  );
}

export async function getIntegrationView(
  em: EntityManager,
  projectId: string,
  idOrName: string,
): Promise<IntegrationView> {
  const { sql, view } = integrationQuery(em);
  const match = integrationMatch('i', idOrName);
  const read = keyedRead(em, 'integration', match.sql, () => ({
    sql: `${sql} where i.project_id = ? and ${match.sql} limit 1`,
    types: ['uuid', ...match.types],
  }));
  const [row] = await batchedRows(em, read, [projectId, ...match.params]);
  if (!row) await findIntegration(em, projectId, idOrName);
  return view(row);
}

// Connections -----------------------------------------------------------------------------------

/** A connection with its group, consumer and provider app; its sealed credentials are not read. */
function connectionQuery(em: EntityManager) {
  return memoized(em, 'connectionQuery', () => buildConnectionQuery(em));
}

function buildConnectionQuery(em: EntityManager) {
  const connection = rowMapper(em, ConnectionEntity, 'c');
  const group = rowMapper(em, GroupEntity, 'cg');
  const consumer = rowMapper(em, ConsumerEntity, 'cu');
  const app = rowMapper(em, ProviderAppEntity, 'pa');
  const columns = [
    selectColumns(em, ConnectionEntity, 'c').replace(
      /c\.credentials_encrypted as "c\.credentials_encrypted", /,
      '',
    ),
    selectColumns(em, GroupEntity, 'cg'),
    selectColumns(em, ConsumerEntity, 'cu'),
    selectColumns(em, ProviderAppEntity, 'pa').replace(
      /pa\.client_secret_encrypted as "pa\.client_secret_encrypted", /,
      '',
    ),
  ].join(', ');
  return {
    columns,
    joins: `join groups cg on cg.id = c.group_id
            join consumers cu on cu.id = c.consumer_id
            left join provider_apps pa on pa.id = c.provider_app_id`,
    view: (row: Row): ConnectionView =>
      connectionViewOf(
        connection(row) as Connection,
        group(row),
        consumer(row),
        row['pa.id'] ? app(row) : undefined,
      ),
  };
}

export interface ConnectionListFilters {
  provider?: string;
  groupRef?: string;
  consumerRef?: string;
}

/** A project's connections, oldest first, a batch at a time. */
export function listConnectionViews(
  em: EntityManager,
  projectId: string,
  filters: ConnectionListFilters,
  options: ListOptions = {},
): ViewBatches<ConnectionView> {
  const { columns, joins, view } = connectionQuery(em);
  const where = ['c.project_id = ?'];
  const params: string[] = [projectId];
  if (filters.provider) {
    where.push('c.provider = ?');
    params.push(filters.provider);
  }
  if (filters.groupRef) {
    where.push('cg.project_id = ? and cg.group_ref = ?');
    params.push(projectId, filters.groupRef);
  }
  if (filters.consumerRef) {
    where.push('cu.project_id = ? and cu.consumer_ref = ?');
    params.push(projectId, filters.consumerRef);
  }
  return viewBatches(
    rowBatches(em, {
      sql: `select ${columns} from connections c ${joins}`,
      where: where.join(' and '),
      params,
      order: ['c.create_time', 'c.id'],
      ...options,
    }),
    view,
  );
}

/** A connection without its credentials (`includeCreds` takes the ORM path: it opens them). */
export async function getConnectionView(
  em: EntityManager,
  projectId: string,
  id: string,
): Promise<ConnectionView> {
  const { columns, joins, view } = connectionQuery(em);
  const read = keyedRead(em, 'connection', 'id', () => ({
    sql: `select ${columns} from connections c ${joins} where c.project_id = ? and c.id = ?`,
    types: ['uuid', 'uuid'],
  }));
  const [row] = isUuid(id) ? await batchedRows(em, read, [projectId, id]) : [];
  if (!row) await findConnection(em, projectId, id);
  return view(row);
}

// Installations ---------------------------------------------------------------------------------

function installationQuery(em: EntityManager) {
  return memoized(em, 'installationQuery', () => buildInstallationQuery(em));
}

function buildInstallationQuery(em: EntityManager) {
  const connection = connectionQuery(em);
  const installation = rowMapper(em, InstallationEntity, 'i');
  const config = rowMapper(em, InstallationConfigEntity, 'cf');
  const group = rowMapper(em, GroupEntity, 'ig');
  return {
    sql: `select ${selectColumns(em, InstallationEntity, 'i')}, ${selectColumns(em, InstallationConfigEntity, 'cf')},
                 ${selectColumns(em, GroupEntity, 'ig')}, ${connection.columns}, fd.failing_destinations
            from installations i
            join installation_configs cf on cf.id = i.config_id
            join groups ig on ig.id = i.group_id
            join connections c on c.id = i.connection_id
            ${connection.joins}
            left join lateral (${FAILING_DESTINATIONS_SQL}) fd on true`,
    parts: (row: Row) => ({
      installation: installation(row),
      config: config(row),
      group: group(row),
      connection: connection.view(row),
      destinations: failingDestinations(row.failing_destinations),
    }),
  };
}

/**
 * The installations of a project, oldest first, a batch at a time: of one integration when
 * `integrationId` is given, of one group when `groupRef` is (none when it is unknown).
 */
export function listInstallationViews(
  em: EntityManager,
  projectId: string,
  filter: { integrationId?: string; groupRef?: string },
  options: ListOptions = {},
): ViewBatches<InstallationView> {
  const { sql, parts } = installationQuery(em);
  const where = ['i.project_id = ?'];
  const params: string[] = [projectId];
  if (filter.integrationId !== undefined) {
    where.push('i.integration_id = ?');
    params.push(filter.integrationId);
  }
  if (filter.groupRef !== undefined) {
    where.push('ig.project_id = ? and ig.group_ref = ?');
    params.push(projectId, filter.groupRef);
  }
  return viewBatches(
    rowBatches(em, { sql, where: where.join(' and '), params, order: ['i.create_time', 'i.id'], ...options }),
    (row) => installationView(parts(row)),
  );
}

/**
 * One installation of an integration (by id or name), with the `groupRef` of its group so the
 * caller can check a group-scoped token before answering.
 */
export async function getInstallationView(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  installationId: string,
): Promise<{ view: InstallationView; groupRef: string }> {
  const { sql, parts } = installationQuery(em);
  const match = integrationMatch('n', integrationIdOrName);
  const read = keyedRead(em, 'installation', match.sql, () => ({
    sql: `${sql} join integrations n on n.id = i.integration_id
           where i.project_id = ? and i.id = ? and n.project_id = ? and ${match.sql} limit 1`,
    types: ['uuid', 'uuid', 'uuid', ...match.types],
  }));
  const [row] = isUuid(installationId)
    ? await batchedRows(em, read, [projectId, installationId, projectId, ...match.params])
    : [];
  if (!row) {
    const integration = await findIntegration(em, projectId, integrationIdOrName);
    await findInstallation(em, projectId, installationId, integration.id);
  }
  const found = parts(row);
  return { view: installationView(found), groupRef: found.group.groupRef };
}

// Operations ------------------------------------------------------------------------------------

function operationQuery(em: EntityManager) {
  return memoized(em, 'operationQuery', () => ({
    columns: selectColumns(em, OperationEntity, 'o'),
    operation: rowMapper(em, OperationEntity, 'o'),
  }));
}

export async function getOperationView(
  em: EntityManager,
  projectId: string,
  operationId: string,
  settings: OperationViewSettings,
): Promise<OperationView> {
  const { columns, operation } = operationQuery(em);
  const read = keyedRead(em, 'operation', 'id', () => ({
    sql: `select ${columns} from operations o where o.project_id = ? and o.id = ?`,
    types: ['uuid', 'uuid'],
  }));
  const [row] = isUuid(operationId) ? await batchedRows(em, read, [projectId, operationId]) : [];
  if (!row) await findOperation(em, projectId, operationId);
  return operationView(operation(row), settings);
}

/**
 * A page of an installation's operations, newest first, checking in the same statement that the
 * installation belongs to the integration (by id or name); as `listInstallationOperations`.
 */
export async function operationPageView(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  installationId: string,
  options: { pageSize: number; pageToken?: string },
  settings: OperationViewSettings,
): Promise<OperationPage> {
  if (!isUuid(installationId)) {
    await findInstallationOfIntegration(em, projectId, integrationIdOrName, installationId);
  }
  // The scope names the installation as stored (lower case), as the ORM path's does.
  const scope = `${projectId}/${installationId.toLowerCase()}`;
  let before: bigint | undefined;
  try {
    before =
      options.pageToken === undefined
        ? undefined
        : decodePageToken(scope, options.pageToken, settings.encryptionKey);
  } catch (error) {
    // A missing installation is a 404 before a bad token is a 400.
    await findInstallationOfIntegration(em, projectId, integrationIdOrName, installationId);
    throw error;
  }
  const match = integrationMatch('n', integrationIdOrName);
  const { columns, operation } = operationQuery(em);
  const rows = await rawRows(
    em,
    `select ${columns}
       from operations o
      where o.project_id = ? and o.installation_id = ?${before !== undefined ? ' and o.seq < ?' : ''}
        and exists (select 1 from installations i join integrations n on n.id = i.integration_id
                     where i.id = ? and i.project_id = ? and n.project_id = ? and ${match.sql})
      order by o.seq desc limit ?`,
    [
      projectId,
      installationId,
      ...(before !== undefined ? [before.toString()] : []),
      installationId,
      projectId,
      projectId,
      ...match.params,
      options.pageSize + 1,
    ],
  );
  // No rows: an installation without operations, or none at all (the ORM path says which: 404).
  if (!rows.length) await findInstallationOfIntegration(em, projectId, integrationIdOrName, installationId);
  return operationPage(rows.map(operation), options.pageSize, scope, settings);
}
