import { isUuid } from '../../core/ids.js';
import { ProblemError } from '../../core/problem.js';
import { decryptSecret } from '../../crypto/secrets.js';
import { ConnectionEntity, ProviderAppEntity } from '../../db/entities/connection.js';
import { InstallationEntity } from '../../db/entities/installation.js';
import { SubscriptionEntity } from '../../db/entities/subscription.js';
import { em as newEntityManager } from '../../db/orm.js';
import { logger } from '../../logger.js';
import { connectorDeclaration } from '../../providers/catalog/index.js';
import { objectsOfEvent } from '../../providers/declarative/webhooks.js';
import type { WorkflowIdentity } from '../../temporal/gateway.js';
import { runIdentityOf } from '../installations/workflow.js';
import { keepEvents, verifiedEvents, type EventForSubscription, type InboundResult } from './inbound.js';

/**
 * What a provider posts to `/v1/webhooks/providers/{provider}/apps/{providerAppId}` for webhooks its
 * app's settings hold (HubSpot): one request carries events of every account that installed the
 * app. The signature is checked with the provider app's client secret; each event then goes to the
 * subscriptions, for its object, of the installations whose connection is through this app and to
 * the event's account (`providerWorkspaceRef`, HubSpot's portal id). An event no installation
 * subscribed to is accepted and dropped: the provider cannot be told to send less per account.
 */

export interface InboundAppWebhook {
  provider: string;
  providerAppId: string;
  method: string;
  /** The URL the provider posted to, as it sees it. */
  uri: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

export async function receiveAppWebhook(input: InboundAppWebhook): Promise<InboundResult> {
  const webhooks = connectorDeclaration(input.provider)?.webhooks;
  const app =
    webhooks?.appLevel && isUuid(input.providerAppId)
      ? await (
          await newEntityManager()
        ).findOne(ProviderAppEntity, { id: input.providerAppId, provider: input.provider })
      : undefined;
  if (!webhooks || !app) {
    throw ProblemError.notFound(
      `No provider app ${input.providerAppId} of provider "${input.provider}" takes webhooks here.`,
    );
  }
  const events = verifiedEvents(
    input.provider,
    input.headers,
    input.rawBody,
    decryptSecret(app.clientSecretEncrypted),
    {
      method: input.method,
      uri: input.uri,
    },
  );

  const em = await newEntityManager();
  const workspaces = [
    ...new Set(events.map((event) => event.workspaceRef).filter((ref) => ref !== undefined)),
  ];
  const connections = workspaces.length
    ? await em.find(ConnectionEntity, { providerAppId: app.id, providerWorkspaceRef: { $in: workspaces } })
    : [];
  const installations = connections.length
    ? await em.find(InstallationEntity, { connectionId: { $in: connections.map((row) => row.id) } })
    : [];
  const subscriptions = installations.length
    ? await em.find(SubscriptionEntity, {
        installationId: { $in: installations.map((row) => row.id) },
        provider: input.provider,
      })
    : [];
  const workspaceOf = new Map(connections.map((row) => [row.id, row.providerWorkspaceRef]));
  const installationOf = new Map(installations.map((row) => [row.id, row]));
  const identities = new Map<string, WorkflowIdentity>();
  const identityOf = async (installationId: string) => {
    if (!identities.has(installationId))
      identities.set(installationId, await runIdentityOf(em, installationOf.get(installationId)!));
    return identities.get(installationId)!;
  };

  const entries: EventForSubscription[] = [];
  for (const event of events) {
    const objects = objectsOfEvent(webhooks, event);
    for (const row of subscriptions) {
      const installation = installationOf.get(row.installationId)!;
      if (workspaceOf.get(installation.connectionId) !== event.workspaceRef) continue;
      if (!objects.includes(row.objectName)) continue;
      entries.push({ row, identity: await identityOf(row.installationId), event });
    }
  }
  const started = await keepEvents(entries);
  logger.debug(
    {
      provider: input.provider,
      providerAppId: app.id,
      received: events.length,
      matched: entries.length,
      kept: started,
    },
    'provider app webhook received',
  );
  return { received: events.length, duplicates: entries.length - started };
}
