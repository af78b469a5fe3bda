import type { EntityManager } from '@mikro-orm/postgresql';
import type { Installation } from '../../db/entities/installation.js';
import type { Operation } from '../../db/entities/operation.js';
import type { ReadType } from '../../schemas/reads.js';
import type { ReadOperationMetadata } from '../../schemas/operation-metadata.js';
import { createOperation, type OperationProgress } from '../operations.js';

export interface NewReadOperation {
  operationId: string;
  objectName: string;
  readType: ReadType;
  /** More metadata: the window asked for, the plan's window and destination, an error. */
  metadata?: Omit<Partial<ReadOperationMetadata>, 'objects' | 'readType'>;
}

/**
 * The one place a read's operation row is made (`in_progress`, with its progress at zero), whoever
 * records it first: the read host when a read is triggered, the read itself when it starts, or its
 * finish when it failed before it could start.
 */
export function createReadOperation(
  em: EntityManager,
  installation: Installation,
  read: NewReadOperation,
): Operation {
  const progress: OperationProgress = {
    installationId: installation.id,
    objectName: read.objectName,
    operationId: read.operationId,
    recordsProcessed: 0,
  };
  const operation = createOperation(em, {
    id: read.operationId,
    projectId: installation.projectId,
    integrationId: installation.integrationId,
    installationId: installation.id,
    configId: installation.configId,
    actionType: 'read',
    metadata: { objects: [read.objectName], readType: read.readType, progress, ...read.metadata },
  });
  em.persist(operation);
  return operation;
}
