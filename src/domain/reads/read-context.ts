import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ConnectionEntity,
  ConsumerEntity,
  GroupEntity,
  type Connection,
  type Consumer,
  type Group,
} from '../../db/entities/connection.js';
import {
  InstallationConfigEntity,
  InstallationEntity,
  type Installation,
  type InstallationConfig,
} from '../../db/entities/installation.js';
import {
  IntegrationEntity,
  RevisionEntity,
  type Integration,
  type Revision,
} from '../../db/entities/integration.js';
import { DestinationEntity, type Destination } from '../../db/entities/operation.js';
import { memoized, rawRows, rowMapper, selectColumns } from '../../db/raw.js';
import type { ChangePosition } from './change-window.js';
import type { ReadOperationMetadata } from '../../schemas/operation-metadata.js';
import { readMetadataOf } from '../operation-metadata.js';

/**
 * Everything a read's plan is made of, in one statement instead of a query per table: at every
 * scheduled read of every installation, the eight lookups through the ORM were most of a quiet
 * read's CPU (each a round trip and about 0.8 ms of query building and hydration).
 */
export interface ReadContext {
  installation: Installation;
  config: InstallationConfig;
  revision: Revision;
  integration: Integration;
  connection: Connection;
  group: Group;
  consumer: Consumer;
  /** Where the object's reads stand, from what the provider returned. */
  position: ChangePosition;
  /** The read's operation, when something recorded it before the read began (a triggered read). */
  operation?: { status: string; result?: string; createTime: Date; metadata: ReadOperationMetadata };
  /** The read has a checkpoint: it began before (a retried activity, a resumed workflow). */
  checkpointed: boolean;
}

type Row = Record<string, unknown>;

/** A timestamptz column as ms (the driver gives a Date, or text in some paths). */
const timeOf = (value: unknown): number => new Date(value as string | Date).getTime();

function buildContextQuery(em: EntityManager) {
  const installation = rowMapper(em, InstallationEntity, 'i');
  const config = rowMapper(em, InstallationConfigEntity, 'c');
  const revision = rowMapper(em, RevisionEntity, 'r');
  const integration = rowMapper(em, IntegrationEntity, 'n');
  const connection = rowMapper(em, ConnectionEntity, 'k');
  const group = rowMapper(em, GroupEntity, 'g');
  const consumer = rowMapper(em, ConsumerEntity, 'u');
  const columns = [
    selectColumns(em, InstallationEntity, 'i'),
    selectColumns(em, InstallationConfigEntity, 'c'),
    selectColumns(em, RevisionEntity, 'r'),
    selectColumns(em, IntegrationEntity, 'n'),
    selectColumns(em, ConnectionEntity, 'k'),
    selectColumns(em, GroupEntity, 'g'),
    selectColumns(em, ConsumerEntity, 'u'),
  ].join(', ');
  return {
    sql: `select ${columns}, w.watermark as "w.watermark", w.deleted_watermark as "w.deleted_watermark",
                 w.resume_cursor as "w.resume_cursor",
                 o.id as "o.id", o.status as "o.status", o.result as "o.result",
                 o.create_time as "o.create_time", o.metadata as "o.metadata",
                 p.operation_id as "p.operation_id"
            from installations i
            join installation_configs c on c.id = i.config_id
            join revisions r on r.id = c.revision_id
            join integrations n on n.id = i.integration_id
            join connections k on k.id = i.connection_id
            join groups g on g.id = i.group_id
            join consumers u on u.id = k.consumer_id
            left join read_watermarks w on w.installation_id = i.id and w.object_name = ?
            left join operations o on o.id = ? and o.project_id = i.project_id
            left join read_checkpoints p on p.operation_id = o.id
           where i.id = ? and i.project_id = ?`,
    context: (row: Row): ReadContext => ({
      installation: installation(row),
      config: config(row),
      revision: revision(row),
      integration: integration(row),
      connection: connection(row),
      group: group(row),
      consumer: consumer(row),
      position: {
        ...(row['w.watermark'] != null && { watermark: timeOf(row['w.watermark']) }),
        ...(row['w.deleted_watermark'] != null && {
          deletedWatermark: timeOf(row['w.deleted_watermark']),
        }),
        ...(row['w.resume_cursor'] != null && { resumeCursor: row['w.resume_cursor'] as string }),
      },
      ...(row['o.id'] != null && {
        operation: {
          status: row['o.status'] as string,
          ...(row['o.result'] != null && { result: row['o.result'] as string }),
          createTime: new Date(row['o.create_time'] as string),
          metadata: readMetadataOf(row['o.metadata']),
        },
      }),
      checkpointed: row['p.operation_id'] != null,
    }),
  };
}

/** The installation and what surrounds it for a read of `objectName`; undefined when it is gone. */
export async function loadReadContext(
  em: EntityManager,
  read: { projectId: string; installationId: string; objectName: string; operationId: string },
): Promise<ReadContext | undefined> {
  const { sql, context } = memoized(em, 'readContextQuery', () => buildContextQuery(em));
  const [row] = await rawRows(em, sql, [
    read.objectName,
    read.operationId,
    read.installationId,
    read.projectId,
  ]);
  return row && context(row);
}

/** A project's destination by name, on the same lean path. */
export async function findDestinationByName(
  em: EntityManager,
  projectId: string,
  name: string,
): Promise<Destination | undefined> {
  const { sql, destination } = memoized(em, 'destinationByNameQuery', () => ({
    sql: `select ${selectColumns(em, DestinationEntity, 'd')} from destinations d where d.project_id = ? and d.name = ?`,
    destination: rowMapper(em, DestinationEntity, 'd'),
  }));
  const [row] = await rawRows(em, sql, [projectId, name]);
  return row && destination(row);
}
