import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { getProvider } from '../../src/providers/catalog/index.js';
import type { Connector } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { WebhookVerificationError } from '../../src/providers/errors.js';
import {
  copperFixturePersonId,
  copperUserEmail,
  copperWebhookNotification,
  copperWebhooks,
  startFakeCopper,
} from './fakes/copper.js';
import type { ConformanceFake } from './kit/conformance.js';

/**
 * Copper's change events as its webhook reference describes them: one subscription per entity
 * type and event (`new`, `update`, `delete`), no signature but the `secret` key/values Ferry
 * registered, echoed in each notification; a notification names up to 30 records by `ids` only,
 * and an update's `updated_attributes` holds `[old, new]` per changed field.
 */

let fake: ConformanceFake;
let connector: Connector;
const webhookUrl = 'https://ferry.example/v1/webhooks/providers/copper/0b8a5b1e-0000-4000-8000-000000000003';

beforeAll(async () => {
  fake = await startFakeCopper();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ copper: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor({
    provider: 'copper',
    templateVars: { userEmail: copperUserEmail },
    auth: async () => ({ type: 'apiKey', apiKey: fake.credential }),
  });
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

describe('Copper webhooks', () => {
  let subscriptionId: string;
  let secret: string;
  const ids = () => subscriptionId.split(',').map(Number);

  it('says Copper can subscribe, from its declaration', () => {
    expect(getProvider('copper')?.support.subscribe).toBe(true);
  });

  it('registers one Copper subscription per event, each with a secret of Ferry’s making', async () => {
    const made = await connector.subscribe({
      objectName: 'people',
      events: ['create', 'update', 'delete'],
      webhookUrl,
    });
    subscriptionId = made.subscriptionId;
    secret = made.secret!;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(ids()).toHaveLength(3);
    expect(ids().map((id) => copperWebhooks.get(id))).toEqual([
      expect.objectContaining({
        target: webhookUrl,
        type: 'person',
        event: 'new',
        secret: { ferry_secret: secret },
      }),
      expect.objectContaining({ type: 'person', event: 'update', secret: { ferry_secret: secret } }),
      expect.objectContaining({ type: 'person', event: 'delete', secret: { ferry_secret: secret } }),
    ]);
  });

  it('reads a notification as one event per record, by id, with the fields an update changed', () => {
    const [, update, remove] = ids();
    const body = copperWebhookNotification(update, [copperFixturePersonId, 7], {
      updated_attributes: { title: ['CTO', 'CEO'], custom_fields: { '101': [1001, 1002] } },
    });
    const events = connector.verifyWebhook({ 'content-type': 'application/json' }, Buffer.from(body), secret);
    expect(events).toEqual([
      {
        eventType: 'update',
        providerEventType: 'person.update',
        objectName: 'people',
        recordId: String(copperFixturePersonId),
        fieldsUpdated: ['title', 'custom_fields'],
        occurredAt: JSON.parse(body).timestamp,
        rawEvent: JSON.parse(body),
      },
      expect.objectContaining({ eventType: 'update', recordId: '7' }),
    ]);
    expect(events[0]).not.toHaveProperty('record');
    const [deleted] = connector.verifyWebhook(
      {},
      Buffer.from(copperWebhookNotification(remove, [9])),
      secret,
    );
    expect(deleted).toMatchObject({ eventType: 'delete', providerEventType: 'person.delete', recordId: '9' });
  });

  it('refuses a notification without the registered secret, or with another', () => {
    const [created] = ids();
    const body = copperWebhookNotification(created, [1]);
    expect(() => connector.verifyWebhook({}, Buffer.from(body), 'not-the-secret')).toThrow(
      WebhookVerificationError,
    );
    const bare = JSON.stringify({ ...JSON.parse(body), ferry_secret: undefined });
    expect(() => connector.verifyWebhook({}, Buffer.from(bare), secret)).toThrow(/does not carry the secret/);
  });

  it('changes the events by registering anew, and removes every subscription (twice is fine)', async () => {
    const before = ids();
    const changed = await connector.updateSubscription(subscriptionId, {
      objectName: 'people',
      events: ['delete'],
      webhookUrl,
    });
    for (const id of before) expect(copperWebhooks.has(id)).toBe(false);
    subscriptionId = changed.subscriptionId;
    expect(ids().map((id) => copperWebhooks.get(id)?.event)).toEqual(['delete']);
    await connector.deleteSubscription(subscriptionId);
    expect(copperWebhooks.has(ids()[0])).toBe(false);
    await expect(connector.deleteSubscription(subscriptionId)).resolves.toBeUndefined();
  });

  it('removes what it registered when Copper refuses part of a subscription', async () => {
    const count = copperWebhooks.size;
    await expect(
      connector.subscribe({
        objectName: 'people',
        events: ['create', 'update'],
        webhookUrl: 'http://plain.example/x',
      }),
    ).rejects.toThrow(/Invalid URI/);
    expect(copperWebhooks.size).toBe(count);
    // One subscription short of Copper's 100 per account: the first event registers, the second cannot.
    const filler = [...Array(99 - count).keys()].map((index) => 900_000 + index);
    for (const id of filler) {
      copperWebhooks.set(id, { id, target: webhookUrl, type: 'task', event: 'new', created_at: 0 });
    }
    const partial = connector.subscribe({
      objectName: 'companies',
      events: ['create', 'update'],
      webhookUrl,
    });
    await expect(partial).rejects.toThrow(/limit/);
    expect(copperWebhooks.size).toBe(99);
    for (const id of filler) copperWebhooks.delete(id);
  });
});
