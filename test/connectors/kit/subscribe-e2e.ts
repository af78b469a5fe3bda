import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import { resetConfig } from '../../../src/config.js';
import { SubscriptionEntity, type Subscription } from '../../../src/db/entities/subscription.js';
import { SubscriptionEventEntity } from '../../../src/db/entities/subscription-event.js';
import { transaction } from '../../../src/db/orm.js';
import { generateSigningSecret } from '../../../src/delivery/signing.js';
import { eventually } from '../../installations/support.js';
import { request, startTestStack, type ApiResponse, type TestStack } from '../../support/stack.js';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.js';

/**
 * What an end-to-end subscribe test of one provider needs, the way a customer sets it up: the
 * provider's fake behind FERRY_PROVIDER_OVERRIDES, Ferry's public URL, a signed webhook destination,
 * (for OAuth providers) the project's provider app, a connection, an integration subscribing to the
 * given objects, and an installation whose subscriptions are registered at the provider.
 */

export interface SubscribeE2eOptions {
  provider: string;
  fake: { url: string; tokenUrl?: string; credential: string };
  objects: string[];
  /** The project's OAuth app: its client secret signs app-level webhooks (Intercom, Jira). */
  app?: { clientId: string; clientSecret: string };
  /** connections:generate members beside provider/groupRef/consumerRef (credentials, metadata). */
  connection: Record<string, unknown>;
  /** Wait for this many subscriptions with a provider id (default: one per object). */
  subscriptions?: number;
}

export interface SubscribeE2e {
  stack: TestStack;
  receiver: WebhookReceiver;
  apiOrigin: string;
  appId?: string;
  integrationId: string;
  installationId: string;
  subscriptions: Subscription[];
  /** Subscribe messages the destination accepted, oldest first. */
  messages(): ReceivedRequest[];
  /** The `count`-th subscribe message, once it has arrived. */
  nextMessage(count: number): Promise<ReceivedRequest>;
  /** Kept change events of the installation. */
  eventRows(): Promise<{ providerEventId: string | null; event: unknown }[]>;
  /** Posts a delivery, as the provider does, to a URL (Ferry's public one). */
  post(url: string, delivery: { headers: Record<string, string>; body: string }): Promise<ApiResponse>;
  deleteInstallation(): Promise<void>;
  close(): Promise<void>;
}

export async function startSubscribeE2e(options: SubscribeE2eOptions): Promise<SubscribeE2e> {
  const { provider, fake } = options;
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({
    [provider]: { baseURL: fake.url, ...(fake.tokenUrl && { tokenURL: fake.tokenUrl }) },
  });
  resetConfig();
  const stack = await startTestStack({ worker: true });
  const apiOrigin = new URL(stack.urls.api).origin;
  process.env.FERRY_PUBLIC_API_URL = apiOrigin;
  resetConfig();
  const signingSecret = generateSigningSecret();
  const receiver = await WebhookReceiver.start([signingSecret]);
  const project = `/projects/${stack.project.id}`;
  const destination = await stack.api('POST', `${project}/destinations`, {
    body: { name: 'changes', type: 'webhook', metadata: { url: receiver.url() }, secrets: { signingSecret } },
  });
  expect(destination.status).toBe(201);
  let appId: string | undefined;
  if (options.app) {
    const app = await stack.api('POST', `${project}/provider-apps`, { body: { provider, ...options.app } });
    expect(app.status).toBe(200);
    appId = app.body.id;
  }
  const groupRef = `${provider}-${randomUUID().slice(0, 8)}`;
  const connection = await stack.api('POST', `${project}/connections:generate`, {
    body: { provider, groupRef, consumerRef: `${groupRef}-admin`, ...options.connection },
  });
  expect(connection.status).toBe(201);
  const name = `${provider}-changes-${randomUUID().slice(0, 6)}`;
  const integration = await stack.api('POST', `${project}/integrations`, {
    body: {
      name,
      provider,
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider,
          subscribe: {
            objects: options.objects.map((objectName) => ({ objectName, destination: 'changes' })),
          },
        },
      },
    },
  });
  expect(integration.status).toBe(201);
  const always = { enabled: 'always' };
  const installation = await stack.api(
    'POST',
    `${project}/integrations/${integration.body.id}/installations`,
    {
      body: {
        groupRef,
        config: {
          content: {
            provider,
            subscribe: {
              objects: Object.fromEntries(
                options.objects.map((objectName) => [
                  objectName,
                  {
                    objectName,
                    destination: 'changes',
                    createEvent: always,
                    updateEvent: { ...always, watchFieldsAuto: 'all' },
                    deleteEvent: always,
                  },
                ]),
              ),
            },
          },
        },
      },
    },
  );
  expect(installation.status).toBe(201);
  const installationId: string = installation.body.id;
  const subscriptions = await eventually(async () => {
    const rows = await transaction((em) => em.find(SubscriptionEntity, { installationId }));
    const made = rows.filter((row) => row.providerSubscriptionId);
    return made.length >= (options.subscriptions ?? options.objects.length) && made;
  }, 60_000);

  const messages = () => receiver.accepted().filter((received) => received.body?.action === 'subscribe');
  return {
    stack,
    receiver,
    apiOrigin,
    appId,
    integrationId: integration.body.id,
    installationId,
    subscriptions,
    messages,
    async nextMessage(count) {
      await receiver.waitFor(() => messages().length >= count, 30_000, `subscribe message ${count}`);
      return messages()[count - 1];
    },
    eventRows: () =>
      transaction((em) =>
        em.find(SubscriptionEventEntity, { installationId }, { orderBy: { createTime: 'asc' } }),
      ),
    post: (url, delivery) => request('POST', url, { rawBody: delivery.body, headers: delivery.headers }),
    async deleteInstallation() {
      const deleted = await stack.api(
        'DELETE',
        `${project}/integrations/${integration.body.id}/installations/${installationId}`,
      );
      expect(deleted.status).toBeLessThan(300);
    },
    async close() {
      await stack.close();
      await receiver.stop();
      delete process.env.FERRY_PROVIDER_OVERRIDES;
      delete process.env.FERRY_PUBLIC_API_URL;
      resetConfig();
    },
  };
}
