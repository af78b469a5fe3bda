import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Subscription } from '../../src/db/entities/subscription.js';
import { getProvider } from '../../src/providers/catalog/index.js';
import { GITHUB_OWNER, GITHUB_REPO, startFakeGithub } from './fakes/github.js';
import {
  githubEventContext,
  githubHooks,
  githubPingPayload,
  githubWebhookDelivery,
  type GithubDeliveryOptions,
} from './fakes/github-webhooks.js';
import type { ConformanceFake } from './kit/conformance.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * GitHub's change events end to end, as its webhook reference describes them: an installation that
 * subscribes to issues registers a repository webhook (`POST /repos/{owner}/{repo}/hooks`, JSON
 * content, the `issues` event, a secret of Ferry's making); deliveries signed
 * `X-Hub-Signature-256: sha256=<hex HMAC of the body>`, their event in `X-GitHub-Event` and their id
 * in `X-GitHub-Delivery`, reach the destination once each as subscribe messages; a forged or
 * unsigned one is refused with 401 and nothing kept; uninstalling removes the hook.
 */

let fake: ConformanceFake;
let e2e: SubscribeE2e;
let subscription: Subscription;
let hookId: number;
const context = () => githubEventContext(GITHUB_OWNER, GITHUB_REPO, fake.url);

const hook = () => githubHooks.get(hookId)!;
const deliver = (event: string, payload: Record<string, unknown>, options?: GithubDeliveryOptions) => {
  const delivery = githubWebhookDelivery(hookId, event, payload, options);
  return e2e.post(hook().config.url, delivery).then((response) => ({ response, delivery }));
};
/** Which issue an entry is about, from the event GitHub sent (an entry names its record's id only on a deletion). */
const about = (item: any) => String(item.rawEvent?.issue?.number);
/** The subscribe message of an issue's change, once it arrived. */
async function messageFor(number: string, change: string) {
  const entry = (message: { body: any }) =>
    (message.body.result as any[]).find(
      (item) => about(item) === number && item.subscribeEventType === change,
    );
  await e2e.receiver.waitFor(() => e2e.messages().some(entry), 30_000, `${change} of issue ${number}`);
  return e2e.messages().find(entry)!;
}
const issuePayload = (
  action: string,
  issue: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  action,
  issue,
  ...extra,
  ...context(),
});

beforeAll(async () => {
  fake = await startFakeGithub();
  e2e = await startSubscribeE2e({
    provider: 'github',
    fake,
    objects: ['issues'],
    app: { clientId: 'github-client', clientSecret: 'github-secret' },
    connection: {
      providerMetadata: {
        owner: { value: GITHUB_OWNER, source: 'input' },
        repo: { value: GITHUB_REPO, source: 'input' },
      },
      oauth2AuthorizationCode: { accessToken: fake.credential, refreshToken: 'refresh-1' },
    },
  });
  [subscription] = e2e.subscriptions;
  hookId = Number(subscription.providerSubscriptionId);
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
});

describe('GitHub webhooks', () => {
  it('says GitHub can subscribe, from its declaration', () => {
    expect(getProvider('github')?.support.subscribe).toBe(true);
  });

  it('registers a JSON repository webhook for issue events, with a secret of Ferry’s making', () => {
    expect(hook()).toMatchObject({
      active: true,
      events: ['issues'],
      config: {
        url: expect.stringContaining(`/webhooks/providers/github/${subscription.id}`),
        content_type: 'json',
      },
    });
    expect(hook().config.secret!.length).toBeGreaterThanOrEqual(20);
    const registered = fake.requests.find(
      (logged) => logged.method === 'POST' && logged.path === `/repos/${GITHUB_OWNER}/${GITHUB_REPO}/hooks`,
    )!;
    expect(registered.status).toBe(201);
    expect(subscription.secretEncrypted).toBeTruthy();
    expect(subscription.secretEncrypted).not.toContain(hook().config.secret);
  });

  it('answers the ping GitHub sends when the hook is made', async () => {
    const { response } = await deliver('ping', githubPingPayload(hookId, context()));
    expect(response.status).toBe(200);
  });

  it('delivers an opened, an edited and a deleted issue as subscribe messages', async () => {
    const [number] = fake.seed('issues', [Date.now()]);
    const opened = await deliver('issues', issuePayload('opened', fake.stored('issues', number)!));
    expect(opened.response).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    const created = await messageFor(number, 'create');
    expect(created.verified).toBe(true);
    expect(created.body).toMatchObject({
      action: 'subscribe',
      provider: 'github',
      installationId: e2e.installationId,
      objectName: 'issues',
    });

    const before = String(fake.stored('issues', number)!.title);
    fake.touch('issues', number, Date.now());
    await deliver(
      'issues',
      issuePayload('edited', fake.stored('issues', number)!, { changes: { body: { from: `Seeded` } } }),
    );
    const [updated] = (await messageFor(number, 'update')).body.result.filter(
      (item: any) => about(item) === number,
    );
    expect(updated).toMatchObject({
      subscribeEventType: 'update',
      fieldsUpdated: ['body'],
      raw: { number: Number(number), title: before },
    });

    const last = fake.stored('issues', number)!;
    fake.remove('issues', number, Date.now());
    await deliver('issues', issuePayload('deleted', last));
    const [deleted] = (await messageFor(number, 'delete')).body.result.filter(
      (item: any) => about(item) === number,
    );
    expect(deleted).toMatchObject({ subscribeEventType: 'delete', id: number });
  });

  it('delivers an event GitHub redelivers (the same X-GitHub-Delivery) only once', async () => {
    const [number] = fake.seed('issues', [Date.now()]);
    const payload = issuePayload('opened', fake.stored('issues', number)!);
    const first = await deliver('issues', payload);
    expect(first.response.body).toMatchObject({ received: 1, duplicates: 0 });
    await messageFor(number, 'create');
    const again = await deliver('issues', payload, { deliveryId: first.delivery.deliveryId });
    expect(again.response).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const creates = e2e
      .messages()
      .flatMap((message) => message.body.result as any[])
      .filter((item) => about(item) === number && item.subscribeEventType === 'create');
    expect(creates).toHaveLength(1);
  });

  it('refuses a forged, a tampered and an unsigned delivery with 401, keeping nothing', async () => {
    const before = (await e2e.eventRows()).length;
    const [number] = fake.seed('issues', [Date.now()]);
    const payload = issuePayload('opened', fake.stored('issues', number)!);
    const forged = await deliver('issues', payload, { secret: 'not-the-secret' });
    expect(forged.response.status).toBe(401);
    expect(forged.response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const good = githubWebhookDelivery(hookId, 'issues', payload);
    const tampered = await e2e.post(hook().config.url, {
      ...good,
      body: good.body.replace(`Issue `, 'Forged '),
    });
    expect(tampered.status).toBe(401);
    const headers = { ...good.headers };
    delete headers['x-hub-signature-256'];
    delete headers['x-hub-signature'];
    expect((await e2e.post(hook().config.url, { headers, body: good.body })).status).toBe(401);
    // The legacy SHA-1 signature alone is not enough.
    const sha1Only = { ...good.headers };
    delete sha1Only['x-hub-signature-256'];
    expect((await e2e.post(hook().config.url, { headers: sha1Only, body: good.body })).status).toBe(401);
    expect((await e2e.eventRows()).length).toBe(before);
  });

  it('removes the hook when the installation is deleted', async () => {
    await e2e.deleteInstallation();
    await e2e.receiver.waitFor(() => !githubHooks.has(hookId), 30_000, 'the hook removed');
    expect(githubHooks.has(hookId)).toBe(false);
  });
});
