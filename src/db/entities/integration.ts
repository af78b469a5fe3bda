import { EntitySchema } from '@mikro-orm/core';
import type { IntegrationContent } from '../../schemas/integration-content.js';
import { jsonColumn, timestampColumn, timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

export interface Integration {
  id: string;
  projectId: string;
  name: string;
  provider: string;
  latestRevisionId: string;
  createTime: Date;
  updateTime: Date;
}

export const IntegrationEntity = new EntitySchema<Integration>({
  name: 'Integration',
  tableName: 'integrations',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    name: { type: 'string' },
    provider: { type: 'string' },
    latestRevisionId: uuidColumn,
    ...timestamps,
  },
});

/** Revisions are immutable: a changed manifest makes a new one. */
export interface Revision {
  id: string;
  projectId: string;
  integrationId: string;
  specVersion: string;
  content: IntegrationContent;
  createTime: Date;
}

export const RevisionEntity = new EntitySchema<Revision>({
  name: 'Revision',
  tableName: 'revisions',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    integrationId: uuidColumn,
    specVersion: { type: 'string' },
    content: jsonColumn,
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});

/** A manifest file as a builder deployed it (comments and order kept); a project keeps its latest few. */
export interface DeployedManifest {
  id: string;
  projectId: string;
  sourceYaml: string;
  createTime: Date;
}

export const DeployedManifestEntity = new EntitySchema<DeployedManifest>({
  name: 'DeployedManifest',
  tableName: 'deployed_manifests',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    sourceYaml: { type: 'text' },
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});
