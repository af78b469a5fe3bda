import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectorDeclaration } from '../../src/providers/catalog/index.js';
import {
  checkDeclaration,
  ConnectorDeclarationError,
} from '../../src/providers/catalog/connector-declarations.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import {
  checkSignature,
  readWebhookEvents,
  renewalNotices,
} from '../../src/providers/declarative/webhooks.js';
import { ProviderError, WebhookVerificationError } from '../../src/providers/errors.js';
import { expiryOf, nextRenewalAt, renewalDue } from '../../src/domain/subscriptions/renewal.js';
import type { Subscription } from '../../src/db/entities/subscription.js';
import type { WebhooksDeclaration } from '../../src/schemas/connector-declaration.js';
import { startRecordingProvider, type RecordingProvider } from './support/recording-provider.js';

/**
 * Subscriptions that expire and providers that echo a secret per notification, as the engine reads
 * them from the microsoft and atlassian declarations: the expiry asked for and kept, the renew
 * request, clientState on every item of a batch, and a batch split into one event per item.
 */

const microsoft = connectorDeclaration('microsoft')!.webhooks!;
const atlassian = connectorDeclaration('atlassian')!.webhooks!;
const body = (value: unknown) => Buffer.from(JSON.stringify(value));

const connectorAt = (provider: string, baseUrl: string) =>
  connectorFor(
    { provider, templateVars: { cloudId: 'cloud-1' }, auth: async () => ({ type: 'none' }) },
    { baseUrl, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
  );

describe('Graph subscriptions: created with an expiry, renewed by PATCH', () => {
  let provider: RecordingProvider;
  let graphExpiry = '2026-12-01T10:00:00.0000000Z';
  beforeAll(async () => {
    provider = await startRecordingProvider(({ method, path }) => {
      if (method === 'POST')
        return { status: 201, body: { id: 'graph-sub-1', expirationDateTime: graphExpiry } };
      if (path.endsWith('/missing')) return { status: 404, body: { error: { code: 'ResourceNotFound' } } };
      return { status: 200, body: { id: 'graph-sub-1', expirationDateTime: graphExpiry } };
    });
  });
  afterAll(() => provider.close());

  it('asks for the declared lifetime, sends clientState and both URLs, and keeps the expiry Graph answers', async () => {
    const before = Date.now();
    const made = await connectorAt('microsoft', provider.url).subscribe({
      objectName: 'contacts',
      events: ['create', 'delete'],
      webhookUrl: 'https://ferry.example/v1/webhooks/providers/microsoft/s-1',
    });
    const sent = provider.seen.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1.0/subscriptions' });
    const request = sent.body as Record<string, string>;
    expect(request).toMatchObject({
      changeType: 'created,deleted',
      resource: 'me/contacts',
      notificationUrl: 'https://ferry.example/v1/webhooks/providers/microsoft/s-1',
      lifecycleNotificationUrl: 'https://ferry.example/v1/webhooks/providers/microsoft/s-1',
      clientState: made.secret,
    });
    expect(made.secret!.length).toBeLessThanOrEqual(128); // Graph's limit on clientState
    const asked = Date.parse(request.expirationDateTime) - before;
    expect(asked).toBeGreaterThanOrEqual(4230 * 60_000 - 5_000);
    expect(asked).toBeLessThanOrEqual(4230 * 60_000 + 5_000);
    expect(made).toMatchObject({ subscriptionId: 'graph-sub-1', expiresAt: '2026-12-01T10:00:00.000Z' });
  });

  it('renews with PATCH of expirationDateTime and answers the new expiry', async () => {
    graphExpiry = '2026-12-03T10:00:00Z';
    const expiresAt = await connectorAt('microsoft', provider.url).renewSubscription('graph-sub-1');
    const sent = provider.seen.at(-1)!;
    expect(sent).toMatchObject({ method: 'PATCH', path: '/v1.0/subscriptions/graph-sub-1' });
    expect(Object.keys(sent.body as object)).toEqual(['expirationDateTime']);
    expect(expiresAt).toBe('2026-12-03T10:00:00.000Z');
  });

  it('reports a subscription Graph no longer has as not found, for the caller to make it again', async () => {
    const renewing = connectorAt('microsoft', provider.url).renewSubscription('missing');
    await expect(renewing).rejects.toBeInstanceOf(ProviderError);
    await expect(renewing).rejects.toMatchObject({ isNotFound: true });
  });
});

describe('Jira webhooks: refreshed by PUT, expiry computed at create', () => {
  let provider: RecordingProvider;
  beforeAll(async () => {
    provider = await startRecordingProvider(({ method }) =>
      method === 'POST'
        ? { status: 200, body: { webhookRegistrationResult: [{ createdWebhookId: 42 }] } }
        : { status: 200, body: { expirationDate: '2027-01-01T00:00:00.000+0000' } },
    );
  });
  afterAll(() => provider.close());

  it('keeps 30 days from the create, which Jira does not answer, then the refresh’s expirationDate', async () => {
    const before = Date.now();
    const connector = connectorAt('atlassian', provider.url);
    const made = await connector.subscribe({
      objectName: 'issues',
      events: ['create', 'update', 'delete'],
      webhookUrl: 'https://ferry.example/v1/webhooks/providers/atlassian/s-2',
    });
    expect(made.subscriptionId).toBe('42');
    const lifetime = Date.parse(made.expiresAt!) - before;
    expect(Math.abs(lifetime - 30 * 86_400_000)).toBeLessThan(5_000);
    const renewed = await connector.renewSubscription('42');
    const sent = provider.seen.at(-1)!;
    expect(sent.method).toBe('PUT');
    expect(sent.path).toMatch(/\/3\/webhook\/refresh$/);
    expect(sent.body).toEqual({ webhookIds: ['42'] });
    expect(renewed).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('clientState on every notification of a batch', () => {
  const signature = microsoft.signature;
  const notification = (clientState: string | undefined, id: string, changeType = 'created') => ({
    subscriptionId: 'graph-sub-1',
    ...(clientState !== undefined && { clientState }),
    changeType,
    resource: `Users/u-1/Contacts/${id}`,
    resourceData: { '@odata.type': '#Microsoft.Graph.Contact', id },
    subscriptionExpirationDateTime: '2026-12-01T10:00:00Z',
    tenantId: 't-1',
  });
  const check = (value: unknown[]) => () =>
    checkSignature('microsoft', signature, {}, body({ value }), 'state-1');

  it('accepts a batch whose every item carries the secret', () => {
    expect(check([notification('state-1', 'c1'), notification('state-1', 'c2')])).not.toThrow();
  });

  it('refuses the whole batch when one item carries another secret, or none', () => {
    expect(check([notification('state-1', 'c1'), notification('state-2', 'c2')])).toThrow(
      WebhookVerificationError,
    );
    expect(check([notification('state-1', 'c1'), notification(undefined, 'c2')])).toThrow(
      /does not carry the secret/,
    );
    expect(check([])).toThrow(/lists no notifications/);
    expect(() => checkSignature('microsoft', signature, {}, body({}), 'state-1')).toThrow(
      /lists no notifications/,
    );
  });

  it('splits a batch into one event per notification, of the subscription’s object', () => {
    const raw = body({
      value: [
        notification('state-1', 'e1', 'created'),
        notification('state-1', 'e2', 'updated'),
        notification('state-1', 'e3', 'deleted'),
      ],
    });
    for (const objectName of ['contacts', 'events']) {
      const events = readWebhookEvents('microsoft', microsoft, raw, {}, objectName);
      expect(
        events.map(({ objectName: object, eventType, recordId }) => [object, eventType, recordId]),
      ).toEqual([
        [objectName, 'create', 'e1'],
        [objectName, 'update', 'e2'],
        [objectName, 'delete', 'e3'],
      ]);
      expect(events.every((event) => event.record === undefined)).toBe(true); // read by id
    }
  });

  it('names the lifecycle notices that ask for a renewal now', () => {
    const raw = body({
      value: [
        { clientState: 'state-1', lifecycleEvent: 'missed' },
        { clientState: 'state-1', lifecycleEvent: 'reauthorizationRequired' },
        notification('state-1', 'c1'),
      ],
    });
    expect(renewalNotices(microsoft, raw)).toEqual(['reauthorizationRequired']);
    expect(renewalNotices(microsoft, body({ value: [notification('state-1', 'c1')] }))).toEqual([]);
    expect(renewalNotices(atlassian, raw)).toEqual([]);
  });

  it('checks a lifecycle notification’s clientState but delivers no event for it', () => {
    const raw = body({
      value: [{ subscriptionId: 'graph-sub-1', clientState: 'state-1', lifecycleEvent: 'missed' }],
    });
    expect(() => checkSignature('microsoft', signature, {}, raw, 'state-1')).not.toThrow();
    expect(readWebhookEvents('microsoft', microsoft, raw, {}, 'contacts')).toEqual([]);
  });
});

describe('when renewals come', () => {
  const now = new Date('2026-11-28T00:00:00Z');
  const hours = (count: number) => new Date(now.getTime() + count * 3_600_000);

  it('is the lead time before the earliest expiry, and never sooner than a moment from now', () => {
    expect(nextRenewalAt([hours(72), hours(48), undefined], 24 * 3_600_000, now)).toEqual(hours(24));
    expect(nextRenewalAt([hours(1)], 24 * 3_600_000, now)).toEqual(new Date(now.getTime() + 1000));
    expect(nextRenewalAt([undefined], 1000, now)).toBeUndefined();
  });

  it('is due once the lead time before the expiry has come', () => {
    expect(renewalDue(hours(25), 24 * 3_600_000, now)).toBe(false);
    expect(renewalDue(hours(24), 24 * 3_600_000, now)).toBe(true);
    expect(renewalDue(undefined, 24 * 3_600_000, now)).toBe(false);
  });

  it('takes a subscription made before expiries were kept to expire a lifetime after its row last changed', () => {
    const row = (provider: string, expiresAt?: Date) =>
      ({ provider, updateTime: now, ...(expiresAt && { expiresAt }) }) as Subscription;
    expect(expiryOf(row('atlassian'))).toEqual(hours(30 * 24));
    expect(expiryOf(row('atlassian', hours(2)))).toEqual(hours(2));
    expect(expiryOf(row('stripe'))).toBeUndefined();
  });

  it('is declared for the providers whose subscriptions expire', () => {
    const lifetime = (webhooks: WebhooksDeclaration) => webhooks.renewal?.lifetimeSeconds;
    expect(lifetime(microsoft)).toBe(4230 * 60);
    expect(lifetime(atlassian)).toBe(30 * 86_400);
    expect(connectorDeclaration('stripe')?.webhooks?.renewal).toBeUndefined();
  });
});

describe('renewal declarations', () => {
  const declaration = (renewal: unknown) => ({
    ...connectorDeclaration('microsoft'),
    webhooks: { ...microsoft, renewal },
  });
  const problems = (renewal: unknown) => {
    try {
      checkDeclaration('microsoft.json', declaration(renewal), new Set(['microsoft']));
    } catch (error) {
      expect(error).toBeInstanceOf(ConnectorDeclarationError);
      return (error as Error).message;
    }
    return '';
  };

  it('needs the renew request to address the subscription, with placeholders known there', () => {
    const renew = (path: string) => ({
      lifetimeSeconds: 3600,
      request: { method: 'PATCH', path, body: { expirationDateTime: '{{expiresAt}}' } },
    });
    expect(problems(renew('/v1.0/subscriptions/{{subscriptionId}}'))).toBe('');
    expect(problems(renew('/v1.0/subscriptions'))).toContain(
      'webhooks.renewal.request: must address it with {{subscriptionId}}',
    );
    expect(problems(renew('/v1.0/subscriptions/{{subscriptionId}}/{{webhookUrl}}'))).toContain(
      '{{webhookUrl}} is not known here',
    );
  });
});
