import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { ConnectionEntity } from '../../src/db/entities/connection.js';
import { SubscriptionEntity, type Subscription } from '../../src/db/entities/subscription.js';
import { SubscriptionEventEntity } from '../../src/db/entities/subscription-event.js';
import { transaction } from '../../src/db/orm.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import {
  hubSpotEvent,
  hubSpotWebhookRequest,
  startFakeHubSpot,
  type FakeHubSpot,
} from '../connectors/fakes/hubspot.js';
import { eventually, YEARLY } from '../installations/support.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.js';

/**
 * HubSpot's webhooks belong to the app, not the connection: the app's settings subscribe, and one
 * request to `/v1/webhooks/providers/hubspot/apps/{providerAppId}` carries a batch of events of
 * every account (portal) that installed the app, signed with the app's client secret (v3). Each
 * event reaches, once, the destination of the installation whose connection is to its portal.
 */

const clientSecret = `hubspot-secret-${randomUUID()}`;
const portalA = 62515;
const portalB = 77777;

let stack: TestStack;
let hubspot: FakeHubSpot;
let receiver: WebhookReceiver;
let appId: string;
let apiOrigin: string;
const installations: Record<number, string> = {};

const webhookPath = () => `/v1/webhooks/providers/hubspot/apps/${appId}`;

function post(
  events: Record<string, unknown>[],
  options: { secret?: string; timestamp?: number; path?: string } = {},
) {
  const path = options.path ?? webhookPath();
  // HubSpot signs the URL it posts to: Ferry's public URL (FERRY_PUBLIC_API_URL) and the path.
  const signed = hubSpotWebhookRequest(
    options.secret ?? clientSecret,
    `${apiOrigin}${path}`,
    events,
    options.timestamp,
  );
  return request('POST', `${apiOrigin}${path}`, { rawBody: signed.body, headers: signed.headers });
}

const subscribeMessages = (portal?: number): ReceivedRequest[] =>
  receiver
    .accepted()
    .filter(
      (received) =>
        received.body?.action === 'subscribe' &&
        (portal === undefined || received.body.installationId === installations[portal]),
    );

const entriesOf = (portal: number) => subscribeMessages(portal).flatMap((message) => message.body.result);

const eventRows = () =>
  transaction((em) =>
    em.find(SubscriptionEventEntity, { installationId: { $in: Object.values(installations) } }),
  );

async function connectAndInstall(portal: number, integrationId: string): Promise<void> {
  const groupRef = `portal-${portal}-${randomUUID().slice(0, 6)}`;
  const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
    body: {
      provider: 'hubspot',
      groupRef,
      consumerRef: `admin-${groupRef}`,
      providerWorkspaceRef: String(portal),
      oauth2AuthorizationCode: { accessToken: hubspot.credential, refreshToken: 'refresh-token-1' },
    },
  });
  expect(connection.status).toBe(201);
  expect(connection.body).toMatchObject({ providerWorkspaceRef: String(portal) });
  const row = await transaction((em) => em.findOneOrFail(ConnectionEntity, { id: connection.body.id }));
  expect(row.providerAppId).toBe(appId);
  const watched = { createEvent: { enabled: 'always' }, updateEvent: { enabled: 'always' } };
  const installation = await stack.api(
    'POST',
    `/projects/${stack.project.id}/integrations/${integrationId}/installations`,
    {
      body: {
        groupRef,
        config: {
          content: {
            provider: 'hubspot',
            read: {
              objects: {
                contacts: {
                  objectName: 'contacts',
                  schedule: YEARLY,
                  destination: 'hooks',
                  selectedFields: { email: true, firstname: true },
                  backfill: { defaultPeriod: { days: 0 } },
                },
              },
            },
            subscribe: {
              objects: {
                contacts: {
                  objectName: 'contacts',
                  destination: 'hooks',
                  inheritFieldsAndMapping: true,
                  ...watched,
                  deleteEvent: { enabled: 'always' },
                },
                deals: {
                  objectName: 'deals',
                  destination: 'hooks',
                  ...watched,
                  deleteEvent: { enabled: 'always' },
                },
              },
            },
          },
        },
      },
    },
  );
  expect(installation.status).toBe(201);
  installations[portal] = installation.body.id;
  const subscriptions: Subscription[] = await eventually(async () => {
    const rows = await transaction((em) =>
      em.find(SubscriptionEntity, { installationId: installation.body.id }),
    );
    return rows.length === 2 && rows;
  }, 60_000);
  // Nothing was registered at HubSpot: the app's settings hold the subscriptions.
  expect(subscriptions.map((row) => row.providerSubscriptionId).sort()).toEqual([
    'app:contacts',
    'app:deals',
  ]);
  expect(subscriptions.every((row) => !row.secretEncrypted)).toBe(true);
}

beforeAll(async () => {
  hubspot = await startFakeHubSpot();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({
    hubspot: { baseURL: hubspot.url, tokenURL: hubspot.tokenUrl },
  });
  resetConfig();
  stack = await startTestStack({ worker: true });
  apiOrigin = new URL(stack.urls.api).origin;
  process.env.FERRY_PUBLIC_API_URL = apiOrigin;
  resetConfig();
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const destination = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: { name: 'hooks', type: 'webhook', metadata: { url: receiver.url() }, secrets: { signingSecret } },
  });
  expect(destination.status).toBe(201);
  const app = await stack.api('POST', `/projects/${stack.project.id}/provider-apps`, {
    body: { provider: 'hubspot', clientId: 'hubspot-client', clientSecret },
  });
  expect(app.status).toBe(200);
  appId = app.body.id;
  const name = `hubspot-live-${randomUUID().slice(0, 6)}`;
  const integration = await stack.api('POST', `/projects/${stack.project.id}/integrations`, {
    body: {
      name,
      provider: 'hubspot',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider: 'hubspot',
          read: {
            objects: [
              {
                objectName: 'contacts',
                destination: 'hooks',
                schedule: YEARLY,
                optionalFields: [{ fieldName: 'email' }, { fieldName: 'firstname' }],
              },
            ],
          },
          subscribe: {
            objects: [
              { objectName: 'contacts', destination: 'hooks' },
              { objectName: 'deals', destination: 'hooks' },
            ],
          },
        },
      },
    },
  });
  expect(integration.status).toBe(201);
  await connectAndInstall(portalA, integration.body.id);
  await connectAndInstall(portalB, integration.body.id);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await hubspot?.stop();
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  delete process.env.FERRY_PUBLIC_API_URL;
  resetConfig();
});

describe('HubSpot app webhooks', () => {
  let batch: Record<string, unknown>[];
  let contactId: string;

  it('delivers each event of a signed batch, signed, to the installation of its portal', async () => {
    const [contact] = hubspot.seedRecords('contacts', [Date.UTC(2026, 10, 1)]);
    contactId = contact.id;
    batch = [
      hubSpotEvent(portalA, 'contact.creation', contactId),
      hubSpotEvent(portalA, 'contact.propertyChange', contactId, {
        propertyName: 'firstname',
        propertyValue: 'Ada',
        changeSource: 'CRM_UI',
      }),
      hubSpotEvent(portalA, 'deal.deletion', 55),
      hubSpotEvent(portalB, 'contact.deletion', 9001),
      // An account no connection is to: accepted, and dropped.
      hubSpotEvent(31337, 'contact.creation', 1),
    ];
    const response = await post(batch);
    expect(response).toMatchObject({ status: 200, body: { received: 5, duplicates: 0 } });
    await receiver.waitFor(() => subscribeMessages().length >= 4, 30_000, 'four subscribe messages');
    expect(subscribeMessages().every((message) => message.verified)).toBe(true);
    expect(subscribeMessages(portalA)).toHaveLength(3);
    expect(subscribeMessages(portalB)).toHaveLength(1);
    expect(subscribeMessages(portalA)[0].body).toMatchObject({
      action: 'subscribe',
      provider: 'hubspot',
      workspace: String(portalA),
      installationId: installations[portalA],
    });

    const entries = entriesOf(portalA);
    const created = entries.find((entry) => entry.providerEventType === 'contact.creation');
    // The event names only the record: Ferry read it from HubSpot, fields as the installation selected.
    expect(created).toMatchObject({
      subscribeEventType: 'create',
      raw: { id: contactId, properties: { email: `c${contactId}@example.com` } },
      rawEvent: { portalId: portalA, objectId: Number(contactId), subscriptionType: 'contact.creation' },
    });
    expect(entries.find((entry) => entry.providerEventType === 'contact.propertyChange')).toMatchObject({
      subscribeEventType: 'update',
      fieldsUpdated: ['firstname'],
      rawEvent: { propertyName: 'firstname', propertyValue: 'Ada' },
    });
    expect(entries.find((entry) => entry.providerEventType === 'deal.deletion')).toMatchObject({
      subscribeEventType: 'delete',
      id: '55',
    });
    expect(entriesOf(portalB)).toEqual([
      expect.objectContaining({
        subscribeEventType: 'delete',
        providerEventType: 'contact.deletion',
        id: '9001',
      }),
    ]);
    expect(await eventRows()).toHaveLength(4);
  });

  it('delivers a batch HubSpot sends again only once', async () => {
    const before = subscribeMessages().length;
    const again = await post(batch.map((event) => ({ ...event, attemptNumber: 1 })));
    expect(again).toMatchObject({ status: 200, body: { received: 5, duplicates: 4 } });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(subscribeMessages()).toHaveLength(before);
    expect(await eventRows()).toHaveLength(4);
  });

  it('answers 401 to a signature of another secret, a changed body or a stale timestamp, keeping nothing', async () => {
    const fresh = [hubSpotEvent(portalA, 'contact.creation', contactId)];
    const forged = await post(fresh, { secret: 'not-the-client-secret' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const signed = hubSpotWebhookRequest(clientSecret, `${apiOrigin}${webhookPath()}`, fresh);
    const changed = await request('POST', `${apiOrigin}${webhookPath()}`, {
      rawBody: signed.body.replace(String(portalA), String(portalB)),
      headers: signed.headers,
    });
    expect(changed.status).toBe(401);

    const stale = await post(fresh, { timestamp: Date.now() - 6 * 60_000 });
    expect(stale.status).toBe(401);
    expect(stale.body.detail).toMatch(/too long ago/);

    const unsigned = await request('POST', `${apiOrigin}${webhookPath()}`, { body: fresh });
    expect(unsigned.status).toBe(401);
    expect(await eventRows()).toHaveLength(4);
  });

  it('answers 404 for an app that does not exist, or a provider whose webhooks are not the app’s', async () => {
    const event = [hubSpotEvent(portalA, 'contact.creation', contactId)];
    expect((await post(event, { path: `/v1/webhooks/providers/hubspot/apps/${randomUUID()}` })).status).toBe(
      404,
    );
    expect((await post(event, { path: `/v1/webhooks/providers/close/apps/${appId}` })).status).toBe(404);
    expect((await post(event, { path: '/v1/webhooks/providers/hubspot/apps/not-a-uuid' })).status).toBe(404);
  });
});
