import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { SubscriptionEntity, type Subscription } from '../../src/db/entities/subscription.js';
import { SubscriptionEventEntity } from '../../src/db/entities/subscription-event.js';
import { transaction } from '../../src/db/orm.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import {
  copperFixturePersonId,
  copperUserEmail,
  copperWebhookNotification,
  copperWebhooks,
  startFakeCopper,
} from '../connectors/fakes/copper.js';
import type { ConformanceFake } from '../connectors/kit/conformance.js';
import { eventually, YEARLY } from '../installations/support.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.js';

/**
 * Copper end to end: an installation subscribing to people registers one Copper webhook per event
 * (Copper takes only https targets, so Ferry's public URL is https here and the test plays Copper,
 * posting to the API directly); a notification naming records by id reaches the destination once
 * per record, read from Copper, signed; one without the secret Ferry registered changes nothing.
 */

let stack: TestStack;
let copper: ConformanceFake;
let receiver: WebhookReceiver;
let subscription: Subscription;
let apiOrigin: string;
const publicUrl = 'https://ferry.example';

const copperIds = () => subscription.providerSubscriptionId.split(',').map(Number);
const byEvent = (event: string) => copperIds().find((id) => copperWebhooks.get(id)?.event === event)!;

const post = (body: string) =>
  request('POST', `${apiOrigin}/v1/webhooks/providers/copper/${subscription.id}`, {
    rawBody: body,
    headers: { 'content-type': 'application/json' },
  });

const subscribeMessages = (): ReceivedRequest[] =>
  receiver.accepted().filter((received) => received.body?.action === 'subscribe');
const entries = () => subscribeMessages().flatMap((message) => message.body.result);

const eventRows = () =>
  transaction((em) => em.find(SubscriptionEventEntity, { subscriptionId: subscription.id }));

beforeAll(async () => {
  copper = await startFakeCopper();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ copper: { baseURL: copper.url } });
  resetConfig();
  stack = await startTestStack({ worker: true });
  apiOrigin = new URL(stack.urls.api).origin;
  process.env.FERRY_PUBLIC_API_URL = publicUrl;
  resetConfig();
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const destination = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: { name: 'hooks', type: 'webhook', metadata: { url: receiver.url() }, secrets: { signingSecret } },
  });
  expect(destination.status).toBe(201);
  const groupRef = `copper-${randomUUID().slice(0, 6)}`;
  const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
    body: {
      provider: 'copper',
      groupRef,
      consumerRef: `admin-${groupRef}`,
      providerMetadata: { userEmail: { value: copperUserEmail, source: 'input' } },
      apiKey: copper.credential,
    },
  });
  expect(connection.status).toBe(201);
  const name = `copper-live-${randomUUID().slice(0, 6)}`;
  const integration = await stack.api('POST', `/projects/${stack.project.id}/integrations`, {
    body: {
      name,
      provider: 'copper',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider: 'copper',
          read: { objects: [{ objectName: 'people', destination: 'hooks', schedule: YEARLY }] },
          subscribe: { objects: [{ objectName: 'people', destination: 'hooks' }] },
        },
      },
    },
  });
  expect(integration.status).toBe(201);
  const installation = await stack.api(
    'POST',
    `/projects/${stack.project.id}/integrations/${integration.body.id}/installations`,
    {
      body: {
        groupRef,
        config: {
          content: {
            provider: 'copper',
            read: {
              objects: {
                people: {
                  objectName: 'people',
                  schedule: YEARLY,
                  destination: 'hooks',
                  selectedFields: { name: true, title: true },
                  backfill: { defaultPeriod: { days: 0 } },
                },
              },
            },
            subscribe: {
              objects: {
                people: {
                  objectName: 'people',
                  destination: 'hooks',
                  inheritFieldsAndMapping: true,
                  createEvent: { enabled: 'always' },
                  updateEvent: { enabled: 'always' },
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
  subscription = await eventually(
    () =>
      transaction((em) => em.findOne(SubscriptionEntity, { installationId: installation.body.id })).then(
        (row) => row ?? undefined,
      ),
    60_000,
  );
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await copper?.stop();
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  delete process.env.FERRY_PUBLIC_API_URL;
  resetConfig();
});

describe('Copper webhooks end to end', () => {
  let updateBody: string;

  it('registered one Copper webhook per event, each to the subscription’s URL with Ferry’s secret', () => {
    expect(copperIds()).toHaveLength(3);
    const registered = copperIds().map((id) => copperWebhooks.get(id)!);
    expect(registered.map((hook) => hook.event).sort()).toEqual(['delete', 'new', 'update']);
    for (const hook of registered) {
      expect(hook).toMatchObject({
        target: `${publicUrl}/v1/webhooks/providers/copper/${subscription.id}`,
        type: 'person',
        secret: { ferry_secret: expect.any(String) },
      });
    }
    expect(subscription.secretEncrypted).toBeDefined();
    expect(subscription.secretEncrypted).not.toContain(registered[0].secret!.ferry_secret);
  });

  it('delivers an update, read from Copper by id, with the fields it changed, signed', async () => {
    updateBody = copperWebhookNotification(byEvent('update'), [copperFixturePersonId], {
      updated_attributes: { title: ['CTO', 'CEO'] },
    });
    expect(await post(updateBody)).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    await receiver.waitFor(() => subscribeMessages().length >= 1, 30_000, 'the update');
    const [message] = subscribeMessages();
    expect(message.verified).toBe(true);
    expect(message.body).toMatchObject({ action: 'subscribe', provider: 'copper', rawObjectName: 'people' });
    expect(message.body.result[0]).toMatchObject({
      subscribeEventType: 'update',
      providerEventType: 'person.update',
      fieldsUpdated: ['title'],
      fields: { name: 'Fixture Person' },
      raw: { id: copperFixturePersonId, name: 'Fixture Person' },
    });
  });

  it('delivers each record a notification names on its own, and a deletion with the id', async () => {
    const [first, second] = copper.seed('people', [Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 2)]);
    const created = copperWebhookNotification(byEvent('new'), [Number(first), Number(second)]);
    expect(await post(created)).toMatchObject({ status: 200, body: { received: 2, duplicates: 0 } });
    const deleted = copperWebhookNotification(byEvent('delete'), [4242]);
    expect(await post(deleted)).toMatchObject({ status: 200, body: { received: 1 } });
    await receiver.waitFor(() => subscribeMessages().length >= 4, 30_000, 'three more messages');
    expect(subscribeMessages().every((message) => message.verified)).toBe(true);
    const news = entries().filter((entry) => entry.subscribeEventType === 'create');
    expect(news.map((entry) => String(entry.raw.id)).sort()).toEqual([first, second].sort());
    expect(entries().find((entry) => entry.subscribeEventType === 'delete')).toMatchObject({
      providerEventType: 'person.delete',
      id: '4242',
    });
  });

  it('delivers a notification sent twice only once', async () => {
    const before = subscribeMessages().length;
    expect(await post(updateBody)).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(subscribeMessages()).toHaveLength(before);
  });

  it('answers 401 to a notification without the registered secret, or with another, keeping nothing', async () => {
    const before = (await eventRows()).length;
    const body = JSON.parse(copperWebhookNotification(byEvent('new'), [copperFixturePersonId]));
    const forged = await post(JSON.stringify({ ...body, ferry_secret: 'guessed' }));
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const bare = await post(JSON.stringify({ ...body, ferry_secret: undefined }));
    expect(bare.status).toBe(401);
    expect((await eventRows()).length).toBe(before);
  });
});
