import { config } from '../src/config.js';
import { InstallationEntity } from '../src/db/entities/installation.js';
import { em as newEntityManager } from '../src/db/orm.js';
import { runIdentityOf } from '../src/domain/installations/workflow.js';
import {
  attemptSchemaWatchDelivery,
  finishSchemaWatch,
  runSchemaWatch,
  type SchemaWatchAttemptOutcome,
} from '../src/domain/schema-watch.js';
import type { SchemaWatchInput, SchemaWatchOutcome } from '../src/temporal/contracts/schema-watch.js';
import { startSchemaWatchDelivery } from '../src/temporal/gateway.js';

/** The installation's schema watch, thin over src/domain/schema-watch. */

/** Compares the schemas, keeps the new snapshots, and starts delivering what changed (its own workflow). */
export async function watchSchema(input: SchemaWatchInput): Promise<SchemaWatchOutcome> {
  const run = await runSchemaWatch(input.installationId, input.runId);
  if (run.operationId && run.messageIds.length) {
    const em = await newEntityManager();
    const installation = await em.findOneOrFail(InstallationEntity, { id: input.installationId });
    await startSchemaWatchDelivery(
      { operationId: run.operationId, projectId: run.projectId!, messageIds: run.messageIds },
      await runIdentityOf(em, installation),
    );
  }
  return { ...(run.operationId && { operationId: run.operationId }), messages: run.messageIds.length };
}

export async function deliverSchemaWatchAttempt(input: {
  messageId: string;
  attempt: number;
}): Promise<SchemaWatchAttemptOutcome> {
  return attemptSchemaWatchDelivery(input.messageId, input.attempt, config());
}

export async function finishSchemaWatchDelivery(input: {
  operationId: string;
  delivered: number;
  failed: number;
  error?: string;
}): Promise<void> {
  await finishSchemaWatch(input.operationId, input);
}
