import { TtlCache } from '../../core/ttl-cache.js';
import { createHash, randomUUID } from 'node:crypto';
import { isUuid } from '../../core/ids.js';
import { jsonInputProblem } from '../../core/input-limits.js';
import { ProblemError } from '../../core/problem.js';
import { decryptSecret } from '../../crypto/secrets.js';
import { ConnectionEntity, ProviderAppEntity } from '../../db/entities/connection.js';
import { InstallationEntity, type Installation } from '../../db/entities/installation.js';
import { SubscriptionEntity, type Subscription } from '../../db/entities/subscription.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { em as newEntityManager, transaction } from '../../db/orm.js';
import { logger } from '../../logger.js';
import type { IncomingProviderEvent } from '../../providers/connector.js';
import { connectorDeclaration } from '../../providers/catalog/index.js';
import { connectorFor } from '../../providers/connectors/index.js';
import { CapabilityNotSupportedError, WebhookVerificationError } from '../../providers/errors.js';
import {
  signalInstallation,
  startSubscriptionEventDelivery,
  type WorkflowIdentity,
} from '../../temporal/gateway.js';
import { renewSubscriptionsSignal } from '../../temporal/contracts/installation.js';
import { renewalNotices } from '../../providers/declarative/webhooks.js';
import { runIdentityOf } from '../installations/workflow.js';
import { providerAppSecret } from '../provider-apps.js';

/**
 * What a provider posts to `/v1/webhooks/providers/{provider}/{subscriptionId}`: the signature is
 * checked with the subscription's secret before anything is kept; each verified event is kept once
 * (a redelivered event id changes nothing) and handed to its own delivery workflow before the
 * provider hears 200, so an accepted event is never lost. Temporal unreachable: 503, and the
 * provider sends it again later.
 */

export interface InboundWebhook {
  provider: string;
  subscriptionId: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  /** The method and URL it came in, for signatures over them. */
  request?: { method: string; uri: string };
}

export interface InboundResult {
  received: number;
  duplicates: number;
}

interface KnownSubscription {
  row: Subscription;
  secret: string;
  identity: WorkflowIdentity;
}

/** Subscriptions by id, kept a short while: a busy webhook (or a flood) does not read the database per request. */
const KNOWN_FOR_MS = 30_000;
const KNOWN_MAX = 5_000;
const known = new TtlCache<string, KnownSubscription>(KNOWN_FOR_MS, KNOWN_MAX);

async function subscriptionOf(
  subscriptionId: string,
  provider: string,
  fresh = false,
): Promise<KnownSubscription | undefined> {
  const now = Date.now();
  const cached = fresh ? undefined : known.get(subscriptionId, now);
  if (cached) return cached.row.provider === provider ? cached : undefined;
  if (!isUuid(subscriptionId)) return undefined;
  const em = await newEntityManager();
  const row = await em.findOne(SubscriptionEntity, { id: subscriptionId });
  if (!row) return undefined;
  const installation = await em.findOne(InstallationEntity, { id: row.installationId });
  if (!installation) return undefined;
  const secret = await signingSecretOf(em, row, installation);
  if (!secret) return undefined;
  const entry = { row, secret, identity: await runIdentityOf(em, installation) };
  known.set(subscriptionId, entry, now);
  return row.provider === provider ? entry : undefined;
}

/**
 * What keys a subscription's signatures: its own secret, or (as the declaration says) the client
 * secret of the provider app its connection was made through (Shopify, Jira to OAuth 2.0 apps).
 */
async function signingSecretOf(
  em: EntityManager,
  row: Subscription,
  installation: Installation,
): Promise<string | undefined> {
  if (connectorDeclaration(row.provider)?.webhooks?.signingKey !== 'appClientSecret')
    return row.secretEncrypted ? decryptSecret(row.secretEncrypted) : undefined;
  const connection = await em.findOne(ConnectionEntity, { id: installation.connectionId });
  const app = connection?.providerAppId
    ? await em.findOne(ProviderAppEntity, { id: connection.providerAppId })
    : undefined;
  return app ? providerAppSecret(app) : undefined;
}

/** The provider's event id, or a digest of the event when it gives none, to keep each event once. */
function providerEventIdOf(event: IncomingProviderEvent): string {
  if (event.eventId) return event.eventId;
  const digest = createHash('sha256').update(
    JSON.stringify([event.providerEventType, event.recordId, event.rawEvent]),
  );
  return `sha256:${digest.digest('base64url')}`;
}

export async function receiveProviderWebhook(input: InboundWebhook): Promise<InboundResult> {
  let subscription = await subscriptionOf(input.subscriptionId, input.provider);
  if (!subscription) {
    throw ProblemError.notFound(
      `No subscription ${input.subscriptionId} of provider "${input.provider}" takes webhooks here.`,
    );
  }
  const verify = (entry: KnownSubscription) =>
    verifiedEvents(input.provider, input.headers, input.rawBody, entry.secret, {
      method: input.request?.method ?? 'POST',
      uri: input.request?.uri ?? '',
      objectName: entry.row.objectName,
    });
  let events: IncomingProviderEvent[];
  try {
    events = verify(subscription);
  } catch (error) {
    // The secret kept a while may be stale: a subscription made again at the provider (Graph's,
    // after it removed one) has a new one. Read once more before refusing; the route's failure
    // limit bounds how often a bad signature can cost this read.
    const current =
      error instanceof ProblemError && error.status === 401
        ? await subscriptionOf(input.subscriptionId, input.provider, true)
        : undefined;
    if (!current || current.secret === subscription.secret) throw error;
    subscription = current;
    events = verify(subscription);
  }
  const { row } = subscription;
  const kept = events.filter((event) => event.eventType === 'other' || event.objectName === row.objectName);
  const started = await keepEvents(kept.map((event) => ({ row, identity: subscription.identity, event })));
  await askForRenewal(input, row);
  logger.debug(
    { provider: input.provider, subscriptionId: row.id, received: events.length, kept: started },
    'provider webhook received',
  );
  return { received: events.length, duplicates: kept.length - started };
}

/**
 * A verified notice that the subscription needs renewing now (Graph's `reauthorizationRequired`,
 * `subscriptionRemoved`) is passed to the installation's workflow. Best effort: the notice is
 * acknowledged either way, and the planned renewal comes regardless.
 */
async function askForRenewal(input: InboundWebhook, row: Subscription): Promise<void> {
  const webhooks = connectorDeclaration(input.provider)?.webhooks;
  const [notice] = webhooks ? renewalNotices(webhooks, input.rawBody) : [];
  if (!notice) return;
  try {
    await signalInstallation(row.installationId, renewSubscriptionsSignal, { notice });
  } catch (error) {
    logger.warn({ err: error, subscriptionId: row.id, notice }, 'could not ask for a renewal');
  }
}

/** The events of a webhook whose signature checks out; a 401 problem otherwise. */
export function verifiedEvents(
  provider: string,
  headers: InboundWebhook['headers'],
  rawBody: Buffer,
  secret: string,
  request?: { method: string; uri: string; objectName?: string },
): IncomingProviderEvent[] {
  // Verification needs no credentials: only the provider's rules and the secret.
  const connector = connectorFor({ provider, templateVars: {}, auth: async () => ({ type: 'none' }) });
  try {
    return connector.verifyWebhook(headers, rawBody, secret, request);
  } catch (error) {
    if (error instanceof WebhookVerificationError || error instanceof CapabilityNotSupportedError) {
      throw ProblemError.unauthorized(`The webhook was refused: ${error.message}`);
    }
    throw error;
  }
}

/** An event for one subscription, and the workflow identity its delivery runs under. */
export interface EventForSubscription {
  row: Subscription;
  identity: WorkflowIdentity;
  event: IncomingProviderEvent;
}

/**
 * Keeps each event once per subscription and starts its delivery before the commit: if Temporal is
 * unreachable nothing is kept, and the provider retries. Answers how many were new.
 */
export async function keepEvents(entries: EventForSubscription[]): Promise<number> {
  // PostgreSQL keeps no NUL characters nor lone surrogates: such an event is refused whole, before anything is kept.
  const unstorable = entries.map(({ event }) => jsonInputProblem(event, 'body')).find(Boolean);
  if (unstorable) throw ProblemError.invalid([unstorable], 'The event cannot be kept.');
  let started: { id: string; entry: EventForSubscription }[] = [];
  await transaction(async (tx) => {
    started = [];
    for (const entry of entries) {
      const { row, event } = entry;
      const rows = await tx.execute<{ id: string }[]>(
        `insert into subscription_events (id, project_id, subscription_id, installation_id, provider_event_id, event)
         values (?, ?, ?, ?, ?, ?)
         on conflict (subscription_id, provider_event_id) do nothing
         returning id`,
        [
          randomUUID(),
          row.projectId,
          row.id,
          row.installationId,
          providerEventIdOf(event),
          JSON.stringify(event),
        ],
      );
      started.push(...rows.map((inserted) => ({ id: inserted.id, entry })));
    }
    for (const { id, entry } of started) {
      await startSubscriptionEventDelivery(
        { subscriptionEventId: id, projectId: entry.row.projectId },
        entry.identity,
      );
    }
  });
  return started.length;
}
