import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  checkDeclaration,
  ConnectorDeclarationError,
} from '../../src/providers/catalog/connector-declarations.js';
import { checkSignature, readWebhookEvents } from '../../src/providers/declarative/webhooks.js';
import { WebhookVerificationError } from '../../src/providers/errors.js';
import type { WebhookSignature, WebhooksDeclaration } from '../../src/schemas/connector-declaration.js';

/**
 * The ways providers sign beyond Stripe's: HMAC-SHA1 with a prefix (Intercom), the signing time in
 * the body (Linear) or as ISO 8601 (Zendesk), a bearer JWT (Jira), event names and ids in headers
 * (GitHub, Shopify), several events for one change, and the app's client secret as the key.
 */

const now = Date.UTC(2026, 10, 27, 12);
const body = (value: unknown) => Buffer.from(JSON.stringify(value));
const hmac = (algorithm: string, key: string, text: string, encoding: 'hex' | 'base64' = 'hex') =>
  createHmac(algorithm, key).update(text).digest(encoding);
const check = (
  signature: WebhookSignature,
  headers: Record<string, string>,
  raw: Buffer,
  secret = 'secret',
) => checkSignature('acme', signature, headers, raw, secret, now);

describe('signature variants', () => {
  it('checks HMAC-SHA1 behind a sha1= prefix (Intercom)', () => {
    const signature: WebhookSignature = {
      scheme: 'hmac-sha1',
      header: 'X-Hub-Signature',
      pattern: '^sha1=([0-9a-f]{40})$',
      encoding: 'hex',
      signed: '{{body}}',
    };
    const raw = body({ id: 'notif_1' });
    expect(() =>
      check(signature, { 'x-hub-signature': `sha1=${hmac('sha1', 'secret', raw.toString())}` }, raw),
    ).not.toThrow();
    expect(() =>
      check(signature, { 'x-hub-signature': `sha1=${hmac('sha1', 'other', raw.toString())}` }, raw),
    ).toThrow(WebhookVerificationError);
    expect(() =>
      check(signature, { 'x-hub-signature': `sha1=${hmac('sha256', 'secret', raw.toString())}` }, raw),
    ).toThrow(/does not match/);
  });

  it('reads the signing time from the body in milliseconds (Linear), refusing an old one', () => {
    const signature: WebhookSignature = {
      header: 'Linear-Signature',
      encoding: 'hex',
      signed: '{{body}}',
      timestamp: { body: '/webhookTimestamp', unit: 'milliseconds' },
      toleranceSeconds: 60,
    };
    const fresh = body({ webhookTimestamp: now - 10_000 });
    expect(() =>
      check(signature, { 'linear-signature': hmac('sha256', 'secret', fresh.toString()) }, fresh),
    ).not.toThrow();
    const old = body({ webhookTimestamp: now - 120_000 });
    expect(() =>
      check(signature, { 'linear-signature': hmac('sha256', 'secret', old.toString()) }, old),
    ).toThrow(/too long ago/);
    const none = body({});
    expect(() =>
      check(signature, { 'linear-signature': hmac('sha256', 'secret', none.toString()) }, none),
    ).toThrow(/signing time/);
  });

  it('signs over an ISO 8601 signing time as it was sent (Zendesk)', () => {
    const signature: WebhookSignature = {
      header: 'X-Zendesk-Webhook-Signature',
      encoding: 'base64',
      signed: '{{timestamp}}{{body}}',
      timestamp: { header: 'X-Zendesk-Webhook-Signature-Timestamp', unit: 'iso' },
    };
    const raw = body({ id: 'e1' });
    const at = new Date(now - 5_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const headers = {
      'x-zendesk-webhook-signature-timestamp': at,
      'x-zendesk-webhook-signature': hmac('sha256', 'secret', `${at}${raw.toString()}`, 'base64'),
    };
    expect(() => check(signature, headers, raw)).not.toThrow();
    expect(() =>
      check(signature, { ...headers, 'x-zendesk-webhook-signature-timestamp': 'yesterday' }, raw),
    ).toThrow(/signing time/);
  });

  it('accepts a bearer JWT signed HS256 with the secret, within its times, and nothing else (Jira)', () => {
    const token = (claims: object, secret = 'secret', alg = 'HS256') => {
      const head = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      const signed =
        alg === 'none' ? '' : createHmac('sha256', secret).update(`${head}.${payload}`).digest('base64url');
      return `Bearer ${head}.${payload}.${signed}`;
    };
    const jwt: WebhookSignature = { scheme: 'jwt' };
    const seconds = now / 1000;
    const claims = { iat: seconds - 10, exp: seconds + 170 };
    expect(() => check(jwt, { authorization: token(claims) }, body({}))).not.toThrow();
    expect(() => check(jwt, { authorization: token(claims, 'other') }, body({}))).toThrow(/not signed with/);
    expect(() => check(jwt, { authorization: token(claims, 'secret', 'none') }, body({}))).toThrow(/HS256/);
    expect(() =>
      check(jwt, { authorization: token({ iat: seconds - 900, exp: seconds - 700 }) }, body({})),
    ).toThrow(/expired/);
    expect(() => check(jwt, { authorization: token({ iat: seconds - 10 }) }, body({}))).toThrow(/expired/);
    expect(() => check(jwt, {}, body({}))).toThrow(/no bearer token/);
  });
});

describe('events named by headers, and several events for one change', () => {
  const webhooks = {
    signature: { header: 'X-Hub-Signature-256', encoding: 'hex', signed: '{{body}}' },
    event: {
      id: { header: 'X-GitHub-Delivery' },
      type: [{ header: 'X-GitHub-Event' }, '/action'],
      recordId: ['/issue/number', '/label/name'],
      record: ['/issue', '/label'],
    },
    objects: {
      issues: {
        create: { name: 'issues.opened', register: 'issues' },
        update: [
          { name: 'issues.edited', register: 'issues' },
          { name: 'issues.closed', register: 'issues' },
        ],
        delete: { name: 'issues.deleted', register: 'issues' },
      },
      labels: { create: { name: 'label.created', register: 'label' } },
      products: { delete: 'products/delete', recordIdPrefix: 'gid://shopify/Product/' },
    },
  } as unknown as WebhooksDeclaration;

  it('reads the event name and id from headers, and any listed event as its change', () => {
    const headers = { 'X-GitHub-Event': 'issues', 'x-github-delivery': 'd-1' };
    const [closed] = readWebhookEvents(
      'acme',
      webhooks,
      body({ action: 'closed', issue: { number: 7 } }),
      headers,
    );
    expect(closed).toMatchObject({
      eventId: 'd-1',
      eventType: 'update',
      providerEventType: 'issues.closed',
      objectName: 'issues',
      recordId: '7',
    });
    const [labeled] = readWebhookEvents(
      'acme',
      webhooks,
      body({ action: 'labeled', issue: { number: 7 } }),
      headers,
    );
    expect(labeled).toMatchObject({ eventType: 'other', providerEventType: 'issues.labeled' });
    const label = { name: 'bug', color: 'f00' };
    const [created] = readWebhookEvents('acme', webhooks, body({ action: 'created', label }), {
      'X-GitHub-Event': 'label',
    });
    expect(created).toMatchObject({
      objectName: 'labels',
      eventType: 'create',
      recordId: 'bug',
      record: label,
    });
    // Shopify's deletion names the REST id: the declared prefix makes it the API's id.
    const shopify = {
      ...webhooks,
      event: {
        id: { header: 'X-Shopify-Webhook-Id' },
        type: [{ header: 'X-Shopify-Topic' }],
        recordId: ['/admin_graphql_api_id', '/id'],
      },
    } as unknown as WebhooksDeclaration;
    const topic = { 'X-Shopify-Topic': 'products/delete', 'X-Shopify-Webhook-Id': 'w-1' };
    const [gone] = readWebhookEvents('acme', shopify, body({ id: 788 }), topic);
    expect(gone).toMatchObject({
      eventId: 'w-1',
      eventType: 'delete',
      recordId: 'gid://shopify/Product/788',
    });
    const [kept] = readWebhookEvents(
      'acme',
      shopify,
      body({ id: 9, admin_graphql_api_id: 'gid://shopify/Product/9' }),
      topic,
    );
    expect(kept.recordId).toBe('gid://shopify/Product/9');
  });
});

describe('declarations of the variants', () => {
  const base = {
    provider: 'acme',
    reference: 'https://acme.example/docs',
    objects: { people: { id: '/id' } },
  };
  const problems = (hooks: unknown) => {
    try {
      checkDeclaration('acme.json', { ...base, webhooks: hooks }, new Set(['acme']));
      return '';
    } catch (error) {
      if (error instanceof ConnectorDeclarationError) return error.message;
      throw error;
    }
  };
  const hooks = (signature: unknown, extra: object = {}) => ({
    create: { request: { method: 'POST', path: '/hooks', body: { url: '{{webhookUrl}}' } }, id: '/id' },
    delete: { request: { method: 'DELETE', path: '/hooks/{{subscriptionId}}' } },
    signature,
    event: { type: ['/type'], recordId: '/id' },
    objects: { people: { create: ['person.created', 'person.imported'] } },
    ...extra,
  });

  it('loads a JWT scheme keyed by the app, and refuses another kept secret with it or a timestamp from two places', () => {
    expect(problems(hooks({ scheme: 'jwt' }, { signingKey: 'appClientSecret' }))).toBe('');
    expect(problems(hooks({ scheme: 'jwt' }, { signingKey: 'appClientSecret', ferrySecret: true }))).toMatch(
      /signingKey/,
    );
    const both = {
      header: 'S',
      encoding: 'hex',
      signed: '{{timestamp}}{{body}}',
      timestamp: { header: 'T', body: '/t', unit: 'iso' },
    };
    expect(problems(hooks(both))).toMatch(/exactly one of header and body/);
  });
});
