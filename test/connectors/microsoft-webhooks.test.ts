import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SubscriptionEntity } from '../../src/db/entities/subscription.js';
import { transaction } from '../../src/db/orm.js';
import { getProvider } from '../../src/providers/catalog/index.js';
import { eventually } from '../installations/support.js';
import { request } from '../support/stack.js';
import type { ConformanceFake } from './kit/conformance.js';
import { startFakeMicrosoft } from './fakes/microsoft.js';
import {
  graphLifecycleDeliveries,
  graphNotificationDeliveries,
  graphRenewalOutages,
  graphSubscriptions,
  graphValidations,
  graphValidationSettings,
  OUTLOOK_MAX_EXPIRATION_MINUTES,
  type GraphChange,
  type GraphDelivery,
  type GraphSubscription,
} from './fakes/microsoft-webhooks.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * Microsoft Graph change notifications for Outlook contacts and events end to end, as Graph's
 * reference describes them: subscribing an installation creates a Graph subscription per object
 * (`POST /v1.0/subscriptions`), which Graph only creates once Ferry's public route echoed its
 * validation token; each notification Graph posts (`{value: [...]}`, several per POST, retried with
 * the same body) reaches the destination once when its `clientState` is the subscription's secret,
 * and is refused with 401, nothing kept, otherwise; Ferry renews the subscription (`PATCH`) before it
 * expires, so it keeps delivering past its first expiry, retries a refused renewal and surfaces it as
 * a failed operation, and makes again a subscription Graph removed; deleting the installation deletes
 * it.
 *
 * Renewal is made to come soon with FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS (renew that long before
 * the expiry): a lead 5 s short of Graph's longest lifetime renews about 5 s after subscribing.
 */

const LIFETIME_SECONDS = OUTLOOK_MAX_EXPIRATION_MINUTES * 60;
let fake: ConformanceFake;
let e2e: SubscribeE2e;
/** Expiry of each Graph subscription as created, before any renewal. */
const createdExpiry = new Map<string, number>();

const graphOf = (objectName: string): GraphSubscription => {
  const row = e2e.subscriptions.find((subscription) => subscription.objectName === objectName)!;
  return graphSubscriptions.get(row.providerSubscriptionId)!;
};
const graph = (method: string, path: string, body?: unknown) =>
  request(method, `${fake.url}${path}`, { bearer: fake.credential, ...(body !== undefined && { body }) });
/** The one POST Graph makes for these changes (Ferry gave each subscription its own URL). */
function notification(changes: GraphChange[], options: { clientState?: string; now?: number } = {}) {
  const deliveries = graphNotificationDeliveries(changes, { ...options, now: options.now ?? Date.now() });
  expect(deliveries).toHaveLength(1);
  return deliveries[0];
}
const post = (delivery: GraphDelivery) => e2e.post(delivery.url, delivery);
const results = (from: number) =>
  e2e
    .messages()
    .slice(from)
    .flatMap((message) => message.body.result);

beforeAll(async () => {
  process.env.FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS = String(LIFETIME_SECONDS - 5);
  process.env.FERRY_SUBSCRIPTION_RENEWAL_RETRY_SECONDS = '2';
  fake = await startFakeMicrosoft();
  e2e = await startSubscribeE2e({
    provider: 'microsoft',
    fake,
    objects: ['contacts', 'events'],
    connection: { oauth2AuthorizationCode: { accessToken: fake.credential, refreshToken: 'refresh-1' } },
  });
  for (const row of e2e.subscriptions) {
    const created = graphSubscriptions.get(row.providerSubscriptionId);
    if (created) createdExpiry.set(created.id, created.expiresAt);
  }
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
  delete process.env.FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS;
  delete process.env.FERRY_SUBSCRIPTION_RENEWAL_RETRY_SECONDS;
});

describe('Microsoft Graph change notifications', () => {
  it('creates a Graph subscription per object once the public route echoed the validation token', () => {
    expect(getProvider('microsoft')?.support.subscribe).toBe(true);
    for (const [objectName, resource] of [
      ['contacts', 'contacts'],
      ['events', 'events'],
    ]) {
      const row = e2e.subscriptions.find((subscription) => subscription.objectName === objectName)!;
      const subscription = graphOf(objectName);
      expect(subscription).toBeDefined();
      expect(subscription.resource).toMatch(new RegExp(`^/?me/${resource}$`, 'i'));
      expect(subscription.changeType.split(',').sort()).toEqual(['created', 'deleted', 'updated']);
      expect(subscription.notificationUrl).toContain(`/webhooks/providers/microsoft/${row.id}`);
      expect(subscription.clientState?.length).toBeGreaterThanOrEqual(16);
      // Graph validated the URL(s) before creating: each answered with the token.
      const validated = graphValidations.filter((validation) =>
        [subscription.notificationUrl, subscription.lifecycleNotificationUrl].includes(validation.url),
      );
      expect(validated.length).toBeGreaterThan(0);
      expect(validated.every((validation) => validation.status === 200 && !validation.error)).toBe(true);
    }
    // The two secrets differ: one leaked clientState does not open the other subscription.
    expect(graphOf('contacts').clientState).not.toBe(graphOf('events').clientState);
  });

  it('answers a validation request with the decoded token as text/plain', async () => {
    const { notificationUrl } = graphOf('contacts');
    const token = 'Validation: Testing client application reachability for subscription Request-Id: 1-2-3';
    const encoded = encodeURIComponent(token).replace(/%20/g, '+');
    const answer = await request('POST', `${notificationUrl}?validationToken=${encoded}`, {
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(answer.body).toBe(token);
  });

  it('delivers a contact created, updated and deleted, once each', async () => {
    const from = e2e.messages().length;
    const created = await graph('POST', '/v1.0/me/contacts', { givenName: 'Grace', surname: 'Hopper' });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const changeKey = () => String(fake.stored('contacts', id)?.changeKey);

    const first = await post(
      notification([{ object: 'contacts', changeType: 'created', id, changeKey: changeKey() }]),
    );
    expect(first.status).toBe(202);
    const message = await e2e.nextMessage(from + 1);
    expect(message.verified).toBe(true);
    expect(message.body).toMatchObject({
      action: 'subscribe',
      provider: 'microsoft',
      installationId: e2e.installationId,
      objectName: 'contacts',
    });
    expect(message.body.result[0]).toMatchObject({
      subscribeEventType: 'create',
      raw: expect.objectContaining({ id }),
    });

    expect((await graph('PATCH', `/v1.0/me/contacts/${id}`, { jobTitle: 'Rear Admiral' })).status).toBe(200);
    const second = await post(
      notification([{ object: 'contacts', changeType: 'updated', id, changeKey: changeKey() }]),
    );
    expect(second.status).toBe(202);
    expect((await e2e.nextMessage(from + 2)).body.result[0]).toMatchObject({
      subscribeEventType: 'update',
      raw: expect.objectContaining({ id }),
    });

    expect((await graph('DELETE', `/v1.0/me/contacts/${id}`)).status).toBe(204);
    expect((await post(notification([{ object: 'contacts', changeType: 'deleted', id }]))).status).toBe(202);
    expect((await e2e.nextMessage(from + 3)).body.result[0]).toMatchObject({
      subscribeEventType: 'delete',
      id,
    });

    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(results(from)).toHaveLength(3);
  });

  it('splits a POST holding several notifications into one event each', async () => {
    const from = e2e.messages().length;
    const ids = fake.seed('events', [Date.now(), Date.now()]);
    const delivery = notification(
      ids.map((id) => ({ object: 'events' as const, changeType: 'created' as const, id })),
    );
    expect(JSON.parse(delivery.body).value).toHaveLength(2);
    expect((await post(delivery)).status).toBe(202);
    await e2e.receiver.waitFor(() => results(from).length >= 2, 30_000, 'two event changes');
    expect(
      results(from)
        .map((result) => result.raw?.id ?? result.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(
      e2e
        .messages()
        .slice(from)
        .every((message) => message.body.objectName === 'events'),
    ).toBe(true);
  });

  it('delivers a notification Graph sends again (the same body) only once', async () => {
    const from = e2e.messages().length;
    const [id] = fake.seed('contacts', [Date.now()]);
    const delivery = notification([{ object: 'contacts', changeType: 'created', id }]);
    expect((await post(delivery)).status).toBe(202);
    await e2e.nextMessage(from + 1);
    expect((await post(delivery)).status).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(results(from)).toHaveLength(1);
  });

  it('answers 401 to a wrong or missing clientState, keeping nothing', async () => {
    const before = (await e2e.eventRows()).length;
    const messages = e2e.messages().length;
    const [id] = fake.seed('contacts', [Date.now()]);
    const change: GraphChange = { object: 'contacts', changeType: 'created', id };
    const forged = await post(notification([change], { clientState: 'not-the-secret' }));
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);
    // The other subscription's secret does not open this one.
    const crossed = await post(notification([change], { clientState: graphOf('events').clientState }));
    expect(crossed.status).toBe(401);
    const genuine = notification([change]);
    const body = JSON.parse(genuine.body) as { value: Record<string, unknown>[] };
    delete body.value[0].clientState;
    expect((await post({ ...genuine, body: JSON.stringify(body) })).status).toBe(401);
    expect((await e2e.eventRows()).length).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(e2e.messages()).toHaveLength(messages);
  });

  it('acknowledges lifecycle notifications without delivering a record change', async () => {
    const subscription = graphOf('events');
    const deliveries = graphLifecycleDeliveries(subscription.id, 'missed');
    if (!deliveries.length) return; // Ferry gave no lifecycleNotificationUrl: Graph sends none.
    const messages = e2e.messages().length;
    const answer = await post(deliveries[0]);
    expect(answer.status).toBeGreaterThanOrEqual(200);
    expect(answer.status).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(e2e.messages()).toHaveLength(messages);
  });

  it('renews each subscription before it expires, and it keeps delivering past its first expiry', async () => {
    const renewals = () =>
      fake.requests.filter(
        (logged) =>
          logged.method === 'PATCH' && /^\/v1\.0\/subscriptions\//.test(logged.path) && logged.status === 200,
      );
    for (const objectName of ['contacts', 'events']) {
      const subscription = graphOf(objectName);
      await eventually(
        async () => renewals().some((logged) => logged.path.endsWith(`/${subscription.id}`)),
        30_000,
      );
      // Renewed while alive (Graph answers 404 once it expired), to a later expiry within the cap.
      expect(subscription.expiresAt).toBeGreaterThan(createdExpiry.get(subscription.id)!);
    }
    // Graph's clock past the first expiry of both: without the renewals nothing would be sent.
    const past = Math.max(...createdExpiry.values()) + 1_000;
    fake.setClock(() => past);
    try {
      const from = e2e.messages().length;
      const [id] = fake.seed('contacts', [Date.now()]);
      expect(graphOf('contacts').expiresAt).toBeGreaterThan(past);
      expect(
        (await post(notification([{ object: 'contacts', changeType: 'created', id }], { now: past }))).status,
      ).toBe(202);
      expect((await e2e.nextMessage(from + 1)).body.result[0]).toMatchObject({
        subscribeEventType: 'create',
        raw: expect.objectContaining({ id }),
      });
    } finally {
      fake.setClock(() => Date.now());
    }
  }, 90_000);

  it('retries a renewal Graph refuses, surfaces the failure as an operation with logs, then renews', async () => {
    const subscription = graphOf('events');
    graphRenewalOutages.set(subscription.id, 1_000);
    const refused = () =>
      fake.requests.filter(
        (logged) =>
          logged.method === 'PATCH' && logged.path.endsWith(`/${subscription.id}`) && logged.status === 503,
      );
    await eventually(async () => refused().length >= 2, 60_000);
    const project = `/projects/${e2e.stack.project.id}`;
    const failed = await eventually(async () => {
      const page = await e2e.stack.api(
        'GET',
        `${project}/integrations/${e2e.integrationId}/installations/${e2e.installationId}/operations`,
      );
      return (page.body.results as { id: string; actionType: string; status: string }[]).find(
        (operation) => operation.actionType === 'subscribe' && operation.status === 'failure',
      );
    }, 90_000);
    const logs = await e2e.stack.api('GET', `${project}/operations/${failed.id}/logs`);
    expect(logs.status).toBe(200);
    expect(logs.body.length).toBeGreaterThan(0);

    graphRenewalOutages.delete(subscription.id);
    const before = subscription.expiresAt;
    await eventually(async () => subscription.expiresAt > before, 60_000);
  }, 180_000);

  it('makes again a subscription Graph removed, and the new one delivers', async () => {
    const removed = graphOf('contacts');
    // Graph drops it (a password reset, say) and tells the lifecycle URL, when Ferry gave one.
    const lifecycle = graphLifecycleDeliveries(removed.id, 'subscriptionRemoved');
    graphSubscriptions.delete(removed.id);
    if (lifecycle.length) expect((await post(lifecycle[0])).status).toBeLessThan(300);
    const row = await eventually(async () => {
      const rows = await transaction((em) =>
        em.find(SubscriptionEntity, { installationId: e2e.installationId, objectName: 'contacts' }),
      );
      return rows.find(
        (fresh) => fresh.providerSubscriptionId && graphSubscriptions.has(fresh.providerSubscriptionId),
      );
    }, 60_000);
    expect(row.providerSubscriptionId).not.toBe(removed.id);
    // The kit's rows were read at subscribe time: follow the new Graph subscription from here on.
    e2e.subscriptions.find((known) => known.id === row.id)!.providerSubscriptionId =
      row.providerSubscriptionId;

    const from = e2e.messages().length;
    const [id] = fake.seed('contacts', [Date.now()]);
    expect((await post(notification([{ object: 'contacts', changeType: 'created', id }]))).status).toBe(202);
    expect((await e2e.nextMessage(from + 1)).body.result[0]).toMatchObject({
      subscribeEventType: 'create',
      raw: expect.objectContaining({ id }),
    });
  }, 90_000);

  it('deletes the Graph subscriptions when the installation is deleted', async () => {
    const ids = e2e.subscriptions.map((row) => row.providerSubscriptionId);
    expect(ids.every((id) => graphSubscriptions.has(id))).toBe(true);
    await e2e.deleteInstallation();
    await eventually(async () => ids.every((id) => !graphSubscriptions.has(id)), 30_000);
    const deletes = fake.requests.filter(
      (logged) => logged.method === 'DELETE' && logged.path.startsWith('/v1.0/subscriptions/'),
    );
    expect(deletes.length).toBeGreaterThanOrEqual(ids.length);
  });
});

describe("Graph's subscription endpoint, as the fake holds it", () => {
  let endpoint: Server;
  let answer: 'echo' | 'wrong' | 'late' = 'echo';
  let url = '';

  beforeAll(async () => {
    endpoint = createServer((req, res) => {
      const token = new URL(req.url!, 'http://localhost').searchParams.get('validationToken') ?? '';
      const reply = () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(answer === 'wrong' ? `${token}-not` : token);
      };
      if (answer === 'late') setTimeout(reply, 600);
      else reply();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/notify`;
  });

  afterAll(async () => {
    graphValidationSettings.timeoutMs = 10_000;
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
  });

  const create = (minutes: number) =>
    graph('POST', '/v1.0/subscriptions', {
      changeType: 'created',
      notificationUrl: url,
      resource: 'me/events',
      expirationDateTime: new Date(Date.now() + minutes * 60_000).toISOString(),
      clientState: 'secret',
    });

  it('creates nothing when the validation answer is wrong or late', async () => {
    const count = graphSubscriptions.size;
    answer = 'wrong';
    expect(await create(60)).toMatchObject({ status: 400, body: { error: { code: 'ValidationError' } } });
    answer = 'late';
    graphValidationSettings.timeoutMs = 200;
    expect(await create(60)).toMatchObject({ status: 400, body: { error: { code: 'ValidationError' } } });
    expect(graphSubscriptions.size).toBe(count);
  });

  it(`refuses an expiry more than ${OUTLOOK_MAX_EXPIRATION_MINUTES} minutes ahead, on create and renew`, async () => {
    answer = 'echo';
    graphValidationSettings.timeoutMs = 10_000;
    expect(await create(OUTLOOK_MAX_EXPIRATION_MINUTES + 1)).toMatchObject({
      status: 400,
      body: { error: { code: 'ExtensionError' } },
    });
    const made = await create(60);
    expect(made.status).toBe(201);
    const renewTo = (minutes: number) =>
      graph('PATCH', `/v1.0/subscriptions/${made.body.id}`, {
        expirationDateTime: new Date(Date.now() + minutes * 60_000).toISOString(),
      });
    expect((await renewTo(OUTLOOK_MAX_EXPIRATION_MINUTES + 1)).status).toBe(400);
    expect((await renewTo(120)).status).toBe(200);
    expect((await graph('DELETE', `/v1.0/subscriptions/${made.body.id}`)).status).toBe(204);
    expect((await renewTo(120)).status).toBe(404);
  });
});
