import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getProvider } from '../../src/providers/catalog/index.js';
import { startFakeShopify, type FakeShopify } from './fakes/shopify.js';
import {
  SHOPIFY_APP,
  shopifyCustomerPayload,
  shopifyWebhookDelivery,
  shopifyWebhookSubscriptions,
  type ShopifyDeliveryOptions,
} from './fakes/shopify-webhooks.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * Shopify's change events end to end, as its webhooks reference describes them: an installation
 * that subscribes to customers makes webhook subscriptions through the Admin GraphQL API
 * (`webhookSubscriptionCreate`, one per topic: `CUSTOMERS_CREATE`, `CUSTOMERS_UPDATE`,
 * `CUSTOMERS_DELETE`); deliveries name their topic in `X-Shopify-Topic`, carry the REST-shaped
 * customer (its GraphQL id in `admin_graphql_api_id`) and are signed
 * `X-Shopify-Hmac-Sha256: base64(HMAC-SHA256(app client secret, body))`; they reach the destination
 * once each as subscribe messages, a forged or tampered one is refused with 401 and nothing kept,
 * and uninstalling deletes every subscription.
 */

let fake: FakeShopify;
let e2e: SubscribeE2e;

/** The fake's subscriptions Ferry made, by topic. */
const made = () =>
  new Map([...shopifyWebhookSubscriptions.values()].map((registered) => [registered.topic, registered]));
const deliver = (topic: string, payload: Record<string, unknown>, options?: ShopifyDeliveryOptions) => {
  const registered = made().get(topic)!;
  const delivery = shopifyWebhookDelivery(registered.id, payload, options);
  return e2e.post(registered.uri, delivery).then((response) => ({ response, delivery }));
};
/** Which customer an entry is about, from what Shopify sent (an entry names its record's id only on a deletion). */
const about = (item: any) => item.rawEvent?.admin_graphql_api_id;
async function entryFor(id: string, change: string) {
  const entry = (message: { body: any }) =>
    (message.body.result as any[]).find((item) => about(item) === id && item.subscribeEventType === change);
  await e2e.receiver.waitFor(() => e2e.messages().some(entry), 30_000, `${change} of customer ${id}`);
  return e2e.messages().map(entry).find(Boolean);
}

beforeAll(async () => {
  fake = await startFakeShopify();
  e2e = await startSubscribeE2e({
    provider: 'shopify',
    fake,
    objects: ['customers'],
    app: SHOPIFY_APP,
    connection: {
      providerMetadata: { workspace: { value: 'acme', source: 'input' } },
      oauth2AuthorizationCode: { accessToken: fake.credential },
    },
  });
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
});

describe('Shopify webhooks', () => {
  it('says Shopify can subscribe, from its declaration', () => {
    expect(getProvider('shopify')?.support.subscribe).toBe(true);
  });

  it('makes one webhook subscription per customer topic, to Ferry’s public URL', () => {
    expect([...made().keys()].sort()).toEqual(['CUSTOMERS_CREATE', 'CUSTOMERS_DELETE', 'CUSTOMERS_UPDATE']);
    for (const registered of made().values()) {
      expect(registered.uri).toContain(`${e2e.apiOrigin}/v1/webhooks/providers/shopify/`);
      expect(registered.format).toBe('JSON');
    }
    const mutations = fake.requests.filter((logged) =>
      String((logged.body as { query?: string })?.query).includes('webhookSubscriptionCreate'),
    );
    expect(mutations.length).toBeGreaterThanOrEqual(3);
  });

  it('delivers a created, an updated and a deleted customer as subscribe messages', async () => {
    const [id] = fake.seed('customers', [Date.now()]);
    const created = await deliver('CUSTOMERS_CREATE', shopifyCustomerPayload(fake.stored('customers', id)!));
    expect(created.response).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    expect(await entryFor(id, 'create')).toMatchObject({ subscribeEventType: 'create' });
    const message = e2e.messages().find((sent) => sent.body.result.some((item: any) => about(item) === id))!;
    expect(message.verified).toBe(true);
    expect(message.body).toMatchObject({
      action: 'subscribe',
      provider: 'shopify',
      installationId: e2e.installationId,
      objectName: 'customers',
    });

    fake.edit('customers', id, { note: 'Prefers email' });
    expect(
      (await deliver('CUSTOMERS_UPDATE', shopifyCustomerPayload(fake.stored('customers', id)!))).response
        .status,
    ).toBe(200);
    expect(await entryFor(id, 'update')).toMatchObject({ subscribeEventType: 'update' });

    const last = fake.stored('customers', id)!;
    fake.remove('customers', id, Date.now());
    expect((await deliver('CUSTOMERS_DELETE', shopifyCustomerPayload(last, true))).response.status).toBe(200);
    expect(await entryFor(id, 'delete')).toMatchObject({ id });
  });

  it('delivers a delivery Shopify retries (the same X-Shopify-Webhook-Id) only once', async () => {
    const [id] = fake.seed('customers', [Date.now()]);
    const payload = shopifyCustomerPayload(fake.stored('customers', id)!);
    const first = await deliver('CUSTOMERS_CREATE', payload);
    expect(first.response.body).toMatchObject({ received: 1, duplicates: 0 });
    await entryFor(id, 'create');
    const again = await deliver('CUSTOMERS_CREATE', payload, {
      webhookId: first.delivery.webhookId,
      eventId: first.delivery.eventId,
    });
    expect(again.response).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const creates = e2e
      .messages()
      .flatMap((message) => message.body.result as any[])
      .filter((item) => about(item) === id && item.subscribeEventType === 'create');
    expect(creates).toHaveLength(1);
  });

  it('refuses a delivery signed with another key, a tampered one and an unsigned one with 401, keeping nothing', async () => {
    const before = (await e2e.eventRows()).length;
    const [id] = fake.seed('customers', [Date.now()]);
    const payload = shopifyCustomerPayload(fake.stored('customers', id)!);
    const forged = await deliver('CUSTOMERS_CREATE', payload, { secret: 'shpss_another_app' });
    expect(forged.response.status).toBe(401);
    expect(forged.response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const registered = made().get('CUSTOMERS_CREATE')!;
    const good = shopifyWebhookDelivery(registered.id, payload);
    const tampered = await e2e.post(registered.uri, { ...good, body: good.body.replace('Ada', 'Eve') });
    expect(tampered.status).toBe(401);
    const headers = { ...good.headers };
    delete headers['x-shopify-hmac-sha256'];
    expect((await e2e.post(registered.uri, { headers, body: good.body })).status).toBe(401);
    expect((await e2e.eventRows()).length).toBe(before);
  });

  it('deletes every webhook subscription when the installation is deleted', async () => {
    const ids = [...made().values()].map((registered) => registered.id);
    await e2e.deleteInstallation();
    await e2e.receiver.waitFor(
      () => ids.every((id) => !shopifyWebhookSubscriptions.has(id)),
      30_000,
      'the subscriptions deleted',
    );
  });
});
