import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, uuidColumn, uuidPrimaryKey } from '../columns.js';

/** The field metadata of one installed read object when the schema watch last looked. */
export interface SchemaSnapshot {
  installationId: string;
  objectName: string;
  /** Field metadata keyed by field name, as the connector's `listObjectMetadata` gives it. */
  fields: Record<string, unknown>;
  takenAt: Date;
}

export const SchemaSnapshotEntity = new EntitySchema<SchemaSnapshot>({
  name: 'SchemaSnapshot',
  tableName: 'schema_snapshots',
  properties: {
    installationId: { ...uuidColumn, primary: true },
    objectName: { type: 'text', primary: true },
    fields: jsonColumn,
    takenAt: timestampColumn,
  },
});

/** One `schema.watch` message to deliver, built once, so every attempt carries the same bytes. */
export interface SchemaWatchMessage {
  id: string;
  projectId: string;
  installationId: string;
  operationId: string;
  objectName: string;
  message: string;
  createTime: Date;
}

export const SchemaWatchMessageEntity = new EntitySchema<SchemaWatchMessage>({
  name: 'SchemaWatchMessage',
  tableName: 'schema_watch_messages',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    installationId: uuidColumn,
    operationId: uuidColumn,
    objectName: { type: 'text' },
    message: { type: 'text' },
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});
