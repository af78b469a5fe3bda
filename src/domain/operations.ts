import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import Type from 'typebox';
import { invalidPageToken, pageTokenCodec } from '../crypto/page-token.js';
import { ProblemError } from '../core/problem.js';
import { isUuid } from '../core/ids.js';
import type { Config } from '../config.js';
import { OperationEntity, type Operation } from '../db/entities/operation.js';
import { readMetadataOf, writeMetadataOf } from './operation-metadata.js';
import type { OperationView } from '../schemas/operations.js';
import type { OperationActionType, OperationMetadataOf } from '../schemas/operation-metadata.js';
import {
  installationWorkflowId,
  readWorkflowId,
  writeWorkflowId,
} from '../temporal/contracts/workflow-ids.js';

/**
 * Operations: one row per read, write or subscribe run, listed newest first with opaque cursors.
 * Writes and subscribes create theirs with `createOperation` too.
 */

/** `metadata.progress` of a read (spec: Operation). */
export interface OperationProgress {
  installationId: string;
  objectName: string;
  operationId: string;
  recordsProcessed: number;
  recordsEstimatedTotal?: number;
}

/** The Temporal run behind an operation, for operators: its workflow id and its page in the Temporal UI. */
function temporalRun(
  operation: Operation,
  settings: OperationViewSettings,
): { workflowId: string; url: string } | undefined {
  const workflowId =
    operation.actionType === 'read'
      ? // A read run inline is an activity of its installation's workflow (`read/<operationId>` if handed over).
        readMetadataOf(operation.metadata).inline === true
        ? installationWorkflowId(operation.installationId)
        : readWorkflowId(operation.id)
      : operation.actionType === 'write' && writeMetadataOf(operation.metadata).mode === 'asynchronous'
        ? writeWorkflowId(operation.id)
        : undefined;
  if (!workflowId) return undefined;
  const { temporalUiUrl, temporal } = settings;
  const url = `${temporalUiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return { workflowId, url };
}

/** What an operation's view needs of the settings: its Temporal UI link, its listing's token key. */
export type OperationViewSettings = Pick<Config, 'temporalUiUrl' | 'temporal' | 'encryptionKey'>;

export function operationView(operation: Operation, settings: OperationViewSettings): OperationView {
  const run = temporalRun(operation, settings);
  return {
    id: operation.id,
    projectId: operation.projectId,
    integrationId: operation.integrationId,
    installationId: operation.installationId,
    configId: operation.configId,
    actionType: operation.actionType,
    status: operation.status,
    ...(operation.result != null && { result: operation.result }),
    metadata: { ...operation.metadata, ...(run && { temporal: run }) },
    createTime: operation.createTime.toISOString(),
    updateTime: operation.updateTime.toISOString(),
  };
}

export async function findOperation(
  em: EntityManager,
  projectId: string,
  operationId: string,
): Promise<Operation> {
  const operation = isUuid(operationId)
    ? await em.findOne(OperationEntity, { id: operationId, projectId })
    : null;
  if (!operation) throw ProblemError.notFound(`Operation "${operationId}" was not found.`);
  return operation;
}

/** A new operation, its metadata typed by its action kind (schemas/operation-metadata.ts). */
export type NewOperation = {
  id?: string;
  projectId: string;
  integrationId: string;
  installationId: string;
  configId: string;
} & { [K in OperationActionType]: { actionType: K; metadata: OperationMetadataOf<K> } }[OperationActionType];

/** Persists an `in_progress` operation in the caller's unit of work. */
export function createOperation(em: EntityManager, input: NewOperation): Operation {
  const now = new Date();
  return em.create(OperationEntity, {
    id: input.id ?? randomUUID(),
    projectId: input.projectId,
    integrationId: input.integrationId,
    installationId: input.installationId,
    configId: input.configId,
    actionType: input.actionType,
    status: 'in_progress',
    metadata: input.metadata,
    createTime: now,
    updateTime: now,
  });
}

/**
 * An installation's `lastOperationStatus` reports the status of its latest operation (spec:
 * Operation types), not of whichever finished last: set from the newest row, so an old operation
 * ending late (a retry, a swept one, a slow read) never hides a newer one's status. An agent's tool
 * call is left out: an agent asking for an unknown object says nothing of the installation's health.
 * Call it in the transaction that changed an operation, after the change is flushed.
 */
export async function followLatestOperation(em: EntityManager, installationId: string): Promise<void> {
  await em.execute(
    `update installations
        set last_operation_status =
              (select status from operations
                where installation_id = ? and action_type <> 'mcp.tool'
                order by seq desc limit 1)
      where id = ?`,
    [installationId, installationId],
    'run',
  );
}

/**
 * Operation listings page by `seq`, newest first, so pages are stable while new operations arrive.
 * Their tokens (crypto/page-token) carry the last `seq` returned, bound to the listing's scope (the
 * project, the installation), so a token cannot be forged or replayed against another installation.
 */
const operationsToken = pageTokenCodec(
  'operations',
  Type.Object({ seq: Type.String({ pattern: '^[0-9]{1,19}$' }) }, { additionalProperties: false }),
);

export function encodePageToken(scope: string, seq: bigint, secret: Buffer): string {
  return operationsToken.encode(scope, { seq: seq.toString() }, secret);
}

export function decodePageToken(scope: string, token: string, secret: Buffer): bigint {
  const seq = BigInt(operationsToken.decode(scope, token, secret).seq);
  // A bigint column ends short of some 19-digit numbers.
  if (seq >= 2n ** 63n) throw invalidPageToken(token);
  return seq;
}

export interface OperationPage {
  results: OperationView[];
  pagination: { done: boolean; nextPageToken?: string };
}

/** A page from `pageSize + 1` operations, newest first: the extra one says another page follows. */
export function operationPage(
  operations: Operation[],
  pageSize: number,
  scope: string,
  settings: OperationViewSettings,
): OperationPage {
  const page = operations.slice(0, pageSize);
  const done = operations.length <= pageSize;
  const last = page[page.length - 1];
  return {
    results: page.map((operation) => operationView(operation, settings)),
    pagination: {
      done,
      ...(!done &&
        last && { nextPageToken: encodePageToken(scope, BigInt(last.seq!), settings.encryptionKey) }),
    },
  };
}

export async function listInstallationOperations(
  em: EntityManager,
  projectId: string,
  installationId: string,
  options: { pageSize: number; pageToken?: string },
  settings: OperationViewSettings,
): Promise<OperationPage> {
  const scope = `${projectId}/${installationId}`;
  const before =
    options.pageToken === undefined
      ? undefined
      : decodePageToken(scope, options.pageToken, settings.encryptionKey);
  const operations = await em.find(
    OperationEntity,
    { projectId, installationId, ...(before !== undefined && { seq: { $lt: before as never } }) },
    { orderBy: { seq: 'desc' } as never, limit: options.pageSize + 1 },
  );
  return operationPage(operations, options.pageSize, scope, settings);
}
