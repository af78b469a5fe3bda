import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getProvider } from '../../src/providers/catalog/index.js';
import { eventually } from '../installations/support.js';
import { request } from '../support/stack.js';
import type { ConformanceFake } from './kit/conformance.js';
import { JIRA_CLOUD_ID, startFakeAtlassian } from './fakes/atlassian.js';
import {
  jiraWebhookDeliveries,
  jiraWebhooks,
  jiraWebhookToken,
  webhookJql,
  type JiraIssueEvent,
} from './fakes/atlassian-webhooks.js';
import { startSubscribeE2e, type SubscribeE2e } from './kit/subscribe-e2e.js';

/**
 * Jira Cloud's issue events end to end, as its webhook reference describes them for OAuth 2.0 apps:
 * subscribing an installation to issues registers dynamic webhooks (`POST /rest/api/3/webhook`, a
 * JQL filter of the subset Jira supports, the issue events); Jira posts each event with
 * `Authorization: Bearer <JWT>`, signed HS256 with the app's client secret; it reaches the
 * destination once; a token of another secret, an expired one, an unsigned one (`alg: none`) or
 * none is refused with 401 and nothing kept; deleting the installation deletes the webhooks.
 */

const clientSecret = `jira-secret-${randomUUID()}`;
let fake: ConformanceFake;
let e2e: SubscribeE2e;
let issueId: string;

const issue = () => fake.stored('issues', issueId) as JiraIssueEvent['issue'];
const webhooksOf = () =>
  e2e.subscriptions
    .flatMap((row) => row.providerSubscriptionId.split(','))
    .map((id) => jiraWebhooks.get(Number(id))!);
/** Posts what Jira sends for the event: one request (Ferry registered one URL per subscription). */
async function deliver(event: JiraIssueEvent, options: Parameters<typeof jiraWebhookDeliveries>[2] = {}) {
  const deliveries = jiraWebhookDeliveries(clientSecret, event, options);
  expect(deliveries).toHaveLength(1);
  return { delivery: deliveries[0], response: await e2e.post(deliveries[0].url, deliveries[0]) };
}
const jira = (method: string, path: string, body?: unknown) =>
  request(method, `${fake.url}${path}`, { bearer: fake.credential, ...(body !== undefined && { body }) });

beforeAll(async () => {
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
  [issueId] = fake.seed('issues', [Date.now() - 60_000]);
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await fake?.stop();
});

describe('Jira webhooks', () => {
  it('registers dynamic webhooks for the issue events, with a JQL filter Jira supports', () => {
    expect(getProvider('atlassian')?.support.subscribe).toBe(true);
    const webhooks = webhooksOf();
    expect(webhooks.length).toBeGreaterThan(0);
    expect(webhooks.every(Boolean)).toBe(true);
    expect(new Set(webhooks.flatMap((webhook) => webhook.events))).toEqual(
      new Set(['jira:issue_created', 'jira:issue_updated', 'jira:issue_deleted']),
    );
    for (const webhook of webhooks) {
      expect(webhook.url).toContain(`/webhooks/providers/atlassian/${e2e.subscriptions[0].id}`);
      expect(typeof webhookJql(webhook.jqlFilter)).not.toBe('string');
    }
  });

  it('delivers a creation, an update with the field it changed, and a deletion, once each', async () => {
    const created = await deliver({ webhookEvent: 'jira:issue_created', issue: issue() });
    expect(created.response).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    const first = await e2e.nextMessage(1);
    expect(first.verified).toBe(true);
    expect(first.body).toMatchObject({
      action: 'subscribe',
      provider: 'atlassian',
      installationId: e2e.installationId,
      objectName: 'issues',
    });
    expect(first.body.result[0]).toMatchObject({
      subscribeEventType: 'create',
      providerEventType: 'jira:issue_created',
      // The record itself says which it is; `id` is on deletions only (the public message shape).
      raw: expect.objectContaining({ id: issueId }),
    });
    expect(first.body.result[0].id).toBeUndefined();

    const before = String(issue().fields.summary);
    expect((await jira('PUT', `/3/issue/${issueId}`, { fields: { summary: 'Ship webhooks' } })).status).toBe(
      204,
    );
    const updated = await deliver({
      webhookEvent: 'jira:issue_updated',
      issue: issue(),
      changes: [{ fieldId: 'summary', from: before, to: 'Ship webhooks' }],
    });
    expect(updated.response.status).toBe(200);
    expect((await e2e.nextMessage(2)).body.result[0]).toMatchObject({
      subscribeEventType: 'update',
      providerEventType: 'jira:issue_updated',
      raw: expect.objectContaining({ id: issueId }),
      fieldsUpdated: ['summary'],
    });

    const last = issue();
    expect((await jira('DELETE', `/3/issue/${issueId}`)).status).toBe(204);
    expect((await deliver({ webhookEvent: 'jira:issue_deleted', issue: last })).response.status).toBe(200);
    expect((await e2e.nextMessage(3)).body.result[0]).toMatchObject({
      subscribeEventType: 'delete',
      providerEventType: 'jira:issue_deleted',
      id: issueId,
    });
  });

  it('delivers an event Jira retries (a new token, the same body) only once', async () => {
    const [id] = fake.seed('issues', [Date.now()]);
    const event: JiraIssueEvent = {
      webhookEvent: 'jira:issue_created',
      issue: fake.stored('issues', id) as JiraIssueEvent['issue'],
      timestamp: Date.now(),
    };
    const count = e2e.messages().length;
    const { delivery, response } = await deliver(event);
    expect(response).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    await e2e.nextMessage(count + 1);
    const retried = await e2e.post(delivery.url, {
      headers: {
        ...delivery.headers,
        authorization: `Bearer ${jiraWebhookToken(clientSecret)}`,
        'x-atlassian-webhook-retry': '1',
      },
      body: delivery.body,
    });
    expect(retried).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(e2e.messages()).toHaveLength(count + 1);
  });

  it('answers 401 to a token of another secret, an expired one, an unsigned one or none, keeping nothing', async () => {
    const before = (await e2e.eventRows()).length;
    const [id] = fake.seed('issues', [Date.now()]);
    const event: JiraIssueEvent = {
      webhookEvent: 'jira:issue_created',
      issue: fake.stored('issues', id) as JiraIssueEvent['issue'],
    };
    const forged = await deliver(event, { token: jiraWebhookToken('not-the-client-secret') });
    expect(forged.response.status).toBe(401);
    expect(forged.response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const expired = jiraWebhookToken(clientSecret, { issuedAt: Date.now() - 3_600_000 });
    expect((await deliver(event, { token: expired })).response.status).toBe(401);
    const unsigned = jiraWebhookToken(clientSecret, { alg: 'none' });
    expect((await deliver(event, { token: unsigned })).response.status).toBe(401);
    const { delivery, response: malformed } = await deliver(event, { token: 'not.a.jwt' });
    expect(malformed.status).toBe(401);
    const { authorization: _, ...bare } = delivery.headers;
    expect((await e2e.post(delivery.url, { headers: bare, body: delivery.body })).status).toBe(401);
    expect((await e2e.eventRows()).length).toBe(before);
  });

  it('refuses JQL the dynamic webhooks do not support, as Jira does', async () => {
    const answer = await jira('POST', '/3/webhook', {
      url: 'https://ferry.example/hook',
      webhooks: [{ events: ['jira:issue_created'], jqlFilter: 'project is not EMPTY' }],
    });
    expect(answer).toMatchObject({
      status: 200,
      body: { webhookRegistrationResult: [{ errors: [expect.any(String)] }] },
    });
  });

  it('deletes the webhooks when the installation is deleted', async () => {
    const ids = webhooksOf().map((webhook) => webhook.id);
    await e2e.deleteInstallation();
    await eventually(async () => ids.every((id) => !jiraWebhooks.has(id)), 30_000);
  });
});
