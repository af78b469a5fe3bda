import { InstallationEntity } from '../../db/entities/installation.js';
import { DestinationEntity, OperationEntity } from '../../db/entities/operation.js';
import { SubscriptionEntity } from '../../db/entities/subscription.js';
import { SubscriptionEventEntity, type SubscriptionEvent } from '../../db/entities/subscription-event.js';
import { em as newEntityManager, transaction } from '../../db/orm.js';
import {
  MAX_MESSAGE_BYTES,
  buildResultMessage,
  stableMessageId,
  type SubscribeResultEntry,
} from '../../delivery/messages.js';
import { fieldMapper, type FieldSelection } from '../../delivery/record-mapping.js';
import type { IncomingProviderEvent } from '../../providers/connector.js';
import { connectorFor } from '../../providers/connectors/index.js';
import { connectionTarget } from '../credentials.js';
import type { SingleMessageOutcome } from '../../delivery/single-message.js';
import { attemptDelivery, type DeliverySettings } from '../destination-delivery.js';
import { inheritsFieldsAndMappings } from '../installations/config-validation.js';
import { currentConfig } from '../installations/event-data.js';
import { appendLogs, type LogEntry } from '../operation-logs.js';
import { createOperation, followLatestOperation } from '../operations.js';
import { installationParties, readObjectSetup, resultMessageContext } from '../reads/installation-context.js';
import { readSelection } from '../reads/plan.js';
import { unwatchedReason, type SubscribeEventType } from './watch.js';
import { objectNameOf, subscribeMetadataOf } from '../operation-metadata.js';

/**
 * Delivering one change event a provider sent: the message is built once (the record fetched from
 * the provider when the event names only its id; fields and mappings as the installation selected),
 * recorded as a subscribe operation, and sent through the same signed, durable delivery as reads.
 */

/** Thrown while the event's row is not visible yet (the webhook's transaction has not committed). */
export class SubscriptionEventNotFoundError extends Error {}

export interface PreparedSubscriptionEvent {
  operationId?: string;
  skippedReason?: string;
}

async function loadEvent(subscriptionEventId: string): Promise<SubscriptionEvent> {
  const row = await (await newEntityManager()).findOne(SubscriptionEventEntity, { id: subscriptionEventId });
  if (!row)
    throw new SubscriptionEventNotFoundError(
      `Change event ${subscriptionEventId} is not in the database (yet).`,
    );
  return row;
}

async function skip(subscriptionEventId: string, reason: string): Promise<PreparedSubscriptionEvent> {
  await transaction(async (tx) => {
    await tx.nativeUpdate(SubscriptionEventEntity, { id: subscriptionEventId }, { skippedReason: reason });
  });
  return { skippedReason: reason };
}

/** The fields to deliver: the read object's selection and mappings when the config inherits them, else all. */
async function selectionOf(
  installation: Parameters<typeof readObjectSetup>[1],
  objectName: string,
  inherit: boolean | undefined,
): Promise<{ selection: FieldSelection; mappedName?: string }> {
  if (!inherit) return { selection: { allFields: true } };
  const setup = await readObjectSetup(await newEntityManager(), installation, objectName);
  if (!setup) return { selection: { allFields: true } };
  return { selection: readSelection(setup.declared, setup.configured), mappedName: setup.declared.mapToName };
}

/** Builds the event's message and its operation, once; a second call answers what the first did. */
export async function prepareSubscriptionEvent(
  subscriptionEventId: string,
): Promise<PreparedSubscriptionEvent> {
  const row = await loadEvent(subscriptionEventId);
  if (row.operationId || row.skippedReason)
    return { operationId: row.operationId, skippedReason: row.skippedReason };
  const em = await newEntityManager();
  const [subscription, installation] = await Promise.all([
    em.findOne(SubscriptionEntity, { id: row.subscriptionId }),
    em.findOne(InstallationEntity, { id: row.installationId }),
  ]);
  if (!subscription || !installation)
    return skip(row.id, 'the installation or its subscription no longer exists');
  const content = (await currentConfig(em, installation)).content;
  const subscribed = content.subscribe?.objects?.[subscription.objectName];
  if (!subscribed) return skip(row.id, `${subscription.objectName} is no longer subscribed`);
  const event = row.event as unknown as IncomingProviderEvent;
  const unwatched = unwatchedReason(subscribed, event);
  if (unwatched) return skip(row.id, unwatched);
  const destination = await em.findOne(DestinationEntity, {
    projectId: installation.projectId,
    name: subscribed.destination,
  });
  if (!destination) return skip(row.id, `destination "${subscribed.destination}" does not exist`);

  const logs: LogEntry[] = [];
  let record = event.record;
  let values: Record<string, unknown> | undefined;
  if (!record && event.eventType !== 'delete' && event.eventType !== 'other') {
    // The provider sent only the record's id: read the record as it is now.
    const connector = connectorFor(await connectionTarget(installation.connectionId));
    const fetched = await connector.readRecord(event.objectName, event.recordId);
    record = fetched?.raw;
    values = fetched?.values;
    logs.push({
      severity: fetched ? 'INFO' : 'WARN',
      msg: fetched
        ? `Read ${event.objectName} ${event.recordId} from the provider: the event carried only its id.`
        : `The provider has no ${event.objectName} ${event.recordId} any more; delivering the event without it.`,
    });
  }
  const { selection, mappedName } = await selectionOf(
    installation,
    subscription.objectName,
    inheritsFieldsAndMappings(subscribed),
  );
  const parties = await installationParties(em, installation);
  const mapped = fieldMapper(selection)(record ?? {}, values);
  const entry: SubscribeResultEntry = {
    ...mapped,
    subscribeEventType: event.eventType as SubscribeEventType,
    providerEventType: event.providerEventType,
    rawEvent: event.rawEvent,
    ...(event.fieldsUpdated && { fieldsUpdated: event.fieldsUpdated }),
    // The public message shape (COMPAT.md) names the id on deletions only, where nothing else says
    // which record it was; strict clients of that shape refuse an unexpected member elsewhere.
    ...((event.eventType === 'delete' || !record) && event.recordId && { id: event.recordId }),
  };
  const message = buildResultMessage(
    resultMessageContext(installation, parties, {
      action: 'subscribe',
      objectName: subscription.objectName,
      mapToName: mappedName,
      operationTime: event.occurredAt ?? row.createTime.toISOString(),
    }),
    [entry],
  );
  let body = JSON.stringify(message);
  if (Buffer.byteLength(body) > MAX_MESSAGE_BYTES) {
    // Too large for one message even alone: the raw event goes, the record's fields stay.
    body = JSON.stringify({ ...message, result: [{ ...entry, rawEvent: undefined }] });
    logs.push({ severity: 'WARN', msg: 'The raw event was left out: the message was over 300 KB with it.' });
  }

  return transaction(async (tx) => {
    const fresh = await tx.findOneOrFail(SubscriptionEventEntity, { id: row.id });
    if (fresh.operationId) return { operationId: fresh.operationId };
    const operation = createOperation(tx, {
      projectId: installation.projectId,
      integrationId: installation.integrationId,
      installationId: installation.id,
      configId: installation.configId,
      actionType: 'subscribe',
      metadata: {
        objects: [subscription.objectName],
        subscribeEventType: event.eventType,
        providerEventType: event.providerEventType,
        recordId: event.recordId,
        subscriptionId: subscription.id,
        providerEventId: row.providerEventId,
        destination: destination.name,
        destinationId: destination.id,
      },
    });
    tx.persist(operation);
    fresh.operationId = operation.id;
    fresh.message = body;
    await tx.nativeUpdate(
      InstallationEntity,
      { id: installation.id },
      { lastOperationStatus: 'in_progress' },
    );
    appendLogs(tx, installation.projectId, operation.id, [
      {
        severity: 'INFO',
        msg: `Received ${event.providerEventType} (${event.eventType}) of ${subscription.objectName} ${event.recordId}; delivering to destination "${destination.name}".`,
        details: {
          providerEventId: row.providerEventId,
          ...(event.fieldsUpdated && { fieldsUpdated: event.fieldsUpdated }),
        },
      },
      ...logs,
    ]);
    return { operationId: operation.id };
  });
}

export type SubscriptionAttemptOutcome = SingleMessageOutcome;

/** One attempt to deliver the event's message; every attempt carries the same id and bytes. */
export async function attemptSubscriptionDelivery(
  subscriptionEventId: string,
  attempt: number,
  settings: DeliverySettings,
): Promise<SubscriptionAttemptOutcome> {
  const row = await loadEvent(subscriptionEventId);
  const operation = await (await newEntityManager()).findOneOrFail(OperationEntity, { id: row.operationId! });
  return attemptDelivery(
    {
      projectId: row.projectId,
      destinationId: subscribeMetadataOf(operation.metadata).destinationId,
      messageId: stableMessageId('subscribe', row.id),
      body: row.message!,
      kind: 'record',
      operationId: operation.id,
    },
    settings,
    { attempt },
  );
}

/** Ends the event's operation; finishing it again changes nothing. */
export async function finishSubscriptionEvent(
  subscriptionEventId: string,
  outcome: { delivered: boolean; attempts: number; error?: string },
): Promise<void> {
  const row = await loadEvent(subscriptionEventId);
  if (!row.operationId) return;
  await transaction(async (tx) => {
    const operation = await tx.findOne(OperationEntity, { id: row.operationId! });
    if (!operation || operation.status !== 'in_progress') return;
    const metadata = subscribeMetadataOf(operation.metadata);
    const what = `${metadata.subscribeEventType} of ${objectNameOf(metadata)} ${metadata.recordId}`;
    operation.status = outcome.delivered ? 'success' : 'failure';
    operation.result = outcome.delivered
      ? `Delivered the ${what} to destination "${metadata.destination}".`
      : `Could not deliver the ${what}: ${outcome.error ?? 'unknown error'}`;
    operation.updateTime = new Date();
    await tx.flush();
    await followLatestOperation(tx, row.installationId);
    appendLogs(tx, row.projectId, operation.id, [
      outcome.delivered
        ? { severity: 'INFO', msg: operation.result, details: { attempts: outcome.attempts } }
        : {
            severity: 'ERROR',
            msg: operation.result,
            error: outcome.error,
            details: { attempts: outcome.attempts },
          },
    ]);
  });
}
