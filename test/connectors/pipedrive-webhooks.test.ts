import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { WebhookVerificationError } from '../../src/providers/errors.js';
import { pipedriveWebhookDelivery, pipedriveWebhooks, startFakePipedrive } from './fakes/pipedrive.js';
import type { ConformanceFake } from './kit/conformance.js';

/**
 * Pipedrive's change events (webhooks v2): one webhook per object for every action, no signature
 * but the HTTP Basic credentials Ferry registered with it, `{data, previous, meta}` bodies whose
 * `previous` holds the old values of what changed.
 */

let fake: ConformanceFake;
let connector: Connector;
const webhookUrl =
  'https://ferry.example/v1/webhooks/providers/pipedrive/0b8a5b1e-0000-4000-8000-000000000002';

beforeAll(async () => {
  fake = await startFakePipedrive();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ pipedrive: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor({
    provider: 'pipedrive',
    templateVars: {},
    auth: async () => ({ type: 'oauth2', accessToken: fake.credential }),
  });
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

describe('Pipedrive webhooks', () => {
  let subscriptionId: string;
  let secret: string;

  it('registers a v2 webhook for the object with credentials of Ferry’s own making', async () => {
    const made = await connector.subscribe({ objectName: 'persons', events: ['update'], webhookUrl });
    subscriptionId = made.subscriptionId;
    secret = made.secret!;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(pipedriveWebhooks.get(subscriptionId)).toMatchObject({
      subscription_url: webhookUrl,
      event_action: '*',
      event_object: 'person',
      http_auth_user: 'ferry',
      http_auth_password: secret,
      version: '2.0',
    });
  });

  it('reads a change: the record, the fields whose old values came with it', () => {
    const { headers, body } = pipedriveWebhookDelivery(
      subscriptionId,
      { action: 'change', entity: 'person', entity_id: '42' },
      { id: 42, name: 'Ada Lovelace', update_time: '2026-11-23T10:00:00Z' },
      { name: 'Ada' },
    );
    const [event] = connector.verifyWebhook(headers, Buffer.from(body), secret);
    expect(event).toMatchObject({
      eventType: 'update',
      providerEventType: 'person.change',
      objectName: 'persons',
      recordId: '42',
      record: { id: 42, name: 'Ada Lovelace' },
      fieldsUpdated: ['name'],
      occurredAt: '2026-11-23T10:00:00.000Z',
    });
    expect(event.eventId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a delivery without the registered credentials', () => {
    const forged = pipedriveWebhookDelivery(
      subscriptionId,
      { action: 'delete', entity: 'person', entity_id: '42' },
      null,
      null,
      'guessed',
    );
    expect(() => connector.verifyWebhook(forged.headers, forged.body, secret)).toThrow(
      WebhookVerificationError,
    );
    expect(() => connector.verifyWebhook({}, forged.body, secret)).toThrow(/credentials/);
  });

  it('replaces the webhook on a change (Pipedrive cannot edit one) and removes it', async () => {
    const changed = await connector.updateSubscription(subscriptionId, {
      objectName: 'persons',
      events: ['create', 'update'],
      webhookUrl,
    });
    expect(pipedriveWebhooks.has(subscriptionId)).toBe(false);
    expect(pipedriveWebhooks.get(changed.subscriptionId)?.http_auth_password).toBe(changed.secret);
    await connector.deleteSubscription(changed.subscriptionId);
    expect(pipedriveWebhooks.size).toBe(0);
  });
});
