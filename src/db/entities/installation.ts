import { EntitySchema } from '@mikro-orm/core';
import type { InstallationConfigContent } from '../../schemas/installations.js';
import { jsonColumn, timestampColumn, timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

export interface Installation {
  id: string;
  projectId: string;
  integrationId: string;
  groupId: string;
  connectionId: string;
  /** The current config version. */
  configId: string;
  createdBy: string;
  healthStatus: 'healthy' | 'unhealthy';
  lastOperationStatus?: 'success' | 'failure' | 'in_progress';
  createTime: Date;
  updateTime: Date;
}

export const InstallationEntity = new EntitySchema<Installation>({
  name: 'Installation',
  tableName: 'installations',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    integrationId: uuidColumn,
    groupId: uuidColumn,
    connectionId: uuidColumn,
    configId: uuidColumn,
    createdBy: { type: 'string' },
    healthStatus: { type: 'string' },
    lastOperationStatus: { type: 'string', nullable: true },
    ...timestamps,
  },
});

/** Every config change is a new, immutable version. */
export interface InstallationConfig {
  id: string;
  projectId: string;
  installationId: string;
  revisionId: string;
  /** Checked against the manifest when written (installations/config-validation.ts). */
  content: InstallationConfigContent;
  createdBy: string;
  createTime: Date;
}

export const InstallationConfigEntity = new EntitySchema<InstallationConfig>({
  name: 'InstallationConfig',
  tableName: 'installation_configs',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    installationId: uuidColumn,
    revisionId: uuidColumn,
    content: jsonColumn,
    createdBy: { type: 'string' },
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});

/** How far incremental reads of one object have got; kept here so it survives workflow resets. */
export interface ReadWatermark {
  installationId: string;
  objectName: string;
  projectId: string;
  /** The newest modification time delivered, as the provider stamped it. */
  watermark?: Date;
  /** The newest deletion delivered from a listing of deletions. */
  deletedWatermark?: Date;
  /** The provider's own cursor, for listings that resume from one. */
  resumeCursor?: string;
  backfillDone: boolean;
  updateTime: Date;
}

export const ReadWatermarkEntity = new EntitySchema<ReadWatermark>({
  name: 'ReadWatermark',
  tableName: 'read_watermarks',
  properties: {
    installationId: { ...uuidColumn, primary: true },
    objectName: { type: 'string', primary: true },
    projectId: uuidColumn,
    watermark: { ...timestampColumn, nullable: true },
    deletedWatermark: { ...timestampColumn, nullable: true },
    resumeCursor: { type: 'text', nullable: true },
    backfillDone: { type: 'boolean' },
    updateTime: { ...timestampColumn, onCreate: () => new Date(), onUpdate: () => new Date() },
  },
});
