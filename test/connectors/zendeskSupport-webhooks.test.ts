import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decryptSecret } from '../../src/crypto/secrets.js';
import type { Subscription } from '../../src/db/entities/subscription.js';
import { getProvider } from '../../src/providers/catalog/index.js';
import { startFakeZendesk } from './fakes/zendeskSupport.js';
import {
  zendeskTicketEvent,
  zendeskWebhookDelivery,
  zendeskWebhooks,
  type ZendeskDeliveryOptions,
} from './fakes/zendeskSupport-webhooks.js';
import type { ConformanceFake } from './kit/conformance.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * Zendesk Support's change events end to end, as its webhooks reference describes them: an
 * installation that subscribes to tickets creates a webhook subscribed to ticket event types
 * (`POST /api/v2/webhooks`), whose signing secret Zendesk makes and Ferry fetches
 * (`GET /api/v2/webhooks/{id}/signing_secret`) and keeps encrypted; events signed
 * `X-Zendesk-Webhook-Signature: base64(HMAC-SHA256(secret, timestamp + body))` with an ISO 8601
 * `X-Zendesk-Webhook-Signature-Timestamp` reach the destination once each as subscribe messages; a
 * forged, tampered or replayed (long-signed) one is refused with 401 and nothing kept; uninstalling
 * deletes the webhook.
 */

let fake: ConformanceFake;
let e2e: SubscribeE2e;
let subscription: Subscription;

const webhook = () => zendeskWebhooks.get(subscription.providerSubscriptionId!)!;
const deliver = (event: Record<string, unknown>, options?: ZendeskDeliveryOptions) =>
  e2e.post(webhook().endpoint, zendeskWebhookDelivery(webhook().id, event, options));
/** Which ticket an entry is about, from the event Zendesk sent (an entry names its record's id only on a deletion). */
const about = (item: any) => item.rawEvent?.detail?.id;
/** The subscribe message of a ticket's change, once it arrived. */
async function entryFor(id: string, change: string) {
  const entry = (message: { body: any }) =>
    (message.body.result as any[]).find((item) => about(item) === id && item.subscribeEventType === change);
  await e2e.receiver.waitFor(() => e2e.messages().some(entry), 30_000, `${change} of ticket ${id}`);
  return e2e.messages().map(entry).find(Boolean);
}

beforeAll(async () => {
  fake = await startFakeZendesk();
  e2e = await startSubscribeE2e({
    provider: 'zendeskSupport',
    fake,
    objects: ['tickets'],
    app: { clientId: 'zendesk-client', clientSecret: 'zendesk-secret' },
    connection: {
      providerMetadata: { workspace: { value: 'acme', source: 'input' } },
      oauth2AuthorizationCode: { accessToken: fake.credential, refreshToken: 'refresh-1' },
    },
  });
  [subscription] = e2e.subscriptions;
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
});

describe('Zendesk Support webhooks', () => {
  it('says Zendesk Support can subscribe, from its declaration', () => {
    expect(getProvider('zendeskSupport')?.support.subscribe).toBe(true);
  });

  it('creates a webhook subscribed to ticket events, and keeps the secret Zendesk made, encrypted', () => {
    expect(webhook()).toMatchObject({
      status: 'active',
      http_method: 'POST',
      request_format: 'json',
      endpoint: expect.stringContaining(`/webhooks/providers/zendeskSupport/${subscription.id}`),
    });
    expect(webhook().subscriptions).toEqual(
      expect.arrayContaining([
        'zen:event-type:ticket.created',
        'zen:event-type:ticket.status_changed',
        'zen:event-type:ticket.soft_deleted',
      ]),
    );
    const asked = fake.requests.find(
      (logged) => logged.method === 'GET' && logged.path.endsWith(`/webhooks/${webhook().id}/signing_secret`),
    );
    expect(asked?.status).toBe(200);
    expect(subscription.secretEncrypted).not.toContain(webhook().secret);
    expect(decryptSecret(subscription.secretEncrypted!)).toBe(webhook().secret);
  });

  it('delivers a created, a changed and a deleted ticket as subscribe messages', async () => {
    const [id] = fake.seed('tickets', [Date.now()]);
    const created = zendeskTicketEvent('created', fake.stored('tickets', id)!, {
      current: { status: 'OPEN' },
    });
    const response = await deliver(created);
    expect(response).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    expect(await entryFor(id, 'create')).toMatchObject({ rawEvent: { id: created.id } });
    const message = e2e.messages().find((sent) => sent.body.result.some((item: any) => about(item) === id))!;
    expect(message.verified).toBe(true);
    expect(message.body).toMatchObject({
      action: 'subscribe',
      provider: 'zendeskSupport',
      installationId: e2e.installationId,
      objectName: 'tickets',
    });

    fake.touch('tickets', id, Date.now());
    const changed = zendeskTicketEvent('status_changed', fake.stored('tickets', id)!, {
      current: 'SOLVED',
      previous: 'OPEN',
    });
    expect((await deliver(changed)).status).toBe(200);
    expect(await entryFor(id, 'update')).toMatchObject({ rawEvent: { id: changed.id } });

    const last = fake.stored('tickets', id)!;
    fake.remove('tickets', id, Date.now());
    expect((await deliver(zendeskTicketEvent('soft_deleted', last))).status).toBe(200);
    expect(await entryFor(id, 'delete')).toMatchObject({ id });
  });

  it('delivers an event Zendesk retries (the same event id) only once', async () => {
    const [id] = fake.seed('tickets', [Date.now()]);
    const event = zendeskTicketEvent('created', fake.stored('tickets', id)!);
    expect((await deliver(event)).body).toMatchObject({ received: 1, duplicates: 0 });
    await entryFor(id, 'create');
    // A retry is signed anew, a second later.
    const again = await deliver(event, { signedAtMs: Date.now() + 1000 });
    expect(again).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const creates = e2e
      .messages()
      .flatMap((message) => message.body.result as any[])
      .filter((item) => about(item) === id && item.subscribeEventType === 'create');
    expect(creates).toHaveLength(1);
  });

  it('refuses a forged, a tampered, a replayed and an unsigned delivery with 401, keeping nothing', async () => {
    const before = (await e2e.eventRows()).length;
    const [id] = fake.seed('tickets', [Date.now()]);
    const event = zendeskTicketEvent('created', fake.stored('tickets', id)!);
    const forged = await deliver(event, { secret: 'not-the-secret' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const good = zendeskWebhookDelivery(webhook().id, event);
    const tampered = await e2e.post(webhook().endpoint, {
      ...good,
      body: good.body.replace('Ticket', 'Forged'),
    });
    expect(tampered.status).toBe(401);
    // The signing time is inside what is signed: an old delivery replayed is refused.
    expect((await deliver(event, { signedAtMs: Date.now() - 3_600_000 })).status).toBe(401);
    const headers = { ...good.headers };
    delete headers['x-zendesk-webhook-signature'];
    expect((await e2e.post(webhook().endpoint, { headers, body: good.body })).status).toBe(401);
    expect((await e2e.eventRows()).length).toBe(before);
  });

  it('deletes the webhook when the installation is deleted', async () => {
    const id = webhook().id;
    await e2e.deleteInstallation();
    await e2e.receiver.waitFor(() => !zendeskWebhooks.has(id), 30_000, 'the webhook deleted');
    expect(zendeskWebhooks.has(id)).toBe(false);
  });
});
