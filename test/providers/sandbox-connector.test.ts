import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { type Connector, type ProviderRecord } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import {
  CapabilityNotSupportedError,
  ConnectorInputError,
  ProviderError,
  WebhookVerificationError,
} from '../../src/providers/errors.js';
import { signSandboxPayload, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sandboxApiKeyTarget, sandboxOAuthTarget, startEchoServer } from './support.js';

let sandbox: Sandbox;
const anchor = '2026-03-01T00:00:00.000Z';

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 250, companies: 20, deals: 30, anchor });
});
afterAll(() => sandbox.close());
afterEach(() => sandbox.reset({ data: true }));

const retry = { baseDelayMs: 5, maxDelayMs: 20 };

async function readAll(
  source: Connector,
  input: Parameters<Connector['readPage']>[0],
): Promise<ProviderRecord[]> {
  const records: ProviderRecord[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await source.readPage({ ...input, pageToken });
    records.push(...result.records);
    if (result.done) return records;
    pageToken = result.nextPageToken;
  }
  throw new Error('read did not finish');
}

describe.each([
  ['sandboxApiKey', async () => connectorFor(sandboxApiKeyTarget(sandbox), { retry })],
  ['sandbox', async () => connectorFor(await sandboxOAuthTarget(sandbox), { retry })],
])('the %s connector', (provider, make) => {
  it('declares every capability', async () => {
    const source = await make();
    expect(source.provider).toBe(provider);
    expect(Object.values(source.capabilities).every(Boolean)).toBe(true);
  });

  it('reads every record of an object in pages, oldest first', async () => {
    const records = await readAll(await make(), { objectName: 'contacts', pageSize: 100 });
    expect(records).toHaveLength(250);
    expect(new Set(records.map((r) => r.id)).size).toBe(250);
    const times = records.map((r) => Date.parse(r.updatedAt!));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('reads a window [since, until) with chosen fields, matching the count', async () => {
    const source = await make();
    const all = await readAll(source, { objectName: 'deals', pageSize: 1000 });
    const since = new Date(all[5].updatedAt!);
    const until = new Date(all[20].updatedAt!);
    const window = await readAll(source, {
      objectName: 'deals',
      pageSize: 4,
      since,
      until,
      fields: ['name'],
    });
    expect(window.map((r) => r.id)).toEqual(all.slice(5, 20).map((r) => r.id));
    expect(Object.keys(window[0].raw).sort()).toEqual(['id', 'name', 'updatedAt']);
    expect(await source.estimateCount({ objectName: 'deals', since, until })).toBe(15);
    expect(await source.estimateCount({ objectName: 'deals' })).toBe(30);
  });

  it('creates, updates and deletes records, and lists the deletion when asked', async () => {
    const source = await make();
    const created = await source.write({
      objectName: 'contacts',
      type: 'create',
      record: { email: 'ada@example.com', firstName: 'Ada' },
    });
    expect(created.data).toMatchObject({ id: created.recordId, email: 'ada@example.com' });
    const updated = await source.write({
      objectName: 'contacts',
      type: 'update',
      record: { id: created.recordId, lastName: 'Lovelace' },
    });
    expect(updated.data).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace' });
    expect(
      await source.write({ objectName: 'contacts', type: 'delete', recordId: created.recordId }),
    ).toEqual({
      recordId: created.recordId,
    });
    const recent = await source.readPage({
      objectName: 'contacts',
      pageSize: 10,
      since: new Date(anchor),
      includeDeleted: true,
    });
    expect(recent.records).toEqual([expect.objectContaining({ id: created.recordId, deleted: true })]);
  });

  it('describes objects with the spec’s field metadata', async () => {
    const metadata = await (await make()).listObjectMetadata('deals');
    expect(metadata).toMatchObject({ name: 'deals', displayName: 'Deals' });
    expect(metadata.fields.name).toEqual({
      fieldName: 'name',
      displayName: 'Name',
      valueType: 'string',
      providerType: 'text',
      readOnly: false,
      isCustom: false,
      isRequired: true,
    });
    expect(metadata.fields.stage).toMatchObject({
      valueType: 'singleSelect',
      providerType: 'picklist',
      values: expect.arrayContaining([{ value: 'closed_won', displayValue: 'Closed won' }]),
    });
    expect(metadata.fields.amount.valueType).toBe('float');
    expect(metadata.fields.closeDate.valueType).toBe('date');
    expect(metadata.fields.id.readOnly).toBe(true);
  });

  it('upserts custom fields: created first, updated next, with warnings for what it cannot keep', async () => {
    const source = await make();
    const first = await source.upsertCustomFields('contacts', [
      {
        fieldName: 'tier',
        displayName: 'Tier',
        valueType: 'string',
        stringOptions: { values: ['gold', 'silver'], valuesRestricted: true },
      },
      { fieldName: 'score', displayName: 'Score', valueType: 'int', numericOptions: { min: 0 } },
    ]);
    expect(first.fields.tier).toMatchObject({
      action: 'create',
      metadata: {
        valueType: 'singleSelect',
        isCustom: true,
        values: [
          { value: 'gold', displayValue: 'gold' },
          { value: 'silver', displayValue: 'silver' },
        ],
      },
    });
    expect(first.fields.score.warnings).toEqual([expect.stringMatching(/Numeric options/)]);
    const second = await source.upsertCustomFields('contacts', [
      { fieldName: 'tier', displayName: 'Customer tier', valueType: 'string', stringOptions: { length: 40 } },
    ]);
    expect(second.fields.tier).toMatchObject({
      action: 'update',
      metadata: { displayName: 'Customer tier', valueType: 'string' },
    });
    expect((await source.listObjectMetadata('contacts')).fields.tier.displayName).toBe('Customer tier');
  });

  it('refuses custom fields the sandbox cannot create, before calling it', async () => {
    await expect(
      (await make()).upsertCustomFields('contacts', [
        {
          fieldName: 'tags',
          displayName: 'Tags',
          valueType: 'multiSelect',
          stringOptions: { values: ['a'] },
        },
      ]),
    ).rejects.toBeInstanceOf(CapabilityNotSupportedError);
  });

  it('subscribes to changes and verifies the signed events it receives', async () => {
    const receiver = await startEchoServer();
    try {
      const source = await make();
      const subscription = await source.subscribe({
        objectName: 'contacts',
        events: ['create', 'update'],
        webhookUrl: `${receiver.url}/hooks`,
      });
      expect(subscription.subscriptionId).toMatch(/^wh_/);
      expect(subscription.secret).toMatch(/^whsec_/);
      const created = await source.write({
        objectName: 'contacts',
        type: 'create',
        record: { email: 'b@example.com' },
      });
      await source.write({
        objectName: 'contacts',
        type: 'update',
        recordId: created.recordId,
        record: { jobTitle: 'CTO' },
      });
      await waitFor(() => receiver.received.length >= 2);
      const events = receiver.received.map((delivery) =>
        source.verifyWebhook(delivery.headers, delivery.body, subscription.secret!),
      );
      expect(events.map((list) => list[0].eventType)).toEqual(['create', 'update']);
      expect(events[1][0]).toMatchObject({
        providerEventType: 'contacts.updated',
        objectName: 'contacts',
        recordId: created.recordId,
        fieldsUpdated: ['jobTitle'],
        record: expect.objectContaining({ jobTitle: 'CTO' }),
      });

      const tampered = receiver.received[0].body.replace('b@example.com', 'x@example.com');
      expect(() =>
        source.verifyWebhook(receiver.received[0].headers, tampered, subscription.secret!),
      ).toThrow(WebhookVerificationError);
      expect(() => source.verifyWebhook({}, receiver.received[0].body, subscription.secret!)).toThrow(
        /no X-Sandbox-Signature/,
      );
      const old = signSandboxPayload(
        subscription.secret!,
        receiver.received[0].body,
        Math.floor(Date.now() / 1000) - 3600,
      );
      expect(() =>
        source.verifyWebhook({ 'x-sandbox-signature': old }, receiver.received[0].body, subscription.secret!),
      ).toThrow(WebhookVerificationError);

      await source.updateSubscription(subscription.subscriptionId, {
        objectName: 'contacts',
        events: ['delete'],
        webhookUrl: `${receiver.url}/hooks`,
      });
      await source.write({ objectName: 'contacts', type: 'delete', recordId: created.recordId });
      await waitFor(() => receiver.received.length >= 3);
      expect(
        source.verifyWebhook(
          receiver.received[2].headers,
          receiver.received[2].body,
          subscription.secret!,
        )[0],
      ).toMatchObject({
        eventType: 'delete',
        recordId: created.recordId,
      });

      await source.deleteSubscription(subscription.subscriptionId);
      await source.deleteSubscription(subscription.subscriptionId); // already gone: fine
    } finally {
      await receiver.close();
    }
  });

  it('proxies an authenticated request', async () => {
    const response = await (
      await make()
    ).proxy({ method: 'GET', path: '/me', headers: { Authorization: 'Bearer caller' } });
    expect(response.status).toBe(200);
    expect(JSON.parse(Buffer.from(response.body).toString('utf8'))).toMatchObject({
      authType: provider === 'sandbox' ? 'oauth' : 'apiKey',
    });
  });
});

describe('sandbox connector errors', () => {
  const source = () => connectorFor(sandboxApiKeyTarget(sandbox), { retry });

  it('answers an unknown object with a 404 ProviderError', async () => {
    const error = await source()
      .listObjectMetadata('widgets')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 404, isNotFound: true, retryable: false });
  });

  it('passes the sandbox’s validation message on', async () => {
    await expect(
      source().write({ objectName: 'contacts', type: 'create', record: { email: 'nope' } }),
    ).rejects.toMatchObject({ status: 400, providerMessage: 'The contacts record is invalid.' });
  });

  it('needs a record id to delete', async () => {
    await expect(source().write({ objectName: 'contacts', type: 'delete' })).rejects.toBeInstanceOf(
      ConnectorInputError,
    );
  });

  it('refuses associations, which the sandbox does not have', async () => {
    await expect(
      source().write({
        objectName: 'deals',
        type: 'create',
        record: { name: 'x' },
        associations: [{ to: 1 }],
      }),
    ).rejects.toBeInstanceOf(CapabilityNotSupportedError);
  });

  it('refuses proxy paths that leave the provider’s base URL', async () => {
    await expect(source().proxy({ method: 'GET', path: 'https://example.com/x' })).rejects.toBeInstanceOf(
      CapabilityNotSupportedError,
    );
    await expect(source().proxy({ method: 'GET', path: '/../../_control/faults' })).rejects.toBeInstanceOf(
      CapabilityNotSupportedError,
    );
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
