import { SubscriptionEntity, type Subscription } from '../../db/entities/subscription.js';
import { InstallationEntity } from '../../db/entities/installation.js';
import { em as newEntityManager, transaction } from '../../db/orm.js';
import { encryptSecret } from '../../crypto/secrets.js';
import { connectorDeclaration } from '../../providers/catalog/index.js';
import { connectorFor } from '../../providers/connectors/index.js';
import type { Connector } from '../../providers/connector.js';
import { describeError, ProviderError } from '../../providers/errors.js';
import type { SubscribeConfig } from '../../schemas/installations.js';
import type { RecordChangeType } from '../../schemas/write.js';
import { connectionTarget } from '../credentials.js';
import { appendLogs, type LogEntry } from '../operation-logs.js';
import { createOperation, followLatestOperation } from '../operations.js';
import { requestLog } from '../reads/connector.js';

/**
 * Provider subscriptions that expire (Microsoft Graph's, Jira's dynamic webhooks) are renewed before
 * they do. The expiry is kept on the subscription row; the installation's workflow holds one timer
 * to the earliest renewal and runs `renewDueSubscriptions` when it fires. A timer in the workflow,
 * rather than a periodic scan, because Temporal keeps it across worker restarts and deploys, each
 * installation wakes alone when it is due (no pass over every installation, and none that waits
 * for one worker's turn), and the renewal is an activity with Temporal's retries.
 */

export interface RenewalSettings {
  /** How long before it expires a subscription is renewed. */
  leadMs: number;
  /** Ferry's public API origin, for a subscription made again. */
  publicApiUrl: string;
}

/** A renewal is never planned sooner than this after now, so a lead longer than the lifetime cannot spin. */
const MIN_RENEWAL_GAP_MS = 1000;

/** When the earliest of these expiries should be renewed: `leadMs` before it, at the soonest a moment from now. */
export function nextRenewalAt(
  expiries: readonly (Date | undefined)[],
  leadMs: number,
  now: Date,
): Date | undefined {
  const times = expiries.filter((time): time is Date => time !== undefined).map((time) => time.getTime());
  if (!times.length) return undefined;
  return new Date(Math.max(Math.min(...times) - leadMs, now.getTime() + MIN_RENEWAL_GAP_MS));
}

/** Whether a subscription expiring at `expiresAt` is due for renewal now. */
export function renewalDue(expiresAt: Date | undefined, leadMs: number, now: Date): boolean {
  return expiresAt !== undefined && expiresAt.getTime() - leadMs <= now.getTime();
}

/** The record changes an object's subscription listens to; all three when the config names none. */
export function subscribedEvents(object: SubscribeConfig): RecordChangeType[] {
  const events: RecordChangeType[] = [];
  if (object.createEvent) events.push('create');
  if (object.updateEvent) events.push('update');
  if (object.deleteEvent) events.push('delete');
  return events.length ? events : ['create', 'update', 'delete'];
}

/** Where the provider posts a subscription's events: `/v1/webhooks/providers/{provider}/{id}`. */
export function subscriptionWebhookUrl(
  publicApiUrl: string,
  provider: string,
  subscriptionId: string,
): string {
  return `${publicApiUrl}/v1/webhooks/providers/${encodeURIComponent(provider)}/${subscriptionId}`;
}

/**
 * When a subscription expires: as kept, or, for one made before expiries were kept (Jira's webhooks
 * registered earlier), the declared lifetime after it was last registered, which is when its row
 * last changed (every change registers it again).
 */
export function expiryOf(row: Subscription): Date | undefined {
  if (row.expiresAt) return row.expiresAt;
  const lifetimeSeconds = connectorDeclaration(row.provider)?.webhooks?.renewal?.lifetimeSeconds;
  return lifetimeSeconds === undefined
    ? undefined
    : new Date(row.updateTime.getTime() + lifetimeSeconds * 1000);
}

/** The installation's next renewal, from the expiries of its subscriptions. */
export async function installationRenewalAt(
  installationId: string,
  leadMs: number,
  now = new Date(),
): Promise<Date | undefined> {
  const rows = await (await newEntityManager()).find(SubscriptionEntity, { installationId });
  return nextRenewalAt(rows.map(expiryOf), leadMs, now);
}

export interface RenewalPass {
  renewed: number;
  /** Subscriptions whose renewal failed, with why; each has a failed operation. */
  failed: { objectName: string; error: string }[];
  /** The installation's next renewal, from the expiries kept now. */
  renewAt?: Date;
}

/**
 * Renews each of the installation's subscriptions that is due. Each renewal is an operation
 * (`actionType: subscribe`, `metadata.renewal`) with the provider requests in its logs, so a
 * failure is visible where the builder looks. One the provider no longer knows (a 404: it expired or
 * was removed) is made again at the same URL, so events keep coming.
 */
export async function renewDueSubscriptions(
  installationId: string,
  settings: RenewalSettings,
  now = new Date(),
  all = false,
): Promise<RenewalPass> {
  const em = await newEntityManager();
  const installation = await em.findOne(InstallationEntity, { id: installationId });
  if (!installation) return { renewed: 0, failed: [] };
  const rows = await em.find(SubscriptionEntity, { installationId });
  const due = rows.filter((row) =>
    all ? expiryOf(row) !== undefined : renewalDue(expiryOf(row), settings.leadMs, now),
  );
  const failed: RenewalPass['failed'] = [];
  let renewed = 0;
  for (const row of due) {
    const logs: LogEntry[] = [];
    const connector = connectorFor(await connectionTarget(installation.connectionId), {
      onRequest: (entry) => logs.push(requestLog(entry)),
    });
    const before = expiryOf(row);
    let error: string | undefined;
    try {
      await renewOne(connector, row, settings, logs);
      renewed++;
    } catch (caught) {
      error = describeError(caught);
      failed.push({ objectName: row.objectName, error });
      logs.push({ severity: 'ERROR', msg: `The renewal failed: ${error}`, error });
    }
    await transaction(async (tx) => {
      const operation = createOperation(tx, {
        projectId: installation.projectId,
        integrationId: installation.integrationId,
        installationId,
        configId: installation.configId,
        actionType: 'subscribe',
        metadata: {
          objects: [row.objectName],
          subscribeEventType: 'renewal',
          providerEventType: '',
          recordId: '',
          subscriptionId: row.id,
          providerEventId: '',
          destination: typeof row.config.destination === 'string' ? row.config.destination : '',
          destinationId: '',
          renewal: {
            ...(before && { previousExpiresAt: before.toISOString() }),
            ...(!error && row.expiresAt && { expiresAt: row.expiresAt.toISOString() }),
          },
        },
      });
      operation.status = error ? 'failure' : 'success';
      operation.result = error
        ? `The ${row.objectName} subscription could not be renewed: ${error}`
        : `The ${row.objectName} subscription was renewed until ${row.expiresAt?.toISOString()}.`;
      tx.persist(operation);
      appendLogs(tx, installation.projectId, operation.id, [
        {
          severity: 'INFO',
          msg: `Renewing the ${row.objectName} subscription, which expires ${before?.toISOString()}.`,
        },
        ...logs,
      ]);
      await tx.flush();
      await followLatestOperation(tx, installationId);
    });
  }
  const kept = await (await newEntityManager()).find(SubscriptionEntity, { installationId });
  const renewAt = nextRenewalAt(kept.map(expiryOf), settings.leadMs, new Date());
  return { renewed, failed, ...(renewAt && { renewAt }) };
}

/** Extends one subscription, or makes it again when the provider no longer has it; keeps the new expiry. */
async function renewOne(
  connector: Connector,
  row: Subscription,
  settings: RenewalSettings,
  logs: LogEntry[],
): Promise<void> {
  let expiresAt: string | undefined;
  let made: Awaited<ReturnType<Connector['subscribe']>> | undefined;
  try {
    expiresAt = await connector.renewSubscription(row.providerSubscriptionId);
  } catch (error) {
    if (!(error instanceof ProviderError && error.isNotFound)) throw error;
    logs.push({
      severity: 'WARN',
      msg: `The provider no longer has subscription ${row.providerSubscriptionId}: it is made again.`,
    });
    made = await connector.subscribe({
      objectName: row.objectName,
      events: subscribedEvents(row.config as SubscribeConfig),
      webhookUrl: subscriptionWebhookUrl(settings.publicApiUrl, connector.provider, row.id),
    });
    expiresAt = made.expiresAt;
  }
  await transaction(async (tx) => {
    const current = await tx.findOne(SubscriptionEntity, { id: row.id });
    if (!current) return; // removed meanwhile: nothing to keep
    if (made) {
      current.providerSubscriptionId = made.subscriptionId;
      if (made.secret) current.secretEncrypted = encryptSecret(made.secret);
    }
    current.expiresAt = expiresAt ? new Date(expiresAt) : undefined;
  });
  row.expiresAt = expiresAt ? new Date(expiresAt) : undefined;
}
