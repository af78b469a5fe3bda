import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { decryptSecret } from '../../src/crypto/secrets.js';
import { SubscriptionEntity, type Subscription } from '../../src/db/entities/subscription.js';
import { SubscriptionEventEntity } from '../../src/db/entities/subscription-event.js';
import { transaction } from '../../src/db/orm.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { WebhookVerificationError } from '../../src/providers/errors.js';
import { eventually } from '../installations/support.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.js';
import {
  startFakeStripe,
  stripeWebhookDelivery,
  stripeWebhookEndpoints,
  type FakeStripe,
  type StripeEvent,
} from './fakes/stripe.js';

/**
 * Stripe's change events end to end, as its webhook reference describes them: an installation that
 * subscribes to customers registers a webhook endpoint (`POST /v1/webhook_endpoints`, form-encoded
 * `url` and `enabled_events[]`) whose `whsec_` secret Ferry keeps encrypted; events signed
 * `Stripe-Signature: t=…,v1=…` reach the destination once, as subscribe messages; a forged or stale
 * signature is refused with 401 and nothing kept.
 */

let stack: TestStack;
let fake: FakeStripe;
let receiver: WebhookReceiver;
let subscription: Subscription;
let installationId: string;
let customerId: string;

const eventRows = () =>
  transaction((em) =>
    em.find(SubscriptionEventEntity, { subscriptionId: subscription.id }, { orderBy: { createTime: 'asc' } }),
  );
const subscribeMessages = (): ReceivedRequest[] =>
  receiver.accepted().filter((received) => received.body?.action === 'subscribe');
async function nextMessage(count: number): Promise<ReceivedRequest> {
  await receiver.waitFor(() => subscribeMessages().length >= count, 30_000, `subscribe message ${count}`);
  return subscribeMessages()[count - 1];
}
const endpointSecret = () => stripeWebhookEndpoints.get(subscription.providerSubscriptionId!)!.secret;

/** Posts a delivery to the URL Ferry registered at Stripe. */
function deliver(delivery: { headers: Record<string, string>; body: string }) {
  const url = stripeWebhookEndpoints.get(subscription.providerSubscriptionId!)!.url;
  return request('POST', url, { rawBody: delivery.body, headers: delivery.headers });
}

beforeAll(async () => {
  fake = await startFakeStripe();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ stripe: { baseURL: fake.url } });
  resetConfig();
  stack = await startTestStack({ worker: true });
  process.env.FERRY_PUBLIC_API_URL = new URL(stack.urls.api).origin;
  resetConfig();
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const project = `/projects/${stack.project.id}`;
  const destination = await stack.api('POST', `${project}/destinations`, {
    body: { name: 'billing', type: 'webhook', metadata: { url: receiver.url() }, secrets: { signingSecret } },
  });
  expect(destination.status).toBe(201);
  const groupRef = `stripe-${randomUUID().slice(0, 8)}`;
  const connection = await stack.api('POST', `${project}/connections:generate`, {
    body: { provider: 'stripe', groupRef, consumerRef: `${groupRef}-admin`, apiKey: fake.credential },
  });
  expect(connection.status).toBe(201);
  const name = `stripe-${groupRef}`;
  const integration = await stack.api('POST', `${project}/integrations`, {
    body: {
      name,
      provider: 'stripe',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider: 'stripe',
          subscribe: { objects: [{ objectName: 'customers', destination: 'billing' }] },
        },
      },
    },
  });
  expect(integration.status).toBe(201);
  const installation = await stack.api(
    'POST',
    `${project}/integrations/${integration.body.id}/installations`,
    {
      body: {
        groupRef,
        config: {
          content: {
            provider: 'stripe',
            subscribe: {
              objects: {
                customers: {
                  objectName: 'customers',
                  destination: 'billing',
                  createEvent: { enabled: 'always' },
                  updateEvent: { enabled: 'always', watchFieldsAuto: 'all' },
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
  installationId = installation.body.id;
  subscription = await eventually(() =>
    transaction((em) => em.findOne(SubscriptionEntity, { installationId })).then((row) =>
      row?.providerSubscriptionId ? row : undefined,
    ),
  );
  [customerId] = fake.seed('customers', [Date.now()]);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await fake?.stop();
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  delete process.env.FERRY_PUBLIC_API_URL;
  resetConfig();
});

describe('Stripe webhooks', () => {
  it('registers a webhook endpoint for the customer events and keeps its secret encrypted', () => {
    const endpoint = stripeWebhookEndpoints.get(subscription.providerSubscriptionId!)!;
    expect(endpoint).toMatchObject({
      url: expect.stringContaining(`/webhooks/providers/stripe/${subscription.id}`),
      enabled_events: ['customer.created', 'customer.updated', 'customer.deleted'],
    });
    const registered = fake.requests.find((logged) => logged.path === '/v1/webhook_endpoints')!;
    expect(registered.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(subscription.secretEncrypted).not.toContain(endpoint.secret);
    expect(decryptSecret(subscription.secretEncrypted!)).toBe(endpoint.secret);
  });

  it('delivers a signed update as a subscribe message: the record and the fields it changed', async () => {
    const event = fake.change('customers', customerId, { email: 'ada@analytical.example' });
    const response = await deliver(stripeWebhookDelivery(endpointSecret(), event));
    expect(response).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    const message = await nextMessage(1);
    expect(message.verified).toBe(true);
    expect(message.body).toMatchObject({
      action: 'subscribe',
      provider: 'stripe',
      installationId,
      objectName: 'customers',
    });
    const [entry] = message.body.result;
    expect(entry).toMatchObject({
      subscribeEventType: 'update',
      providerEventType: 'customer.updated',
      fieldsUpdated: ['email'],
      raw: { id: customerId, email: 'ada@analytical.example' },
      rawEvent: { id: event.id, type: 'customer.updated' },
    });
  });

  it('accepts any of several v1 signatures (a secret being rolled), and delivers a deletion by id', async () => {
    const event: StripeEvent = {
      ...fake.events.at(-1)!,
      id: `evt_${randomUUID().replaceAll('-', '')}`,
      type: 'customer.deleted',
      created: Math.floor(Date.now() / 1000),
    };
    delete event.data.previous_attributes;
    const response = await deliver(
      stripeWebhookDelivery(endpointSecret(), event, { extraSignatures: ['0'.repeat(64)] }),
    );
    expect(response.status).toBe(200);
    const [entry] = (await nextMessage(2)).body.result;
    expect(entry).toMatchObject({
      subscribeEventType: 'delete',
      providerEventType: 'customer.deleted',
      id: customerId,
    });
  });

  it('refuses a forged, a tampered and a stale delivery with 401, keeping nothing', async () => {
    const before = (await eventRows()).length;
    const event = { ...fake.events.at(-1)!, id: `evt_${randomUUID().replaceAll('-', '')}` };
    const forged = await deliver(stripeWebhookDelivery('whsec_not_the_secret', event));
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const good = stripeWebhookDelivery(endpointSecret(), event);
    const tampered = await deliver({ ...good, body: good.body.replace(customerId, 'cus_forged') });
    expect(tampered.status).toBe(401);
    const stale = await deliver(
      stripeWebhookDelivery(endpointSecret(), event, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
    );
    expect(stale.status).toBe(401);
    const unsigned = await deliver({ headers: { 'content-type': 'application/json' }, body: good.body });
    expect(unsigned.status).toBe(401);
    expect((await eventRows()).length).toBe(before);
  });

  it('delivers an event Stripe sends twice only once', async () => {
    const [first] = await eventRows();
    const rawEvent = (first.event as { rawEvent: Record<string, unknown> }).rawEvent;
    const delivered = subscribeMessages().length;
    const again = await deliver(stripeWebhookDelivery(endpointSecret(), rawEvent));
    expect(again).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    expect((await eventRows()).filter((row) => row.providerEventId === first.providerEventId)).toHaveLength(
      1,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(subscribeMessages()).toHaveLength(delivered);
  });
});

describe('Stripe connector details', () => {
  const connector = () =>
    connectorFor(
      {
        provider: 'stripe',
        templateVars: {},
        auth: async () => ({ type: 'apiKey', apiKey: fake.credential }),
      },
      { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2_000 } },
    );

  it('sends writes form-encoded with nested metadata, and retries a create only under an idempotency key', async () => {
    fake.failNext(1, 503);
    const unkeyed = await connector()
      .write({ objectName: 'customers', type: 'create', record: { name: 'Once' } })
      .catch((error: unknown) => error);
    expect(unkeyed).toMatchObject({ status: 503 });

    fake.failNext(1, 503);
    const before = fake.events.length;
    const created = await connector().write({
      objectName: 'customers',
      type: 'create',
      record: { name: 'Grace Hopper', metadata: { team: 'navy' } },
      idempotencyKey: 'op-1:0',
    });
    const sent = fake.requests
      .filter((logged) => logged.method === 'POST' && logged.path === '/v1/customers')
      .at(-1)!;
    expect(sent.headers['idempotency-key']).toBe('op-1:0');
    expect(sent.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(fake.stored('customers', created.recordId)).toMatchObject({
      name: 'Grace Hopper',
      metadata: { team: 'navy' },
    });
    // The same key again (an activity retried after the answer was lost) is answered, not applied.
    const replayed = await connector().write({
      objectName: 'customers',
      type: 'create',
      record: { name: 'Grace Hopper', metadata: { team: 'navy' } },
      idempotencyKey: 'op-1:0',
    });
    expect(replayed.recordId).toBe(created.recordId);
    expect(fake.events.length - before).toBe(1);
  });

  it('says why Stripe refused a write, in Stripe’s words', async () => {
    const error = await connector()
      .write({ objectName: 'customers', type: 'create', record: { nickname: 'x' } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message).toContain('Received unknown parameter: nickname');
  });

  it('lists deletions from the events feed only when asked, once per record, newest first', async () => {
    const since = new Date(Date.now() - 5000);
    const [kept, gone] = fake.seed('customers', [Date.now(), Date.now()]);
    fake.change('customers', kept, { name: 'First' });
    fake.change('customers', kept, { name: 'Second' });
    await connector().write({ objectName: 'customers', type: 'delete', recordId: gone });
    const until = new Date(Date.now() + 2000);
    const read = async (includeDeleted: boolean) =>
      (await connector().readPage({ objectName: 'customers', pageSize: 100, since, until, includeDeleted }))
        .records;
    const plain = await read(false);
    expect(plain.filter((record) => record.id === kept)).toEqual([
      expect.objectContaining({ raw: expect.objectContaining({ name: 'Second' }) }),
    ]);
    expect(plain.some((record) => record.id === gone)).toBe(false);
    const withDeleted = await read(true);
    expect(withDeleted.find((record) => record.id === gone)).toMatchObject({ deleted: true });
  });

  it('changes an endpoint’s events in place, keeping its secret, and removes it (twice is fine)', async () => {
    const webhookUrl =
      'https://ferry.example/v1/webhooks/providers/stripe/0b8a5b1e-0000-4000-8000-000000000003';
    const made = await connector().subscribe({ objectName: 'subscriptions', events: ['create'], webhookUrl });
    expect(stripeWebhookEndpoints.get(made.subscriptionId)).toMatchObject({
      url: webhookUrl,
      enabled_events: ['customer.subscription.created'],
      secret: made.secret,
    });
    const changed = await connector().updateSubscription(made.subscriptionId, {
      objectName: 'subscriptions',
      events: ['update', 'delete'],
      webhookUrl,
    });
    expect(changed).toEqual({ subscriptionId: made.subscriptionId });
    expect(stripeWebhookEndpoints.get(made.subscriptionId)).toMatchObject({
      enabled_events: ['customer.subscription.updated', 'customer.subscription.deleted'],
      secret: made.secret,
    });
    await connector().deleteSubscription(made.subscriptionId);
    expect(stripeWebhookEndpoints.has(made.subscriptionId)).toBe(false);
    await expect(connector().deleteSubscription(made.subscriptionId)).resolves.toBeUndefined();
  });

  it('refuses a signature made with another secret', () => {
    const event = fake.events.at(-1)!;
    const { headers, body } = stripeWebhookDelivery('whsec_right', event);
    expect(() => connector().verifyWebhook(headers, body, 'whsec_wrong')).toThrow(WebhookVerificationError);
  });
});
