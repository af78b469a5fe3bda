import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  ConnectorDeclarationError,
  checkDeclaration,
} from '../../src/providers/catalog/connector-declarations.js';
import {
  checkSignature,
  objectsOfEvent,
  readWebhookEvents,
} from '../../src/providers/declarative/webhooks.js';
import { WebhookVerificationError } from '../../src/providers/errors.js';
import type { HmacSignature } from '../../src/schemas/connector-declaration.js';

/** Declared webhooks: what loads, how signatures are checked, and how events read. */

const known = new Set(['acme']);

/** Stripe-like: `t=…,v1=…` over `{{timestamp}}.{{body}}`, secret issued with the subscription. */
function webhooks(): any {
  return {
    create: {
      request: { method: 'POST', path: '/hooks', body: { url: '{{webhookUrl}}', events: '{{events}}' } },
      id: '/id',
      secret: '/secret',
    },
    delete: { request: { method: 'DELETE', path: '/hooks/{{subscriptionId}}' } },
    signature: {
      header: 'Acme-Signature',
      pattern: 'v1=([0-9a-f]{64})',
      encoding: 'hex',
      signed: '{{timestamp}}.{{body}}',
      timestamp: { header: 'Acme-Signature', pattern: 't=(\\d+)', unit: 'seconds' },
    },
    event: {
      list: '/events',
      id: '/id',
      type: ['/object', '/action'],
      recordId: '/data/id',
      record: '/data',
      occurredAt: { field: '/at', format: 'unixSeconds' },
      fieldsUpdated: { pointer: '/previous', as: 'keys' },
    },
    objects: { people: { create: 'person.created', update: 'person.updated', delete: 'person.deleted' } },
  };
}

function declaration(hooks: unknown = webhooks()): any {
  return {
    provider: 'acme',
    reference: 'https://acme.example/docs',
    objects: { people: { id: '/id' } },
    webhooks: hooks,
  };
}

function problemsOf(value: unknown): string {
  try {
    checkDeclaration('acme.json', value, known);
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorDeclarationError);
    return (error as Error).message;
  }
  throw new Error('the declaration was accepted');
}

const sign = (secret: string, timestamp: number, body: string) =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

describe('declared webhooks load only when they make sense', () => {
  it('accepts a valid declaration', () => {
    expect(() => checkDeclaration('acme.json', declaration(), known)).not.toThrow();
  });

  it('refuses a registration without the webhook URL, or a delete without the subscription id', () => {
    const bad = webhooks();
    bad.create.request.body = { events: '{{events}}' };
    bad.delete.request.path = '/hooks';
    const problems = problemsOf(declaration(bad));
    expect(problems).toContain('acme: webhooks.create.request: must send {{webhookUrl}}');
    expect(problems).toContain('acme: webhooks.delete.request: must address it with {{subscriptionId}}');
  });

  it('refuses events of objects it does not declare, patterns that do not compile, and a signed text without the body', () => {
    const bad = webhooks();
    bad.objects.ghosts = { create: 'ghost.created' };
    bad.signature.pattern = 'v1=([0-9a-f';
    bad.signature.signed = '{{timestamp}}';
    const problems = problemsOf(declaration(bad));
    expect(problems).toContain('webhooks.objects.ghosts: names no declared object');
    expect(problems).toContain('webhooks.signature.pattern');
    expect(problems).toContain('webhooks.signature.signed: must include {{body}}');
  });

  it('refuses {{timestamp}} when no signing time is declared, and placeholders not known there', () => {
    const bad = webhooks();
    delete bad.signature.timestamp;
    bad.delete.request.path = '/hooks/{{subscriptionId}}/{{webhookUrl}}';
    const problems = problemsOf(declaration(bad));
    expect(problems).toContain('uses {{timestamp}} but no timestamp is declared');
    expect(problems).toContain('{{webhookUrl}} is not known here');
  });
});

describe('the basic scheme', () => {
  it('needs a secret of Ferry’s making, which is its password', () => {
    const basic = webhooks();
    basic.signature = { scheme: 'basic', username: 'ferry' };
    expect(problemsOf(declaration(basic))).toContain('the basic scheme needs ferrySecret');
    basic.ferrySecret = true;
    basic.create.request.body.password = '{{secret}}';
    expect(() => checkDeclaration('acme.json', declaration(basic), known)).not.toThrow();
  });

  it('accepts only the registered credentials', () => {
    const signature = { scheme: 'basic' as const, username: 'ferry' };
    const authorization = `Basic ${Buffer.from('ferry:s3cret').toString('base64')}`;
    expect(() =>
      checkSignature('acme', signature, { Authorization: authorization }, Buffer.from('{}'), 's3cret'),
    ).not.toThrow();
    expect(() =>
      checkSignature('acme', signature, { Authorization: authorization }, Buffer.from('{}'), 'other'),
    ).toThrow(WebhookVerificationError);
  });
});

describe('signatures', () => {
  const declared = webhooks().signature as HmacSignature;
  const body = JSON.stringify({ events: [] });
  const now = Date.now();
  const t = Math.floor(now / 1000);

  it('accepts the right signature, also beside an old one during a rotation', () => {
    const header = `t=${t},v1=${sign('old', t, body)},v1=${sign('secret', t, body)}`;
    expect(() =>
      checkSignature('acme', declared, { 'acme-signature': header }, Buffer.from(body), 'secret', now),
    ).not.toThrow();
  });

  it('refuses a wrong secret, a changed body, a missing header and an old signing time', () => {
    const check =
      (headers: Record<string, string>, raw = body) =>
      () =>
        checkSignature('acme', declared, headers, Buffer.from(raw), 'secret', now);
    const good = `t=${t},v1=${sign('secret', t, body)}`;
    expect(check({ 'Acme-Signature': `t=${t},v1=${sign('wrong', t, body)}` })).toThrow(
      WebhookVerificationError,
    );
    expect(check({ 'Acme-Signature': good }, body.replace('[]', '[1]'))).toThrow(/does not match/);
    expect(check({})).toThrow(/no Acme-Signature header/);
    const old = t - 3600;
    expect(check({ 'Acme-Signature': `t=${old},v1=${sign('secret', old, body)}` })).toThrow(/too long ago/);
  });

  it('decodes the secret as declared (Close signs with a hex key, over timestamp and body)', () => {
    const key = 'a1b2c3d4e5f6';
    const close: HmacSignature = {
      header: 'close-sig-hash',
      encoding: 'hex',
      signed: '{{timestamp}}{{body}}',
      timestamp: { header: 'close-sig-timestamp', unit: 'seconds' },
      secretEncoding: 'hex',
    };
    const hash = createHmac('sha256', Buffer.from(key, 'hex')).update(`${t}${body}`).digest('hex');
    const headers = { 'close-sig-hash': hash, 'close-sig-timestamp': String(t) };
    expect(() => checkSignature('close', close, headers, Buffer.from(body), key, now)).not.toThrow();
    expect(() => checkSignature('close', close, headers, Buffer.from(body), 'a1b2c3d4e5f7', now)).toThrow(
      WebhookVerificationError,
    );
  });
});

describe('events', () => {
  it('reads each listed event: its object and change by name, the record, changed fields and time', () => {
    const body = {
      events: [
        {
          id: 'e1',
          object: 'person',
          action: 'updated',
          at: 1_700_000_000,
          data: { id: 7, name: 'Ada' },
          previous: { name: 'A' },
        },
        { id: 'e2', object: 'person', action: 'deleted', data: { id: 8 } },
        { id: 'e3', object: 'person', action: 'merged', data: { id: 9 } },
      ],
    };
    const events = readWebhookEvents('acme', webhooks(), Buffer.from(JSON.stringify(body)));
    expect(events[0]).toMatchObject({
      eventId: 'e1',
      eventType: 'update',
      providerEventType: 'person.updated',
      objectName: 'people',
      recordId: '7',
      record: { id: 7, name: 'Ada' },
      fieldsUpdated: ['name'],
      occurredAt: '2023-11-14T22:13:20.000Z',
      rawEvent: body.events[0],
    });
    expect(events[1]).toMatchObject({ eventType: 'delete', recordId: '8' });
    expect(events[1]).not.toHaveProperty('record');
    expect(events[2]).toMatchObject({ eventType: 'other', providerEventType: 'person.merged' });
  });

  it('refuses a body that is not JSON', () => {
    expect(() => readWebhookEvents('acme', webhooks(), Buffer.from('<xml/>'))).toThrow(
      WebhookVerificationError,
    );
  });
});

describe('the echoed scheme, per-event registrations and events naming several records', () => {
  const echoed = () => {
    const hooks = webhooks();
    hooks.signature = { scheme: 'echoed', at: ['/token', '/secret/token'] };
    hooks.ferrySecret = true;
    hooks.create = {
      request: {
        method: 'POST',
        path: '/hooks',
        body: { url: '{{webhookUrl}}', event: '{{event}}', secret: { token: '{{secret}}' } },
      },
      id: '/id',
      perEvent: true,
    };
    hooks.event = {
      type: ['/type', '/event'],
      recordIds: '/ids',
      fieldsUpdated: { pointer: '/changed', as: 'keys' },
    };
    hooks.objects = { people: { create: { name: 'person.new', register: 'new' } } };
    return hooks;
  };

  it('loads only with a secret of Ferry’s making, {{event}} sent per event, and one way to the record id', () => {
    expect(() => checkDeclaration('acme.json', declaration(echoed()), known)).not.toThrow();
    const noSecret = echoed();
    delete noSecret.ferrySecret;
    delete noSecret.create.request.body.secret;
    expect(problemsOf(declaration(noSecret))).toContain('the echoed scheme needs ferrySecret');
    const noEvent = echoed();
    delete noEvent.create.request.body.event;
    expect(problemsOf(declaration(noEvent))).toContain('perEvent needs {{event}} sent');
    const both = echoed();
    both.event.recordId = '/id';
    expect(problemsOf(declaration(both))).toContain('exactly one of recordId and recordIds');
    const elsewhere = webhooks();
    elsewhere.create.request.body.event = '{{event}}';
    expect(problemsOf(declaration(elsewhere))).toContain('{{event}} is not known here');
  });

  it('accepts the echoed secret at any declared place, and nothing else', () => {
    const signature = { scheme: 'echoed' as const, at: ['/token', '/secret/token'] };
    const check = (body: unknown, secret = 's3cret') =>
      checkSignature('acme', signature, {}, Buffer.from(JSON.stringify(body)), secret);
    expect(() => check({ token: 's3cret' })).not.toThrow();
    expect(() => check({ secret: { token: 's3cret' } })).not.toThrow();
    expect(() => check({ token: 's3cret' }, 'other')).toThrow(/another secret/);
    expect(() => check({ token: 's3cre' })).toThrow(WebhookVerificationError);
    expect(() => check({ ids: [1] })).toThrow(/does not carry the secret/);
    expect(() => checkSignature('acme', signature, {}, Buffer.from('nope'), 's3cret')).toThrow(/not JSON/);
  });

  it('makes one event per listed record, each with what changed', () => {
    const body = { type: 'person', event: 'new', ids: [4, 5], changed: { name: ['a', 'b'] }, token: 'x' };
    const events = readWebhookEvents('acme', echoed(), Buffer.from(JSON.stringify(body)));
    expect(events.map((event) => [event.recordId, event.eventType, event.providerEventType])).toEqual([
      ['4', 'create', 'person.new'],
      ['5', 'create', 'person.new'],
    ]);
    expect(events[0]).toMatchObject({ fieldsUpdated: ['name'], objectName: 'people', rawEvent: body });
    expect(() =>
      readWebhookEvents('acme', echoed(), Buffer.from(JSON.stringify({ type: 'person', event: 'new' }))),
    ).toThrow(/no record ids/);
  });
});

describe('app-level webhooks (HubSpot-like)', () => {
  const appLevel = () => ({
    appLevel: true,
    signature: {
      header: 'X-Sig',
      encoding: 'base64',
      signed: '{{method}}{{uri}}{{body}}{{timestamp}}',
      timestamp: { header: 'X-Time', unit: 'milliseconds' },
    },
    event: {
      list: '',
      id: ['/eventId', '/subscriptionId'],
      workspace: '/portalId',
      type: ['/subscriptionType'],
      recordId: '/objectId',
      fieldsUpdated: { pointer: '/propertyName', as: 'name' },
    },
    objects: { people: { create: 'person.creation', delete: 'person.deletion' } },
  });

  it('loads without registration requests, and only with a workspace to route by', () => {
    expect(() => checkDeclaration('acme.json', declaration(appLevel()), known)).not.toThrow();
    const registering: any = { ...appLevel(), delete: webhooks().delete };
    expect(problemsOf(declaration(registering))).toContain('nothing is registered');
    const unrouted: any = appLevel();
    delete unrouted.event.workspace;
    expect(problemsOf(declaration(unrouted))).toContain('routed by their workspace');
    const half = webhooks();
    delete half.delete;
    expect(problemsOf(declaration(half))).toContain('create and delete are needed unless appLevel');
  });

  it('signs over method and URL too, and keys events by several values and their workspace', () => {
    const hooks: any = appLevel();
    const body = JSON.stringify([
      {
        eventId: 1,
        subscriptionId: 9,
        portalId: 62515,
        subscriptionType: 'person.creation',
        objectId: 5,
        propertyName: 'email',
      },
      { eventId: 1, subscriptionId: 10, portalId: 62515, subscriptionType: 'person.merge', objectId: 5 },
    ]);
    const at = String(Date.now());
    const uri = 'https://ferry.example/v1/webhooks/providers/acme/apps/x';
    const signature = createHmac('sha256', 'secret').update(`POST${uri}${body}${at}`).digest('base64');
    const headers = { 'X-Sig': signature, 'X-Time': at };
    const request = { method: 'POST', uri };
    expect(() =>
      checkSignature('acme', hooks.signature, headers, Buffer.from(body), 'secret', Date.now(), request),
    ).not.toThrow();
    expect(() =>
      checkSignature('acme', hooks.signature, headers, Buffer.from(body), 'secret', Date.now(), {
        method: 'POST',
        uri: `${uri}/other`,
      }),
    ).toThrow(/does not match/);
    const [created, merged] = readWebhookEvents('acme', hooks, Buffer.from(body));
    expect(created).toMatchObject({
      eventId: '1:9',
      workspaceRef: '62515',
      objectName: 'people',
      fieldsUpdated: ['email'],
    });
    expect(readWebhookEvents('acme', hooks, Buffer.from(body))[1]).not.toHaveProperty('fieldsUpdated');
    expect(merged).toMatchObject({ eventId: '1:10', eventType: 'other', objectName: '' });
    expect(objectsOfEvent(hooks, created)).toEqual(['people']);
    expect(objectsOfEvent(hooks, merged)).toEqual(['people']);
    expect(objectsOfEvent(hooks, { ...merged, providerEventType: 'deal.merge' })).toEqual([]);
  });
});
