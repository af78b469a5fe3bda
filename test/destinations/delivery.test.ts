import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager } from '../../src/db/orm.js';
import { NotificationEventEntity } from '../../src/db/entities/event.js';
import { DestinationEntity } from '../../src/db/entities/operation.js';
import { DeliveryAttemptEntity } from '../../src/db/entities/delivery.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let stack: TestStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await WebhookReceiver.start();
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.close();
});

async function destination(url = receiver.url(), headers?: Record<string, string>) {
  const signingSecret = generateSigningSecret();
  receiver.secrets.push(signingSecret);
  const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: {
      name: `d-${randomUUID().slice(0, 8)}`,
      type: 'webhook',
      metadata: { url, ...(headers && { headers }) },
      secrets: { signingSecret },
    },
  });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, name: created.body.name as string, signingSecret };
}

function deliver(destinationId: string, messageId = `msg_${randomUUID()}`, options = {}) {
  return attemptDelivery(
    {
      projectId: stack.project.id,
      destinationId,
      messageId,
      body: JSON.stringify({ hello: 'world' }),
      kind: 'notification',
    },
    config(),
    options,
  );
}

async function attempts(destinationId: string) {
  return (await newEntityManager()).find(
    DeliveryAttemptEntity,
    { destinationId },
    { orderBy: { id: 'asc' } },
  );
}

async function events(destinationId: string, type: string) {
  const all = await (
    await newEntityManager()
  ).find(NotificationEventEntity, { projectId: stack.project.id, type });
  return all.filter((event) => event.data.destinationId === destinationId);
}

describe('attemptDelivery', () => {
  it('signs with Standard Webhooks headers (and svix-*), sends the destination’s headers, records the attempt', async () => {
    const { id } = await destination(receiver.url('/ok'), { Authorization: 'Bearer hook-token' });
    receiver.respond(() => ({ status: 200, body: 'thanks' }));
    const result = await deliver(id, 'msg_first');
    expect(result).toEqual({ delivered: true, retryable: false, disabled: false, status: 200 });
    const request = receiver.requests.at(-1)!;
    expect(request.verified).toBe(true);
    expect(request.headers.authorization).toBe('Bearer hook-token');
    expect(request.headers['webhook-id']).toBe('msg_first');
    expect(request.headers['svix-signature']).toBe(request.headers['webhook-signature']);
    const [attempt] = await attempts(id);
    expect(attempt).toMatchObject({
      messageId: 'msg_first',
      attempt: 1,
      delivered: true,
      status: 200,
      responseBody: 'thanks',
      kind: 'notification',
    });
  });

  it('signs with every valid secret after a rotation, so receivers holding either accept it', async () => {
    const { id, name, signingSecret: old } = await destination(receiver.url('/rotated'));
    const rotated = await stack.api('GET', `/projects/${stack.project.id}/destinations/${name}?rotate=true`);
    receiver.respond(() => ({ status: 204 }));
    await deliver(id);
    const request = receiver.requests.at(-1)!;
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const { Webhook } = await import('standardwebhooks');
    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(() => new Webhook(old).verify(request.rawBody, headers)).not.toThrow();
    expect(() =>
      new Webhook(rotated.body.secrets.signingSecret).verify(request.rawBody, headers),
    ).not.toThrow();
  });

  it('reports a retryable failure, numbers attempts, emits destination.delivery.error and tracks the first failure', async () => {
    const { id, name } = await destination(receiver.url('/down'));
    receiver.respond(() => ({ status: 503, headers: { 'Retry-After': '7' }, body: 'x'.repeat(5000) }));
    const first = await deliver(id, 'msg_retry');
    expect(first).toMatchObject({
      delivered: false,
      retryable: true,
      retryAfterMs: 7000,
      disabled: false,
      status: 503,
    });
    await deliver(id, 'msg_retry');
    const rows = await attempts(id);
    expect(rows.map((row) => row.attempt)).toEqual([1, 2]);
    expect(rows[0].responseBody!.length).toBeLessThanOrEqual(2048);
    expect(rows[0].durationMs).toBeGreaterThanOrEqual(0);
    const errors = await events(id, 'destination.delivery.error');
    expect(errors).toHaveLength(2);
    expect(errors[0].data).toMatchObject({
      destinationId: id,
      destinationName: name,
      url: receiver.url('/down'),
      messageId: 'msg_retry',
      status: 503,
      error: expect.stringContaining('503'),
    });
    const row = await (await newEntityManager()).findOneOrFail(DestinationEntity, { id });
    expect(row.firstFailureTime).toBeInstanceOf(Date);

    receiver.respond(() => ({ status: 200 }));
    expect((await deliver(id, 'msg_retry')).delivered).toBe(true);
    const healed = await (await newEntityManager()).findOneOrFail(DestinationEntity, { id });
    expect(healed.firstFailureTime).toBeNull();
  });

  it('disables the destination on 410 Gone and sends nothing more', async () => {
    const { id, name } = await destination(receiver.url('/gone'));
    receiver.respond(() => ({ status: 410 }));
    const result = await deliver(id);
    expect(result).toMatchObject({ delivered: false, retryable: false, disabled: true, status: 410 });
    const disabled = await events(id, 'destination.webhook.disabled');
    expect(disabled).toHaveLength(1);
    expect(disabled[0].data).toEqual({
      projectId: stack.project.id,
      destinationId: id,
      destinationName: name,
      url: receiver.url('/gone'),
    });
    const before = receiver.requests.length;
    const again = await deliver(id);
    expect(again).toMatchObject({ delivered: false, retryable: false, disabled: true });
    expect(receiver.requests.length).toBe(before);
    const view = await stack.api('GET', `/projects/${stack.project.id}/destinations/${id}`);
    expect(view.body.disabled).toBe(true);
  });

  it('disables a destination that has failed continuously for the disable-after period', async () => {
    const { id } = await destination(receiver.url('/failing'));
    receiver.respond(() => ({ status: 500 }));
    const start = Date.now();
    expect((await deliver(id, undefined, { now: () => new Date(start) })).disabled).toBe(false);
    const fourDays = await deliver(id, undefined, { now: () => new Date(start + 4 * 24 * 3600 * 1000) });
    expect(fourDays).toMatchObject({ disabled: false, retryable: true });
    const fiveDays = await deliver(id, undefined, { now: () => new Date(start + 5 * 24 * 3600 * 1000) });
    expect(fiveDays).toMatchObject({ disabled: true, retryable: false });
    expect(await events(id, 'destination.webhook.disabled')).toHaveLength(1);
  });

  it('refuses private addresses when they are not allowed, without sending', async () => {
    const { id } = await destination(receiver.url('/private'));
    const before = receiver.requests.length;
    const result = await deliver(id, undefined, { policy: { allowPrivate: false } });
    expect(result).toMatchObject({ delivered: false, retryable: false, disabled: false });
    expect(result.error).toContain('loopback');
    expect(receiver.requests.length).toBe(before);
  });

  it('refuses a redirect to a private address when private addresses are not allowed', async () => {
    const { id } = await destination(receiver.url('/redirect'));
    receiver.respond(() => ({
      status: 307,
      headers: { Location: 'http://169.254.169.254/latest/meta-data' },
    }));
    // The destination itself is allowed by address; the redirect target is not.
    const result = await deliver(id, undefined, {
      policy: { allowPrivate: false, allowedAddresses: ['127.0.0.1'] },
    });
    expect(result.delivered).toBe(false);
    expect(result.error).toContain('redirect');
    expect(result.error).toContain('link-local');
  });

  it('answers for a destination that does not exist without throwing', async () => {
    const result = await deliver(randomUUID());
    expect(result).toMatchObject({ delivered: false, retryable: false, disabled: false });
  });

  it('keeps secrets out of attempt rows and events', async () => {
    const { id, signingSecret } = await destination(receiver.url('/secret?token=abc123'), {
      Authorization: 'Bearer very-secret-header',
    });
    receiver.respond(() => ({ status: 500 }));
    await deliver(id);
    const stored = JSON.stringify([await attempts(id), await events(id, 'destination.delivery.error')]);
    expect(stored).not.toContain('very-secret-header');
    expect(stored).not.toContain('abc123');
    expect(stored).not.toContain(signingSecret.slice(6));
  });
});
