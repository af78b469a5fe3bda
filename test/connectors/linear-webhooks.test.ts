import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decryptSecret } from '../../src/crypto/secrets.js';
import { eventually } from '../installations/support.js';
import { request } from '../support/stack.js';
import { startFakeLinear, type FakeLinear } from './fakes/linear.js';
import { linearWebhookDelivery, linearWebhooks, type LinearChange } from './fakes/linear-webhooks.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * Linear's change events end to end, as its webhook reference describes them: subscribing an
 * installation to issues registers a webhook with `webhookCreate` (resource type `Issue`, a secret
 * Ferry chooses); deliveries signed `Linear-Signature` (hex HMAC-SHA256 of the body) with
 * `webhookTimestamp` in the body reach the destination once; a forged, tampered or stale one is
 * refused with 401 and nothing kept; deleting the installation deletes the webhook.
 */

let fake: FakeLinear;
let e2e: SubscribeE2e;
let webhookId: string;
let issueId: string;

const webhook = () => linearWebhooks.get(webhookId)!;
const deliver = (delivery: { headers: Record<string, string>; body: string }) =>
  e2e.post(webhook().url, delivery);
const issue = () => fake.stored('issues', issueId) as Record<string, unknown>;
const change = (action: LinearChange['action'], updatedFrom?: Record<string, unknown>): LinearChange => ({
  action,
  type: 'Issue',
  record: issue() ?? { id: issueId },
  ...(updatedFrom && { updatedFrom }),
});

beforeAll(async () => {
  fake = await startFakeLinear();
  e2e = await startSubscribeE2e({
    provider: 'linear',
    fake,
    objects: ['issues'],
    app: { clientId: 'linear-client', clientSecret: 'linear-client-secret' },
    connection: { oauth2AuthorizationCode: { accessToken: fake.credential, refreshToken: 'refresh-1' } },
  });
  webhookId = e2e.subscriptions[0].providerSubscriptionId;
  [issueId] = fake.seed('issues', [Date.now() - 60_000]);
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
});

describe('Linear webhooks', () => {
  it('registers a webhook for issues with a secret Ferry chose, kept encrypted', () => {
    expect(webhook()).toMatchObject({
      url: expect.stringContaining(`/webhooks/providers/linear/${e2e.subscriptions[0].id}`),
      resourceTypes: ['Issue'],
      enabled: true,
    });
    expect(webhook().allPublicTeams || webhook().team !== null).toBe(true);
    const registered = fake.requests.find((logged) =>
      String((logged.body as { query?: unknown })?.query ?? '').includes('webhookCreate'),
    )!;
    expect(JSON.stringify(registered.body)).toContain(webhook().secret);
    const stored = e2e.subscriptions[0].secretEncrypted!;
    expect(stored).not.toContain(webhook().secret);
    expect(decryptSecret(stored)).toBe(webhook().secret);
  });

  it('delivers a signed creation and an update with what it changed, once each', async () => {
    const created = await deliver(linearWebhookDelivery(webhookId, change('create')));
    expect(created).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    const first = await e2e.nextMessage(1);
    expect(first.verified).toBe(true);
    expect(first.body).toMatchObject({
      action: 'subscribe',
      provider: 'linear',
      installationId: e2e.installationId,
      objectName: 'issues',
    });
    expect(first.body.result[0]).toMatchObject({
      subscribeEventType: 'create',
      raw: expect.objectContaining({ id: issueId }),
    });

    const before = String(issue().title);
    const renamed = await request('POST', fake.url, {
      bearer: fake.credential,
      body: {
        query:
          'mutation($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { success } }',
        variables: { id: issueId, input: { title: 'Ship webhooks' } },
      },
    });
    expect(renamed.status).toBe(200);
    const updated = await deliver(linearWebhookDelivery(webhookId, change('update', { title: before })));
    expect(updated.status).toBe(200);
    const [entry] = (await e2e.nextMessage(2)).body.result;
    expect(entry).toMatchObject({
      subscribeEventType: 'update',
      fieldsUpdated: ['title'],
      raw: expect.objectContaining({ id: issueId, title: 'Ship webhooks' }),
    });
  });

  it('delivers a removal by id', async () => {
    const removed = await deliver(linearWebhookDelivery(webhookId, change('remove')));
    expect(removed.status).toBe(200);
    expect((await e2e.nextMessage(3)).body.result[0]).toMatchObject({
      subscribeEventType: 'delete',
      id: issueId,
    });
  });

  it('refuses a forged, a tampered, a stale and an unsigned delivery with 401, keeping nothing', async () => {
    const before = (await e2e.eventRows()).length;
    const forged = await deliver(
      linearWebhookDelivery(webhookId, change('update'), { secret: 'not-the-secret' }),
    );
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const good = linearWebhookDelivery(webhookId, change('update'));
    const tampered = await deliver({
      ...good,
      body: good.body.replace(issueId, '00000000-0000-4000-8000-000000000000'),
    });
    expect(tampered.status).toBe(401);
    // Linear's SDK refuses a delivery more than a minute from now.
    const stale = await deliver(
      linearWebhookDelivery(webhookId, change('update'), { timestamp: Date.now() - 120_000 }),
    );
    expect(stale.status).toBe(401);
    const { 'linear-signature': _, ...unsigned } = good.headers;
    expect((await deliver({ headers: unsigned, body: good.body })).status).toBe(401);
    expect((await e2e.eventRows()).length).toBe(before);
  });

  it('delivers a delivery Linear sends twice only once', async () => {
    const delivery = linearWebhookDelivery(webhookId, change('update', { priority: 0 }));
    const count = e2e.messages().length;
    expect(await deliver(delivery)).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    await e2e.nextMessage(count + 1);
    expect(await deliver(delivery)).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(e2e.messages()).toHaveLength(count + 1);
  });

  it('deletes the webhook when the installation is deleted', async () => {
    await e2e.deleteInstallation();
    await eventually(async () => !linearWebhooks.has(webhookId), 30_000);
  });
});
