import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

/** One run of a read, write or subscribe, or one tool call of an AI agent (`mcp.tool`), as the builder sees it. */
export interface Operation {
  id: string;
  projectId: string;
  integrationId: string;
  installationId: string;
  configId: string;
  actionType: 'read' | 'write' | 'subscribe' | 'schema.watch' | 'mcp.tool';
  status: 'success' | 'failure' | 'in_progress';
  result?: string;
  metadata: Record<string, unknown>;
  /** Insertion order, for stable newest-first pagination. */
  seq?: number;
  createTime: Date;
  updateTime: Date;
}

export const OperationEntity = new EntitySchema<Operation>({
  name: 'Operation',
  tableName: 'operations',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    integrationId: uuidColumn,
    installationId: uuidColumn,
    configId: uuidColumn,
    actionType: { type: 'string' },
    status: { type: 'string' },
    result: { type: 'text', nullable: true },
    metadata: jsonColumn,
    seq: { type: 'bigint', persist: false, nullable: true },
    ...timestamps,
  },
});

export interface OperationLog {
  id?: number;
  projectId: string;
  operationId: string;
  timestamp: Date;
  severity: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  msg: string;
  error?: string;
  details: Record<string, unknown>;
}

export const OperationLogEntity = new EntitySchema<OperationLog>({
  name: 'OperationLog',
  tableName: 'operation_logs',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    projectId: uuidColumn,
    operationId: uuidColumn,
    timestamp: timestampColumn,
    severity: { type: 'string' },
    msg: { type: 'text' },
    error: { type: 'text', nullable: true },
    details: jsonColumn,
  },
});

/** A webhook destination; signing secrets are sealed, with the retired one kept for a grace period. */
export interface Destination {
  id: string;
  projectId: string;
  name: string;
  /** A registered destination type (src/delivery/registry.ts). */
  type: string;
  /** A webhook's URL; for other types where messages go, as the type describes it (no credentials). */
  url: string;
  /** A webhook's header names (their values are secrets). */
  headers: Record<string, string>;
  /** The public `metadata` of types other than webhook, as validated by the type's schema. */
  metadata: Record<string, unknown>;
  secretsEncrypted: string;
  disabledTime?: Date;
  firstFailureTime?: Date;
  createTime: Date;
  updateTime: Date;
}

export const DestinationEntity = new EntitySchema<Destination>({
  name: 'Destination',
  tableName: 'destinations',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    name: { type: 'string' },
    type: { type: 'string' },
    url: { type: 'text' },
    headers: jsonColumn,
    metadata: jsonColumn,
    secretsEncrypted: { type: 'text' },
    disabledTime: { ...timestampColumn, nullable: true },
    firstFailureTime: { ...timestampColumn, nullable: true },
    ...timestamps,
  },
});
