import { ApplicationFailure } from '@temporalio/activity';
import { config } from '../src/config.js';
import { encryptSecret } from '../src/crypto/secrets.js';
import {
  InstallationEntity,
  ReadWatermarkEntity,
  type Installation,
} from '../src/db/entities/installation.js';
import { SubscriptionEntity } from '../src/db/entities/subscription.js';
import { em as newEntityManager, transaction } from '../src/db/orm.js';
import { connectionTarget } from '../src/domain/credentials.js';
import { recordEvent } from '../src/domain/events.js';
import { failTriggeredReads } from '../src/domain/reads/finish.js';
import {
  currentConfig,
  installationEventData,
  installationEventFields,
} from '../src/domain/installations/event-data.js';
import { type Connector } from '../src/providers/connector.js';
import { connectorFor } from '../src/providers/connectors/index.js';
import { CapabilityNotSupportedError, ProviderError } from '../src/providers/errors.js';
import {
  installationRenewalAt,
  renewDueSubscriptions,
  subscribedEvents,
  subscriptionWebhookUrl,
} from '../src/domain/subscriptions/renewal.js';
import type {
  SubscriptionAction,
  SubscriptionChange,
  SubscriptionChangeResult,
  SubscriptionRenewalResult,
  SubscriptionUpsert,
} from '../src/temporal/contracts/installation.js';

/** Thrown while the installation row is not visible (not committed yet, or deleted). */
const INSTALLATION_NOT_FOUND = 'InstallationNotFound';
/** The API starts the workflow just before its commit: a new row usually appears within milliseconds. */
const COMMIT_WAIT_MS = 3000;

async function requireInstallation(installationId: string, waitMs = 0): Promise<Installation> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const installation = await (await newEntityManager()).findOne(InstallationEntity, { id: installationId });
    if (installation) return installation;
    if (Date.now() >= deadline) {
      throw ApplicationFailure.retryable(
        `Installation ${installationId} is not in the database`,
        INSTALLATION_NOT_FOUND,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Which of the named objects still need their backfill: those whose watermark does not say
 * `backfillDone` (kept in PostgreSQL by the read workflow, so it survives workflow resets).
 * Also proves the installation exists, which the workflow checks at its first start.
 */
export async function objectsNeedingBackfill(input: {
  installationId: string;
  objectNames: string[];
}): Promise<string[]> {
  await requireInstallation(input.installationId, COMMIT_WAIT_MS);
  if (!input.objectNames.length) return [];
  const done = await (
    await newEntityManager()
  ).find(ReadWatermarkEntity, {
    installationId: input.installationId,
    objectName: { $in: input.objectNames },
    backfillDone: true,
  });
  const doneNames = new Set(done.map((watermark) => watermark.objectName));
  return input.objectNames.filter((name) => !doneNames.has(name));
}

/** Fails triggered reads that will never run (`read.triggered.error`), so their operations do not stay `in_progress`. */
export async function abandonTriggeredReads(input: {
  operationIds: string[];
  reason: string;
}): Promise<void> {
  await failTriggeredReads(input.operationIds, input.reason);
}

/**
 * `read.schedule.paused`: an object stopped itself after repeated authentication failures. As the
 * public payload has it: the installation's `config`, and why as `error` (also as `reason`).
 */
export async function recordSchedulePaused(input: {
  installationId: string;
  objectName: string;
  note: string;
}): Promise<void> {
  await transaction(async (em) => {
    const installation = await em.findOne(InstallationEntity, { id: input.installationId });
    if (!installation) return;
    recordEvent(em, installation.projectId, 'read.schedule.paused', {
      ...(await installationEventData(em, installation, await currentConfig(em, installation))),
      objectName: input.objectName,
      error: input.note,
      reason: input.note,
    });
  });
}

function webhookUrl(provider: string, subscriptionId: string): string {
  return subscriptionWebhookUrl(config().publicApiUrl, provider, subscriptionId);
}

/** Failures that retrying cannot fix end the activity at once; the rest are retried by Temporal. */
function classify(error: unknown): unknown {
  if (error instanceof CapabilityNotSupportedError || (error instanceof ProviderError && !error.retryable)) {
    return ApplicationFailure.nonRetryable(error.message, error.name);
  }
  return error;
}

async function upsertSubscription(
  connector: Connector,
  installation: Installation,
  upsert: SubscriptionUpsert,
): Promise<string> {
  const existing = await (
    await newEntityManager()
  ).findOne(SubscriptionEntity, {
    installationId: installation.id,
    objectName: upsert.objectName,
  });
  const subscriptionId = existing?.id ?? upsert.subscriptionId;
  const request = {
    objectName: upsert.objectName,
    events: subscribedEvents(upsert.config),
    webhookUrl: webhookUrl(connector.provider, subscriptionId),
  };
  const made = existing
    ? await connector.updateSubscription(existing.providerSubscriptionId, request)
    : await connector.subscribe(request);
  await transaction(async (em) => {
    const row =
      (await em.findOne(SubscriptionEntity, { id: subscriptionId })) ??
      em.create(SubscriptionEntity, {
        id: subscriptionId,
        projectId: installation.projectId,
        installationId: installation.id,
        provider: connector.provider,
        objectName: upsert.objectName,
        providerSubscriptionId: made.subscriptionId,
        config: {},
        createTime: new Date(),
        updateTime: new Date(),
      });
    row.providerSubscriptionId = made.subscriptionId;
    row.config = upsert.config as Record<string, unknown>;
    if (made.secret) row.secretEncrypted = encryptSecret(made.secret);
    row.expiresAt = made.expiresAt ? new Date(made.expiresAt) : undefined;
  });
  return subscriptionId;
}

async function removeSubscription(connector: Connector, subscriptionId: string): Promise<void> {
  const row = await (await newEntityManager()).findOne(SubscriptionEntity, { id: subscriptionId });
  if (!row) return;
  await connector.deleteSubscription(row.providerSubscriptionId);
  await transaction(async (em) => {
    await em.nativeDelete(SubscriptionEntity, { id: subscriptionId });
  });
}

/**
 * Brings the provider's subscriptions in step with the installation's subscribe config, through the
 * connector, then records `subscribe.{action}.success`. Each object's step is idempotent (a row
 * that exists is updated, a row that is gone needs no removal), so a retried attempt resumes where
 * the last one stopped. The caller records the error event when retries run out.
 */
export async function changeSubscriptions(change: SubscriptionChange): Promise<SubscriptionChangeResult> {
  const installation = await requireInstallation(change.installationId);
  const subscriptionIds: Record<string, string> = {};
  try {
    const connector = connectorFor(await connectionTarget(installation.connectionId));
    for (const upsert of change.upserts) {
      subscriptionIds[upsert.objectName] = await upsertSubscription(connector, installation, upsert);
    }
    for (const removal of change.removals) await removeSubscription(connector, removal.subscriptionId);
  } catch (error) {
    throw classify(error);
  }
  await transaction(async (em) => {
    recordEvent(em, installation.projectId, `subscribe.${change.action}.success`, {
      ...(await installationEventFields(em, installation)),
      objects: [
        ...change.upserts.map((upsert) => upsert.objectName),
        ...change.removals.map((removal) => removal.objectName),
      ],
      subscriptionIds,
    });
  });
  const renewAt = await installationRenewalAt(installation.id, config().subscriptionRenewal.leadMs);
  return { subscriptionIds, ...(renewAt && { renewAt: renewAt.toISOString() }), renewalPlanned: true };
}

/**
 * Renews the installation's subscriptions that expire soon (an operation each). A failure is retried
 * by Temporal; once retries run out the workflow plans the next try. Answers the next renewal.
 */
export async function renewSubscriptions(input: {
  installationId: string;
  /** Every subscription that expires, due or not (the provider asked). */
  all?: boolean;
}): Promise<SubscriptionRenewalResult> {
  const settings = config();
  const pass = await renewDueSubscriptions(
    input.installationId,
    { leadMs: settings.subscriptionRenewal.leadMs, publicApiUrl: settings.publicApiUrl },
    new Date(),
    input.all,
  );
  if (pass.failed.length) {
    const [first] = pass.failed;
    throw ApplicationFailure.retryable(
      `The ${first.objectName} subscription could not be renewed: ${first.error}`,
      'SubscriptionRenewalFailed',
    );
  }
  return {
    renewed: pass.renewed,
    ...(pass.renewAt && { renewAt: pass.renewAt.toISOString() }),
    retryInMs: settings.subscriptionRenewal.retryMs,
  };
}

/** The installation's next renewal, for a workflow that has not planned one (subscriptions made before renewals were). */
export async function subscriptionRenewalAt(input: {
  installationId: string;
}): Promise<SubscriptionRenewalResult> {
  const settings = config();
  const renewAt = await installationRenewalAt(input.installationId, settings.subscriptionRenewal.leadMs);
  return {
    renewed: 0,
    ...(renewAt && { renewAt: renewAt.toISOString() }),
    retryInMs: settings.subscriptionRenewal.retryMs,
  };
}

/** `subscribe.{action}.error`, once the workflow gave up on a change. */
export async function recordSubscriptionFailure(input: {
  installationId: string;
  action: SubscriptionAction;
  error: string;
}): Promise<void> {
  await transaction(async (em) => {
    const installation = await em.findOne(InstallationEntity, { id: input.installationId });
    if (!installation) return;
    recordEvent(em, installation.projectId, `subscribe.${input.action}.error`, {
      ...(await installationEventFields(em, installation)),
      error: input.error,
    });
  });
}
