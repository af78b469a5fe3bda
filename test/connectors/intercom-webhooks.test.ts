import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getProvider } from '../../src/providers/catalog/index.js';
import type { ConformanceFake } from './kit/conformance.js';
import { startFakeIntercom } from './fakes/intercom.js';
import {
  INTERCOM_WORKSPACE_ID,
  intercomNotification,
  intercomWebhookDelivery,
  type IntercomNotification,
} from './fakes/intercom-webhooks.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * Intercom's change events end to end, as its webhook reference describes them: the app's settings
 * hold the topics, so subscribing registers nothing; every workspace that installed the app posts
 * its notifications to `/v1/webhooks/providers/intercom/apps/{providerAppId}`, signed
 * `X-Hub-Signature: sha1=…` with the app's client secret; each reaches, once, the installation whose
 * connection is to the notification's workspace (`app_id`). A forged, tampered or unsigned one is
 * refused with 401 and nothing kept (the signature carries no time: there is nothing stale).
 */

const clientSecret = `intercom-secret-${randomUUID()}`;
let fake: ConformanceFake;
let e2e: SubscribeE2e;
let contact: Record<string, unknown>;

const appUrl = () => `${e2e.apiOrigin}/v1/webhooks/providers/intercom/apps/${e2e.appId}`;
const deliver = (notification: IntercomNotification, secret = clientSecret) =>
  e2e.post(appUrl(), intercomWebhookDelivery(secret, notification));

beforeAll(async () => {
  fake = await startFakeIntercom();
  e2e = await startSubscribeE2e({
    provider: 'intercom',
    fake,
    objects: ['contacts'],
    app: { clientId: 'intercom-client', clientSecret },
    connection: {
      providerWorkspaceRef: INTERCOM_WORKSPACE_ID,
      oauth2AuthorizationCode: { accessToken: fake.credential },
    },
  });
  const [id] = fake.seed('contacts', [Date.now() - 60_000]);
  contact = fake.stored('contacts', id) as Record<string, unknown>;
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
});

describe('Intercom webhooks', () => {
  it('says Intercom can subscribe, and registers nothing: the app’s settings hold the topics', () => {
    expect(getProvider('intercom')?.support.subscribe).toBe(true);
    expect(e2e.subscriptions.map((row) => row.providerSubscriptionId)).toEqual(['app:contacts']);
    expect(e2e.subscriptions[0].secretEncrypted).toBeFalsy();
  });

  it('delivers a signed creation, update and deletion of the installation’s workspace, once each', async () => {
    const created = await deliver(intercomNotification('contact.user.created', contact));
    expect(created).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    const first = await e2e.nextMessage(1);
    expect(first.verified).toBe(true);
    expect(first.body).toMatchObject({
      action: 'subscribe',
      provider: 'intercom',
      installationId: e2e.installationId,
      objectName: 'contacts',
    });
    expect(first.body.result[0]).toMatchObject({
      subscribeEventType: 'create',
      providerEventType: 'contact.user.created',
      raw: expect.objectContaining({ id: contact.id, email: contact.email }),
    });

    expect((await deliver(intercomNotification('contact.user.updated', contact))).status).toBe(200);
    expect((await e2e.nextMessage(2)).body.result[0]).toMatchObject({
      subscribeEventType: 'update',
      providerEventType: 'contact.user.updated',
      raw: expect.objectContaining({ id: contact.id }),
    });

    expect((await deliver(intercomNotification('contact.deleted', contact))).status).toBe(200);
    expect((await e2e.nextMessage(3)).body.result[0]).toMatchObject({
      subscribeEventType: 'delete',
      providerEventType: 'contact.deleted',
      id: contact.id,
    });
  });

  it('accepts, and drops, a notification of a workspace no connection is to', async () => {
    const before = (await e2e.eventRows()).length;
    const other = intercomNotification('contact.user.created', contact, { workspaceId: 'zz99other' });
    expect((await deliver(other)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await e2e.eventRows()).length).toBe(before);
  });

  it('delivers a notification Intercom retries only once', async () => {
    const notification = intercomNotification('contact.user.updated', contact);
    const count = e2e.messages().length;
    expect(await deliver(notification)).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    await e2e.nextMessage(count + 1);
    const retried = await deliver({ ...notification, delivery_attempts: 2 });
    expect(retried).toMatchObject({ status: 200, body: { duplicates: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(e2e.messages()).toHaveLength(count + 1);
  });

  it('answers 401 to a signature of another secret, a changed body or none, keeping nothing', async () => {
    const before = (await e2e.eventRows()).length;
    const notification = intercomNotification('contact.user.updated', contact);
    const forged = await deliver(notification, 'not-the-client-secret');
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const good = intercomWebhookDelivery(clientSecret, notification);
    const tampered = await e2e.post(appUrl(), {
      ...good,
      body: good.body.replace(String(contact.id), 'f'.repeat(24)),
    });
    expect(tampered.status).toBe(401);
    const { 'x-hub-signature': _, ...unsigned } = good.headers;
    expect((await e2e.post(appUrl(), { headers: unsigned, body: good.body })).status).toBe(401);
    expect((await e2e.eventRows()).length).toBe(before);
  });

  it('delivers nothing more once the installation is deleted (Intercom keeps sending)', async () => {
    await e2e.deleteInstallation();
    const count = e2e.messages().length;
    const after = await deliver(intercomNotification('contact.user.updated', contact));
    expect(after.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(e2e.messages()).toHaveLength(count);
  });
});
