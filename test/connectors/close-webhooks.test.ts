import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { getProvider } from '../../src/providers/catalog/index.js';
import type { Connector } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { WebhookVerificationError } from '../../src/providers/errors.js';
import { closeFixtureLeadId, closeWebhookDelivery, closeWebhooks, startFakeClose } from './fakes/close.js';
import type { ConformanceFake } from './kit/conformance.js';

/**
 * Close's change events as its webhook reference describes them: one subscription per object
 * listing `{object_type, action}` events, a hex signature key, `close-sig-hash` over timestamp and
 * body, and `{subscription_id, event}` bodies whose `changed_fields` name what an update changed.
 */

let fake: ConformanceFake;
let connector: Connector;
const webhookUrl = 'https://ferry.example/v1/webhooks/providers/close/0b8a5b1e-0000-4000-8000-000000000001';

beforeAll(async () => {
  fake = await startFakeClose();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ close: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor({
    provider: 'close',
    templateVars: {},
    auth: async () => ({ type: 'oauth2', accessToken: fake.credential }),
  });
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

const leadEvent = (action: string, extra: Record<string, unknown> = {}) => ({
  id: `ev_${Math.random().toString(36).slice(2)}`,
  date_created: '2026-11-23T10:00:00.123000+00:00',
  object_type: 'lead',
  object_id: closeFixtureLeadId,
  action,
  data: { id: closeFixtureLeadId, name: 'Fixture Inc' },
  ...extra,
});

describe('Close webhooks', () => {
  let subscriptionId: string;
  let secret: string;

  it('says Close can subscribe, from its declaration', () => {
    expect(getProvider('close')?.support.subscribe).toBe(true);
  });

  it('registers one subscription per object, for the changes asked', async () => {
    const made = await connector.subscribe({ objectName: 'lead', events: ['create', 'update'], webhookUrl });
    subscriptionId = made.subscriptionId;
    secret = made.secret!;
    expect(subscriptionId).toMatch(/^whsub_/);
    expect(closeWebhooks.get(subscriptionId)).toMatchObject({
      url: webhookUrl,
      events: [
        { object_type: 'lead', action: 'created' },
        { object_type: 'lead', action: 'updated' },
      ],
      signature_key: secret,
    });
  });

  it('reads a signed update: the record, what changed, and when', () => {
    const event = leadEvent('updated', { changed_fields: ['name'], previous_data: { name: 'Old' } });
    const { headers, body } = closeWebhookDelivery(subscriptionId, event);
    const [received] = connector.verifyWebhook(headers, Buffer.from(body), secret);
    expect(received).toEqual({
      eventId: event.id,
      eventType: 'update',
      providerEventType: 'lead.updated',
      objectName: 'lead',
      recordId: closeFixtureLeadId,
      record: event.data,
      fieldsUpdated: ['name'],
      occurredAt: '2026-11-23T10:00:00.123Z',
      rawEvent: { subscription_id: subscriptionId, event },
    });
    const [deleted] = connector.verifyWebhook(
      ...(Object.values(closeWebhookDelivery(subscriptionId, leadEvent('deleted'))) as [
        Record<string, string>,
        string,
      ]),
      secret,
    );
    expect(deleted).toMatchObject({ eventType: 'delete', recordId: closeFixtureLeadId });
    expect(deleted).not.toHaveProperty('record');
  });

  it('refuses a delivery signed with another key, a changed body or an old timestamp', () => {
    const event = leadEvent('created');
    const forged = closeWebhookDelivery(subscriptionId, event, { signatureKey: 'ab'.repeat(32) });
    expect(() => connector.verifyWebhook(forged.headers, forged.body, secret)).toThrow(
      WebhookVerificationError,
    );
    const good = closeWebhookDelivery(subscriptionId, event);
    expect(() =>
      connector.verifyWebhook(good.headers, good.body.replace('Fixture', 'Forged'), secret),
    ).toThrow(/does not match/);
    const old = closeWebhookDelivery(subscriptionId, event, {
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    expect(() => connector.verifyWebhook(old.headers, old.body, secret)).toThrow(/too long ago/);
  });

  it('changes the subscription in place, and removes it (twice is fine)', async () => {
    const changed = await connector.updateSubscription(subscriptionId, {
      objectName: 'lead',
      events: ['delete'],
      webhookUrl,
    });
    expect(changed.subscriptionId).toBe(subscriptionId);
    expect(closeWebhooks.get(subscriptionId)?.events).toEqual([{ object_type: 'lead', action: 'deleted' }]);
    await connector.deleteSubscription(subscriptionId);
    expect(closeWebhooks.has(subscriptionId)).toBe(false);
    await expect(connector.deleteSubscription(subscriptionId)).resolves.toBeUndefined();
  });
});
