import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  signSandboxPayload,
  startSandbox,
  verifySandboxSignature,
  type Sandbox,
  type WebhookEvent,
} from '../../src/sandbox/index.js';
import { api, startReceiver } from './helpers.js';

type Subscription = { id: string; url: string; events: string[]; secret: string; active: boolean };

let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    contacts: 50,
    companies: 5,
    deals: 5,
    webhookRetryDelaysMs: [50, 50],
  });
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  sandbox.reset({ data: true });
  await receiver.close();
});

function subscribe(events: string[], url = receiver.url) {
  return api<Subscription>(sandbox, '/webhooks', { method: 'POST', json: { url, events } });
}

describe('webhook subscriptions', () => {
  it('delivers signed events for created, updated and deleted records', async () => {
    const subscription = await subscribe(['contacts.created', 'contacts.updated', 'contacts.deleted']);
    expect(subscription.status).toBe(201);
    expect(subscription.body).toMatchObject({
      id: expect.any(String),
      url: receiver.url,
      secret: expect.any(String),
    });

    const created = await api<{ id: string }>(sandbox, '/contacts', {
      method: 'POST',
      json: { email: 'hook@test.example' },
    });
    const [first] = await receiver.waitFor(1);
    const signature = first.headers['x-sandbox-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySandboxSignature(subscription.body.secret, signature, first.rawBody)).toBe(true);
    expect(verifySandboxSignature('other-secret', signature, first.rawBody)).toBe(false);
    expect(
      verifySandboxSignature(subscription.body.secret, signature, first.rawBody.replace('hook', 'h00k')),
    ).toBe(false);
    const createdEvent = JSON.parse(first.rawBody) as WebhookEvent;
    expect(createdEvent).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      type: 'contacts.created',
      occurredAt: expect.any(String),
      object: 'contacts',
      recordId: created.body.id,
      record: { email: 'hook@test.example' },
    });

    await api(sandbox, `/contacts/${created.body.id}`, {
      method: 'PATCH',
      json: { jobTitle: 'CTO', email: 'hook@test.example' },
    });
    await api(sandbox, '/contacts/ctc_00000002', { method: 'DELETE' });
    await api(sandbox, '/deals/deal_00000001', { method: 'PATCH', json: { amount: 5 } }); // not subscribed
    const events = (await receiver.waitFor(3)).map((r) => JSON.parse(r.rawBody) as WebhookEvent);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received).toHaveLength(3);
    expect(events[1]).toMatchObject({
      type: 'contacts.updated',
      changedFields: ['jobTitle'],
      record: { jobTitle: 'CTO' },
    });
    expect(events[2]).toMatchObject({ type: 'contacts.deleted', recordId: 'ctc_00000002' });
    expect(events[2].record).toBeUndefined();
    expect(sandbox.faults.stats.webhooksDelivered).toBe(3);
  });

  it('retries failed deliveries a couple of times', async () => {
    await subscribe(['deals.*']);
    receiver.statuses.push(500, 503);
    await api(sandbox, '/deals/deal_00000003', { method: 'PATCH', json: { stage: 'closed_won' } });
    const received = await receiver.waitFor(3);
    expect(received.map((r) => r.headers['x-sandbox-delivery-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(received.map((r) => r.headers['x-sandbox-event-id'])).size).toBe(1);
    // The sender counts the success once the receiver's answer is read: wait for that, not just the request.
    const deadline = Date.now() + 5000;
    while (sandbox.faults.stats.webhooksDelivered < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(sandbox.faults.stats).toMatchObject({ webhooksDelivered: 1, webhookDeliveryFailures: 0 });
  });

  it('manages subscriptions: list, get, patch, delete and validation', async () => {
    const created = await subscribe(['*']);
    const id = created.body.id;
    expect(
      (await api<{ results: Subscription[] }>(sandbox, '/webhooks')).body.results.map((s) => s.id),
    ).toEqual([id]);
    expect((await api(sandbox, `/webhooks/${id}`)).body).toMatchObject({ id, events: ['*'], active: true });
    const patched = await api(sandbox, `/webhooks/${id}`, {
      method: 'PATCH',
      json: { events: ['companies.created'], active: false },
    });
    expect(patched.body).toMatchObject({ events: ['companies.created'], active: false });
    await api(sandbox, '/companies', { method: 'POST', json: { name: 'Paused Inc.' } });
    expect((await api(sandbox, `/webhooks/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(sandbox, `/webhooks/${id}`)).status).toBe(404);
    expect(receiver.received).toHaveLength(0);

    for (const json of [
      { url: 'not a url', events: ['*'] },
      { url: receiver.url, events: [] },
      { url: receiver.url, events: ['tickets.created'] },
    ]) {
      expect((await api(sandbox, '/webhooks', { method: 'POST', json })).status).toBe(400);
    }
  });
});

describe('verifySandboxSignature', () => {
  it('checks the timestamp tolerance and accepts any of several v1 signatures', () => {
    const body = '{"hello":"world"}';
    const now = 1_800_000_000;
    const header = signSandboxPayload('s3cret', body, now);
    expect(verifySandboxSignature('s3cret', header, body, 300, now + 299)).toBe(true);
    expect(verifySandboxSignature('s3cret', header, body, 300, now + 301)).toBe(false);
    expect(verifySandboxSignature('s3cret', header, Buffer.from(body), 300, now)).toBe(true);
    const rotated = `${header},v1=${'0'.repeat(64)}`;
    expect(verifySandboxSignature('s3cret', rotated, body, 300, now)).toBe(true);
    for (const bad of ['', 'v1=abc', `t=${now}`, 't=x,v1=zz', undefined]) {
      expect(verifySandboxSignature('s3cret', bad, body, 300, now)).toBe(false);
    }
  });
});
