import type { EntityManager } from '@mikro-orm/postgresql';
import { config } from '../../config.js';
import {
  InstallationEntity,
  ReadWatermarkEntity,
  type Installation,
} from '../../db/entities/installation.js';
import { DestinationEntity, OperationEntity } from '../../db/entities/operation.js';
import { ReadCheckpointEntity } from '../../db/entities/read-checkpoint.js';
import { em as newEntityManager } from '../../db/orm.js';
import { scheduleLateness } from '../../metrics.js';
import type { ReadMessageContext } from '../../delivery/messages.js';
import type { ReadObjectInput } from '../../temporal/contracts/read.js';
import { appendLogs, type LogEntry } from '../operation-logs.js';
import { followLatestOperation, type OperationProgress } from '../operations.js';
import { createReadOperation } from './read-operation.js';
import { readConnector } from './connector.js';
import { classifyReadError, ReadSetupError } from './failures.js';
import {
  installationEventBase,
  installationParties,
  readObjectSetup,
  type ReadObjectSetup,
} from './installation-context.js';
import {
  DEFAULT_DELIVERY_PAGE_SIZE,
  providerFields,
  readSelection,
  readWindow,
  type ReadPlan,
} from './plan.js';

/**
 * The start of a read: decide its plan (window, fields, destination, message context), estimate
 * how many records it will read, and record the operation `in_progress` with its checkpoint at
 * page 0. Starting a read that already has a checkpoint (a retried activity, a resumed or
 * continued workflow) changes nothing and returns the same plan.
 */

export interface StartedRead {
  pageSize: number;
  deliveryMode: ReadPlan['deliveryMode'];
  recordsEstimatedTotal?: number;
  /** The checkpoint existed already: the read resumes where it stood. */
  resumed: boolean;
  /** Delays before each delivery attempt of a page (FERRY_DELIVERY_RETRY_SCHEDULE). */
  retryScheduleMs: number[];
}

function started(plan: ReadPlan, resumed: boolean, estimate?: number): StartedRead {
  return {
    pageSize: plan.pageSize,
    deliveryMode: plan.deliveryMode,
    ...(estimate !== undefined && { recordsEstimatedTotal: estimate }),
    resumed,
    retryScheduleMs: [...config().delivery.retryScheduleMs],
  };
}

async function requireSetup(
  em: EntityManager,
  installation: Installation,
  objectName: string,
): Promise<ReadObjectSetup> {
  const setup = await readObjectSetup(em, installation, objectName);
  if (!setup) throw new ReadSetupError(`The installation does not read object "${objectName}".`);
  return setup;
}

async function buildPlan(em: EntityManager, input: ReadObjectInput, now: Date): Promise<ReadPlan> {
  const installation = await em.findOne(InstallationEntity, { id: input.installationId });
  if (!installation) throw new ReadSetupError(`Installation ${input.installationId} no longer exists.`);
  const setup = await requireSetup(em, installation, input.objectName);
  const destination = await em.findOne(DestinationEntity, {
    projectId: installation.projectId,
    name: setup.destinationName,
  });
  if (!destination) {
    throw new ReadSetupError(
      `Destination "${setup.destinationName}" of object "${input.objectName}" does not exist in the project.`,
    );
  }
  const parties = await installationParties(em, installation);
  const watermark = await em.findOne(ReadWatermarkEntity, {
    installationId: installation.id,
    objectName: input.objectName,
  });
  const operation = await em.findOne(OperationEntity, { id: input.operationId });
  const window = readWindow({
    readType: input.readType,
    now,
    watermark: watermark?.watermark ?? undefined,
    installationCreateTime: installation.createTime,
    backfill: setup.configured?.backfill ?? setup.declared.backfill,
    sinceTimestamp: input.sinceTimestamp,
    untilTimestamp: input.untilTimestamp,
    requestedWindow: operation?.metadata.requestedWindow === true,
  });
  const selection = readSelection(setup.declared, setup.configured);
  const context: ReadMessageContext = {
    action: 'read',
    projectId: installation.projectId,
    provider: parties.connection.provider,
    ...(parties.connection.providerWorkspaceRef && { workspace: parties.connection.providerWorkspaceRef }),
    groupRef: parties.group.groupRef,
    groupName: parties.group.groupName,
    consumerRef: parties.consumer.consumerRef,
    consumerName: parties.consumer.consumerName,
    installationId: installation.id,
    installationUpdateTime: installation.updateTime.toISOString(),
    objectName: setup.declared.mapToName ?? input.objectName,
    rawObjectName: input.objectName,
    operationId: input.operationId,
    operationTime: (operation?.createTime ?? now).toISOString(),
    readType: input.readType,
  };
  const fields = providerFields(selection);
  return {
    projectId: installation.projectId,
    integrationId: installation.integrationId,
    installationId: installation.id,
    connectionId: installation.connectionId,
    provider: parties.connection.provider,
    objectName: input.objectName,
    readType: input.readType,
    ...(window.since && { since: window.since.toISOString() }),
    until: window.until.toISOString(),
    advancesWatermark: window.advancesWatermark,
    ...(fields && { fields }),
    selection,
    pageSize: setup.declared.delivery?.pageSize ?? DEFAULT_DELIVERY_PAGE_SIZE,
    deliveryMode: setup.declared.delivery?.mode === 'onRequest' ? 'onRequest' : 'auto',
    destinationId: destination.id,
    destinationName: destination.name,
    context,
    eventBase: { ...installationEventBase(installation, parties), objectName: input.objectName },
    ...((input.readType === 'triggered' || operation?.metadata.requestedWindow === true) && {
      requested: { sinceTimestamp: input.sinceTimestamp, untilTimestamp: input.untilTimestamp },
    }),
  };
}

/** How many records the window holds, when the provider can say; a failure here never stops the read. */
async function estimate(plan: ReadPlan, logs: LogEntry[]): Promise<number | undefined> {
  try {
    const connector = await readConnector(plan.connectionId, logs);
    if (!connector.capabilities.count) return undefined;
    return await connector.estimateCount({
      objectName: plan.objectName,
      ...(plan.since && { since: new Date(plan.since) }),
      until: new Date(plan.until),
    });
  } catch (error) {
    const failure = classifyReadError(error);
    if (failure.authFailure) throw error;
    logs.push({
      severity: 'WARN',
      msg: 'Could not estimate the number of records to read.',
      error: failure.message,
    });
    return undefined;
  }
}

function describeWindow(plan: ReadPlan): string {
  const from = plan.since ? `from ${plan.since}` : 'from the beginning';
  return `${from} until ${plan.until}`;
}

export async function startRead(input: ReadObjectInput): Promise<StartedRead> {
  const em = await newEntityManager();
  const existing = await em.findOne(ReadCheckpointEntity, { operationId: input.operationId });
  if (existing) {
    const plan = existing.plan as unknown as ReadPlan;
    const operation = await em.findOne(OperationEntity, { id: input.operationId });
    const progress = operation?.metadata.progress as OperationProgress | undefined;
    return started(plan, true, progress?.recordsEstimatedTotal);
  }
  const now = new Date();
  const plan = await buildPlan(em, input, now);
  const logs: LogEntry[] = [];
  const recordsEstimatedTotal = await estimate(plan, logs);
  const progress: OperationProgress = {
    installationId: plan.installationId,
    objectName: plan.objectName,
    operationId: input.operationId,
    recordsProcessed: 0,
    ...(recordsEstimatedTotal !== undefined && { recordsEstimatedTotal }),
  };
  const metadata = {
    objects: [plan.objectName],
    readType: plan.readType,
    // A triggered read without `sinceTimestamp` reads the whole history: it counts as a backfill.
    backfill: plan.readType === 'backfill' || (plan.readType === 'triggered' && !plan.since),
    window: { ...(plan.since && { since: plan.since }), until: plan.until },
    destination: plan.destinationName,
    progress,
    // Run by the installation's workflow rather than a workflow of its own (until handed over).
    ...(input.inline && { inline: true }),
  };
  await em.transactional(async (tx) => {
    const installation = await tx.findOneOrFail(InstallationEntity, { id: plan.installationId });
    const operation = await tx.findOne(OperationEntity, { id: input.operationId });
    if (operation) {
      operation.metadata = { ...operation.metadata, ...metadata };
    } else {
      createReadOperation(tx, installation, {
        operationId: input.operationId,
        objectName: plan.objectName,
        readType: plan.readType,
        metadata,
      });
    }
    tx.persist(
      tx.create(ReadCheckpointEntity, {
        operationId: input.operationId,
        projectId: plan.projectId,
        installationId: plan.installationId,
        objectName: plan.objectName,
        plan: plan as unknown as Record<string, unknown>,
        pageIndex: 0,
        partsDelivered: 0,
        recordsProcessed: 0,
        done: false,
        createTime: now,
        updateTime: now,
      }),
    );
    appendLogs(tx, plan.projectId, input.operationId, [
      {
        severity: 'INFO',
        msg: `Started ${plan.readType} read of ${plan.objectName} ${describeWindow(plan)}, delivering to destination "${plan.destinationName}".`,
        details: {
          readType: plan.readType,
          window: metadata.window,
          ...(recordsEstimatedTotal !== undefined && { recordsEstimatedTotal }),
          deliveryMode: plan.deliveryMode,
          pageSize: plan.pageSize,
        },
        timestamp: now,
      },
      ...logs,
    ]);
    await tx.flush();
    await followLatestOperation(tx, installation.id);
  });
  // Once, when the read has begun: how late a scheduled read or backfill started after its planned fire.
  if (input.plannedAt && input.readType !== 'triggered') {
    const late = (now.getTime() - Date.parse(input.plannedAt)) / 1000;
    if (Number.isFinite(late)) scheduleLateness.observe({ read_type: input.readType }, Math.max(0, late));
  }
  return started(plan, false, recordsEstimatedTotal);
}
