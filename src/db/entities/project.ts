import { EntitySchema } from '@mikro-orm/core';
import { jsonColumn, timestampColumn, timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

export interface Project {
  id: string;
  orgId: string;
  name: string;
  appName: string;
  createTime: Date;
  updateTime: Date;
}

export const ProjectEntity = new EntitySchema<Project>({
  name: 'Project',
  tableName: 'projects',
  properties: {
    id: uuidPrimaryKey,
    orgId: uuidColumn,
    name: { type: 'string', unique: true },
    appName: { type: 'string' },
    ...timestamps,
  },
});

/** Only the SHA-256 of a key is kept; the key itself is shown once, at creation. */
export interface ApiKey {
  id: string;
  projectId: string;
  label: string;
  prefix: string;
  keyHash: string;
  scopes: string[];
  active: boolean;
  lastUsedTime?: Date;
  createTime: Date;
  updateTime: Date;
}

export const ApiKeyEntity = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    label: { type: 'string' },
    prefix: { type: 'string' },
    keyHash: { type: 'string', unique: true },
    scopes: jsonColumn,
    active: { type: 'boolean' },
    lastUsedTime: { ...timestampColumn, nullable: true },
    ...timestamps,
  },
});
