import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../installations/support.js';
import type { ConformanceFake } from './kit/conformance.js';
import { JIRA_CLOUD_ID, startFakeAtlassian } from './fakes/atlassian.js';
import { jiraWebhookDeliveries, jiraWebhooks, type JiraIssueEvent } from './fakes/atlassian-webhooks.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * Jira's dynamic webhooks expire 30 days after they are registered or last refreshed
 * (https://developer.atlassian.com/cloud/jira/platform/webhooks/#registering-a-webhook-using-the-rest-api--for-connect-and-oauth-2-0-apps-):
 * an expired one delivers nothing, so Ferry refreshes them (`PUT /rest/api/3/webhook/refresh`
 * `{webhookIds}`) before then, and the subscription keeps delivering past its first expiry.
 *
 * Renewal is made to come soon with FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS (renew that long before
 * the expiry): a lead 5 s short of 30 days refreshes about 5 s after subscribing.
 */

const THIRTY_DAYS_MS = 30 * 86_400_000;
const clientSecret = `jira-secret-${randomUUID()}`;
let fake: ConformanceFake;
let e2e: SubscribeE2e;
/** No webhook was registered after this: each first expires by `subscribedAt + 30 days`. */
let subscribedAt: number;

const webhookIds = () =>
  e2e.subscriptions.flatMap((row) => row.providerSubscriptionId.split(',')).map(Number);
const refreshes = () =>
  fake.requests.filter(
    (logged) =>
      logged.method === 'PUT' && logged.path.endsWith('/3/webhook/refresh') && logged.status === 200,
  );

beforeAll(async () => {
  process.env.FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS = String(THIRTY_DAYS_MS / 1000 - 5);
  fake = await startFakeAtlassian();
  e2e = await startSubscribeE2e({
    provider: 'atlassian',
    fake,
    objects: ['issues'],
    app: { clientId: 'jira-client', clientSecret },
    connection: {
      providerMetadata: { cloudId: JIRA_CLOUD_ID },
      oauth2AuthorizationCode: { accessToken: fake.credential, refreshToken: 'refresh-1' },
    },
  });
  subscribedAt = Date.now();
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
  delete process.env.FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS;
});

describe('Jira webhook renewal', () => {
  it('refreshes the webhooks before they expire, and they keep delivering past their first expiry', async () => {
    const ids = webhookIds();
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => jiraWebhooks.get(id)!.expiresAt <= subscribedAt + THIRTY_DAYS_MS)).toBe(true);
    // A refresh made more than a second after subscribing moves every expiry past `first`.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const seen = refreshes().length;
    await eventually(async () => {
      const named = refreshes()
        .slice(seen)
        .flatMap((logged) => ((logged.body as { webhookIds?: unknown[] })?.webhookIds ?? []).map(Number));
      return ids.every((id) => named.includes(id));
    }, 30_000);

    const first = subscribedAt + THIRTY_DAYS_MS + 1_000;
    fake.setClock(() => first);
    try {
      for (const id of ids) expect(jiraWebhooks.get(id)!.expiresAt).toBeGreaterThan(first);
      const [issueId] = fake.seed('issues', [Date.now()]);
      const event: JiraIssueEvent = {
        webhookEvent: 'jira:issue_created',
        issue: fake.stored('issues', issueId) as JiraIssueEvent['issue'],
      };
      const deliveries = jiraWebhookDeliveries(clientSecret, event, { now: first });
      expect(deliveries).toHaveLength(1);
      const from = e2e.messages().length;
      expect((await e2e.post(deliveries[0].url, deliveries[0])).status).toBe(200);
      expect((await e2e.nextMessage(from + 1)).body.result[0]).toMatchObject({
        subscribeEventType: 'create',
        raw: expect.objectContaining({ id: issueId }),
      });
    } finally {
      fake.setClock(() => Date.now());
    }
  }, 90_000);

  it('lets a webhook that was not refreshed in time lapse, as Jira does', () => {
    const [id] = webhookIds();
    const webhook = jiraWebhooks.get(id)!;
    const event: JiraIssueEvent = {
      webhookEvent: 'jira:issue_created',
      issue: fake.stored('issues', fake.seed('issues', [Date.now()])[0]) as JiraIssueEvent['issue'],
    };
    expect(jiraWebhookDeliveries(clientSecret, event, { now: webhook.expiresAt + 1 })).toHaveLength(0);
  });
});
