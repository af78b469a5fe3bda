import type { EntityManager } from '@mikro-orm/postgresql';
import type { Installation } from '../../db/entities/installation.js';
import { OperationEntity, type Destination } from '../../db/entities/operation.js';
import { ReadCheckpointEntity } from '../../db/entities/read-checkpoint.js';
import { em as newEntityManager } from '../../db/orm.js';
import { scheduleLateness } from '../../metrics.js';
import type { ReadMessageContext } from '../../delivery/messages.js';
import type { ReadObjectInput } from '../../temporal/contracts/read.js';
import { appendLogs, type LogEntry } from '../operation-logs.js';
import { followLatestOperation, type OperationProgress } from '../operations.js';
import { createReadOperation } from './read-operation.js';
import { amendMetadata, readMetadataOf } from '../operation-metadata.js';
import type { ReadOperationMetadata } from '../../schemas/operation-metadata.js';
import { readConnector } from './connector.js';
import { changeTrackingFor } from '../../providers/connectors/index.js';
import { classifyReadError, ReadSetupError } from './failures.js';
import type { ReadSettings } from './read-settings.js';
import { memoryOf } from './change-window.js';
import { installationEventBase, objectSetupOf, resultMessageContext } from './installation-context.js';
import { findDestinationByName, loadReadContext } from './read-context.js';
import {
  DEFAULT_DELIVERY_PAGE_SIZE,
  providerFields,
  readSelection,
  readPlanOf,
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

function started(plan: ReadPlan, settings: ReadSettings, resumed: boolean, estimate?: number): StartedRead {
  return {
    pageSize: plan.pageSize,
    deliveryMode: plan.deliveryMode,
    ...(estimate !== undefined && { recordsEstimatedTotal: estimate }),
    resumed,
    retryScheduleMs: [...settings.delivery.retryScheduleMs],
  };
}

export interface PlannedRead {
  plan: ReadPlan;
  installation: Installation;
  destination: Destination;
  /** The operation was recorded before the read began (a triggered read): it is updated, not made. */
  recorded: boolean;
  /** The operation's status, result and records so far, when it was recorded. */
  operation?: { status: string; result?: string; recordsProcessed: number };
  /** The read began before: its checkpoint holds the plan it began with. */
  checkpointed: boolean;
  /** When the plan was made: the read's start. */
  now: Date;
}

/** The plan of a read that has not begun, from the installation's current config; writes nothing. */
export async function planRead(
  em: EntityManager,
  input: ReadObjectInput,
  settings: ReadSettings,
): Promise<PlannedRead> {
  const now = new Date();
  const parties = await loadReadContext(em, input);
  if (!parties) throw new ReadSetupError(`Installation ${input.installationId} no longer exists.`);
  const { installation, operation } = parties;
  const setup = objectSetupOf(parties.config, parties.revision, input.objectName);
  if (!setup) throw new ReadSetupError(`The installation does not read object "${input.objectName}".`);
  const destination = await findDestinationByName(em, installation.projectId, setup.destinationName);
  if (!destination) {
    throw new ReadSetupError(
      `Destination "${setup.destinationName}" of object "${input.objectName}" does not exist in the project.`,
    );
  }
  const tracking = changeTrackingFor(parties.connection.provider, input.objectName);
  const window = readWindow({
    readType: input.readType,
    now,
    position: parties.position,
    ...(tracking && { tracking }),
    installationCreateTime: installation.createTime,
    backfill: setup.configured?.backfill ?? setup.declared.backfill,
    sinceTimestamp: input.sinceTimestamp,
    untilTimestamp: input.untilTimestamp,
    requestedWindow: operation?.metadata.requestedWindow === true,
  });
  const selection = readSelection(setup.declared, setup.configured);
  const context: ReadMessageContext = {
    ...resultMessageContext(installation, parties, {
      action: 'read',
      objectName: input.objectName,
      mapToName: setup.declared.mapToName,
      operationTime: (operation?.createTime ?? now).toISOString(),
    }),
    action: 'read',
    operationId: input.operationId,
    readType: input.readType,
  };
  const fields = providerFields(selection);
  // A full read walks the whole listing whatever the read asked for: its window is all of history.
  const fullRead = tracking?.fullRead === true;
  if (fullRead) Object.assign(window, { since: undefined, advancesWatermark: true });
  // Deletions matter to a copy kept in step: scheduled reads and windowed triggered ones deliver
  // them where the provider reveals them, unless the manifest asks for live records only.
  const deletedSince =
    tracking &&
    !fullRead &&
    tracking.deletions !== 'none' &&
    setup.declared.delivery?.deletions !== false &&
    window.since &&
    (input.readType === 'scheduled' || input.readType === 'triggered')
      ? (window.deletedSince ?? window.since)
      : undefined;
  const plan: ReadPlan = {
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
    ...(window.resumeFrom !== undefined && { resumeFrom: window.resumeFrom }),
    ...(deletedSince && { deletedSince: deletedSince.toISOString() }),
    ...(fullRead && {
      fingerprints: {
        changedOnly: input.readType === 'scheduled',
        inferDeletions: input.readType === 'scheduled' && setup.declared.delivery?.deletions !== false,
      },
    }),
    ...(input.readType === 'scheduled' && !fullRead && { dedupe: true }),
    ...(tracking ? memoryOf(tracking) : { overlapMs: 0, deletionsOverlapMs: 0 }),
    ...(fields && { fields }),
    selection: {
      ...(selection.allFields !== undefined && { allFields: selection.allFields }),
      ...(selection.requiredFields && { requiredFields: [...selection.requiredFields] }),
      ...(selection.selectedFields && { selectedFields: { ...selection.selectedFields } }),
      ...(selection.selectedFieldMappings && {
        selectedFieldMappings: { ...selection.selectedFieldMappings },
      }),
      ...(selection.fieldMappings && { fieldMappings: { ...selection.fieldMappings } }),
    },
    pageSize: setup.declared.delivery?.pageSize ?? DEFAULT_DELIVERY_PAGE_SIZE,
    ...(settings.readProviderPageSize !== undefined && { providerPageSize: settings.readProviderPageSize }),
    deliveryMode: setup.declared.delivery?.mode === 'onRequest' ? 'onRequest' : 'auto',
    destinationId: destination.id,
    destinationName: destination.name,
    context,
    eventBase: { ...installationEventBase(installation, parties), objectName: input.objectName },
    ...((input.readType === 'triggered' || operation?.metadata.requestedWindow === true) && {
      requested: { sinceTimestamp: input.sinceTimestamp, untilTimestamp: input.untilTimestamp },
    }),
  };
  return {
    plan,
    installation,
    destination,
    recorded: Boolean(operation),
    ...(operation && {
      operation: {
        status: operation.status,
        result: operation.result,
        recordsProcessed: operation.metadata.progress?.recordsProcessed ?? 0,
      },
    }),
    checkpointed: parties.checkpointed,
    now,
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

function planWindow(plan: ReadPlan): { since?: string; until: string } {
  return { ...(plan.since && { since: plan.since }), until: plan.until };
}

/** What a read's operation records of its plan (with `progress` at zero records). */
export function readMetadata(
  input: ReadObjectInput,
  plan: ReadPlan,
  recordsEstimatedTotal?: number,
): ReadOperationMetadata & { window: { since?: string; until: string } } {
  const progress: OperationProgress = {
    installationId: plan.installationId,
    objectName: plan.objectName,
    operationId: input.operationId,
    recordsProcessed: 0,
    ...(recordsEstimatedTotal !== undefined && { recordsEstimatedTotal }),
  };
  return {
    objects: [plan.objectName],
    readType: plan.readType,
    // A triggered read without `sinceTimestamp` reads the whole history: it counts as a backfill.
    backfill: plan.readType === 'backfill' || (plan.readType === 'triggered' && !plan.since),
    window: planWindow(plan),
    destination: plan.destinationName,
    progress,
    // Run by the installation's workflow rather than a workflow of its own (until handed over).
    ...(input.inline && { inline: true }),
  };
}

/** The read's first log line: what it reads and where it delivers. */
export function startedLog(plan: ReadPlan, now: Date, recordsEstimatedTotal?: number): LogEntry {
  return {
    severity: 'INFO',
    msg: `Started ${plan.readType} read of ${plan.objectName} ${describeWindow(plan)}, delivering to destination "${plan.destinationName}".`,
    details: {
      readType: plan.readType,
      window: planWindow(plan),
      ...(recordsEstimatedTotal !== undefined && { recordsEstimatedTotal }),
      deliveryMode: plan.deliveryMode,
      pageSize: plan.pageSize,
    },
    timestamp: now,
  };
}

/** Once, when a read has begun: how late a scheduled read or backfill started after its planned fire. */
export function observeLateness(input: ReadObjectInput, now: Date): void {
  if (!input.plannedAt || input.readType === 'triggered') return;
  const late = (now.getTime() - Date.parse(input.plannedAt)) / 1000;
  if (Number.isFinite(late)) scheduleLateness.observe({ read_type: input.readType }, Math.max(0, late));
}

/**
 * Records the read as begun. `planned`, when given, is the plan `planRead` made for this read (the
 * inline read fetched its first page with it); otherwise a read with a checkpoint resumes as it
 * stood and one without is planned now.
 */
export async function startRead(
  input: ReadObjectInput,
  settings: ReadSettings,
  planned?: PlannedRead,
): Promise<StartedRead> {
  const em = await newEntityManager();
  if (!planned) {
    const existing = await em.findOne(ReadCheckpointEntity, { operationId: input.operationId });
    if (existing) {
      const plan = readPlanOf(existing.plan);
      const operation = await em.findOne(OperationEntity, { id: input.operationId });
      const progress = operation && readMetadataOf(operation.metadata).progress;
      return started(plan, settings, true, progress?.recordsEstimatedTotal);
    }
  }
  const { plan, installation, recorded, now } = planned ?? (await planRead(em, input, settings));
  const logs: LogEntry[] = [];
  const recordsEstimatedTotal = await estimate(plan, logs);
  const metadata = readMetadata(input, plan, recordsEstimatedTotal);
  await em.transactional(async (tx) => {
    const operation = recorded ? await tx.findOne(OperationEntity, { id: input.operationId }) : null;
    if (operation) {
      amendMetadata(operation, 'read', metadata);
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
        plan,
        pageIndex: 0,
        partsDelivered: 0,
        recordsProcessed: 0,
        done: false,
        createTime: now,
        updateTime: now,
      }),
    );
    appendLogs(tx, plan.projectId, input.operationId, [
      startedLog(plan, now, recordsEstimatedTotal),
      ...logs,
    ]);
    await tx.flush();
    await followLatestOperation(tx, installation.id);
  });
  observeLateness(input, now);
  return started(plan, settings, false, recordsEstimatedTotal);
}
