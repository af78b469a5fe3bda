import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';
import { startReceiver, type Receiver } from './receiver.js';
import { em, transaction } from '../../src/db/orm.js';
import { recordEvent } from '../../src/domain/events.js';
import { type EventType } from '../../src/schemas/notifications.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { temporalClient } from '../../src/temporal/client.js';
import { notificationDeliveryMessageId } from '../../src/notifications/message.js';
import { notificationWorkflowId } from '../../src/temporal/contracts/workflow-ids.js';
import { runAttributes } from '../support/run-attributes.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { PublicApi } from '../support/public-api.js';

let stack: TestStack;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startTestStack({ worker: true });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await stack.close();
});

/** A project of its own per test, so one test's routes never deliver another test's events. */
async function project() {
  const created = await createTestProject();
  const api = (method: string, path: string, body?: unknown) =>
    request(method, `${stack.urls.api}/projects/${created.id}${path}`, { apiKey: created.apiKey, body });
  return { ...created, api };
}

type Project = Awaited<ReturnType<typeof project>>;

async function destination(p: Project, path: string) {
  const secret = generateSigningSecret();
  const created = await p.api('POST', '/destinations', {
    name: `hook-${randomUUID().slice(0, 8)}`,
    type: 'webhook',
    metadata: { url: `${receiver.url}${path}` },
    secrets: { signingSecret: secret },
  });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, secret, path };
}

async function topic(p: Project) {
  const created = await p.api('POST', '/topics', { name: `topic-${randomUUID().slice(0, 8)}` });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function routeEvent(p: Project, eventType: EventType, topicId: string) {
  expect((await p.api('POST', '/notification-event-topic-routes', { eventType, topicId })).status).toBe(201);
}

async function subscribe(p: Project, topicId: string, destinationId: string) {
  expect((await p.api('POST', '/topic-destination-routes', { topicId, destinationId })).status).toBe(201);
}

async function emit(projectId: string, type: EventType, data: Record<string, unknown>): Promise<string> {
  return transaction(async (em) => recordEvent(em, projectId, type, data).id);
}

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function routedEvent(p: Project, eventId: string) {
  return eventually(async () => {
    const listed = await p.api('GET', '/events?pageSize=1000');
    return listed.body.results.find((event: any) => event.id === eventId && event.routedTime);
  });
}

async function deliveryResult(eventId: string, destinationId: string) {
  const client = await temporalClient();
  return client.workflow.getHandle(notificationWorkflowId(eventId, destinationId)).result();
}

const settle = (ms = 1500) => new Promise((resolve) => setTimeout(resolve, ms));

function installationCreated(projectId: string) {
  return {
    projectId,
    provider: 'sandbox',
    integrationId: randomUUID(),
    integrationName: 'crm-sync',
    installationId: randomUUID(),
    connectionId: randomUUID(),
    groupRef: 'acme',
    groupName: 'Acme Inc.',
    consumerRef: 'user-1',
    consumerName: 'Ada Lovelace',
    config: {
      id: randomUUID(),
      revisionId: randomUUID(),
      createdBy: 'consumer:user-1',
      content: {
        provider: 'sandbox',
        read: {
          objects: { contacts: { objectName: 'contacts', schedule: '*/30 * * * *', destination: 'crm' } },
        },
      },
    },
  };
}

describe('notification delivery', () => {
  it('delivers a routed event to a subscribed webhook, signed, as {notificationType, data}', async () => {
    const p = await project();
    const hook = await destination(p, '/signed');
    const topicId = await topic(p);
    await routeEvent(p, 'installation.created', topicId);
    await subscribe(p, topicId, hook.id);
    const data = installationCreated(p.id);
    const eventId = await emit(p.id, 'installation.created', data);

    const [delivery] = await receiver.waitFor('/signed');
    const verified = new Webhook(hook.secret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    });
    expect(verified).toEqual({ notificationType: 'installation.created', data });
    expect(delivery.headers['webhook-id']).toBe(notificationDeliveryMessageId(eventId, hook.id));
    expect(delivery.headers['svix-signature']).toBe(delivery.headers['webhook-signature']);
    expect(await deliveryResult(eventId, hook.id)).toEqual({ outcome: 'delivered', attempts: 1 });
    // Deliveries run on a task queue of their own, apart from installations and their reads.
    const client = await temporalClient();
    const run = await client.workflow.getHandle(notificationWorkflowId(eventId, hook.id)).describe();
    expect(run.taskQueue).toBe(`${stack.taskQueue}-deliveries`);
    expect((await routedEvent(p, eventId)).eventType).toBe('installation.created');
    expect(await runAttributes(notificationWorkflowId(eventId, hook.id))).toEqual({
      projectId: p.id,
      integrationId: data.integrationId,
      installationId: data.installationId,
      provider: 'sandbox',
      groupRef: 'acme',
    });
  });

  it('keeps and lists an event no route leads to, and delivers it nowhere', async () => {
    const p = await project();
    const hook = await destination(p, '/unrouted');
    const topicId = await topic(p);
    await routeEvent(p, 'installation.created', topicId);
    await subscribe(p, topicId, hook.id);
    const eventId = await emit(p.id, 'connection.deleted', { projectId: p.id, connectionId: randomUUID() });

    const listed = await routedEvent(p, eventId);
    expect(listed).toMatchObject({ eventType: 'connection.deleted', projectId: p.id });
    await settle();
    expect(receiver.requests.filter((r) => r.path === '/unrouted')).toHaveLength(0);
  });

  it('delivers once to a destination however many topics lead to it, and to every subscribed destination', async () => {
    const p = await project();
    const both = await destination(p, '/fan-both');
    const one = await destination(p, '/fan-one');
    const [first, second] = [await topic(p), await topic(p)];
    await routeEvent(p, 'installation.updated', first);
    await routeEvent(p, 'installation.updated', second);
    await subscribe(p, first, both.id);
    await subscribe(p, second, both.id);
    await subscribe(p, second, one.id);
    await emit(p.id, 'installation.updated', { ...installationCreated(p.id), lastConfig: {} });

    await receiver.waitFor('/fan-both');
    await receiver.waitFor('/fan-one');
    await settle();
    expect(receiver.requests.filter((r) => r.path === '/fan-both')).toHaveLength(1);
  });

  it('records the attempt in the ledger before sending it, so a worker dying before the answer leaves it there', async () => {
    const p = await project();
    const holding = await WebhookReceiver.start();
    let arrived!: () => void;
    const sent = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    holding.respond(async () => {
      arrived();
      await released;
      return { status: 200 };
    });
    try {
      const created = await p.api('POST', '/destinations', {
        name: `held-${randomUUID().slice(0, 8)}`,
        type: 'webhook',
        metadata: { url: holding.url() },
        secrets: { signingSecret: generateSigningSecret() },
      });
      const destinationId = created.body.id as string;
      const topicId = await topic(p);
      await routeEvent(p, 'connection.created', topicId);
      await subscribe(p, topicId, destinationId);
      const eventId = await emit(p.id, 'connection.created', { projectId: p.id, connectionId: randomUUID() });
      const messageId = notificationDeliveryMessageId(eventId, destinationId);
      const ledger = async () =>
        (await em()).execute<{ attempt: number; pending: boolean; delivered: boolean }[]>(
          'select attempt, pending, delivered from delivery_attempts where destination_id = ? and message_id = ? order by attempt',
          [destinationId, messageId],
        );

      await sent;
      // Sent, not answered: what a crash at this moment would leave behind.
      expect(await ledger()).toEqual([{ attempt: 1, pending: true, delivered: false }]);
      const listed = await p.api('GET', `/destinations/${destinationId}/attempts`);
      expect(listed.body.results).toEqual([
        expect.objectContaining({ messageId, pending: true, delivered: false }),
      ]);

      release();
      expect(await deliveryResult(eventId, destinationId)).toEqual({ outcome: 'delivered', attempts: 1 });
      expect(await ledger()).toEqual([{ attempt: 1, pending: false, delivered: true }]);
    } finally {
      release();
      await holding.stop();
    }
  });

  it('retries a failed delivery with the same message id, and reports the failure as an event', async () => {
    const p = await project();
    const hook = await destination(p, '/flaky');
    receiver.answer('/flaky', (_request, index) => (index === 0 ? { status: 503 } : { status: 200 }));
    const topicId = await topic(p);
    await routeEvent(p, 'read.backfill.done', topicId);
    await subscribe(p, topicId, hook.id);
    const eventId = await emit(p.id, 'read.backfill.done', { projectId: p.id, objectName: 'contacts' });

    const attempts = await receiver.waitFor('/flaky', 2, 30_000);
    expect(attempts[1].headers['webhook-id']).toBe(attempts[0].headers['webhook-id']);
    for (const attempt of attempts) {
      expect(() =>
        new Webhook(hook.secret).verify(attempt.body, attempt.headers as Record<string, string>),
      ).not.toThrow();
    }
    expect(await deliveryResult(eventId, hook.id)).toEqual({ outcome: 'delivered', attempts: 2 });
    const errors = await p.api('GET', '/events?eventType=destination.delivery.error');
    expect(errors.body.results).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ destinationId: hook.id, status: 503 }) }),
    ]);
  });

  it('stops when the receiver answers 410 Gone, disables the destination and routes nothing more to it', async () => {
    const p = await project();
    const hook = await destination(p, '/gone');
    receiver.answer('/gone', { status: 410 });
    const topicId = await topic(p);
    await routeEvent(p, 'connection.created', topicId);
    await subscribe(p, topicId, hook.id);
    const eventId = await emit(p.id, 'connection.created', { projectId: p.id, connectionId: randomUUID() });

    await receiver.waitFor('/gone');
    expect(await deliveryResult(eventId, hook.id)).toMatchObject({
      outcome: 'destination-disabled',
      attempts: 1,
    });
    expect((await p.api('GET', `/destinations/${hook.id}`)).body.disabled).toBe(true);
    const disabled = await p.api('GET', '/events?eventType=destination.webhook.disabled');
    expect(disabled.body.results[0].data).toMatchObject({ projectId: p.id, destinationId: hook.id });
    expect(
      new PublicApi().checkNotification({
        notificationType: 'destination.webhook.disabled',
        data: disabled.body.results[0].data,
      }),
    ).toEqual([]);

    const later = await emit(p.id, 'connection.created', { projectId: p.id, connectionId: randomUUID() });
    await routedEvent(p, later);
    await settle();
    expect(receiver.requests.filter((r) => r.path === '/gone')).toHaveLength(1);
  });

  it('never sends an event about a failing destination to that destination', async () => {
    const p = await project();
    const failing = await destination(p, '/refuses');
    const watcher = await destination(p, '/watcher');
    receiver.answer('/refuses', { status: 400 });
    const installs = await topic(p);
    const failures = await topic(p);
    await routeEvent(p, 'installation.created', installs);
    await routeEvent(p, 'destination.delivery.error', failures);
    await subscribe(p, installs, failing.id);
    await subscribe(p, failures, failing.id);
    await subscribe(p, failures, watcher.id);
    await emit(p.id, 'installation.created', installationCreated(p.id));

    const [report] = await receiver.waitFor('/watcher');
    expect(report.json).toMatchObject({
      notificationType: 'destination.delivery.error',
      data: { destinationId: failing.id, status: 400 },
    });
    await settle();
    expect(receiver.requests.filter((r) => r.path === '/refuses')).toHaveLength(1);
  });

  it('starts each delivery once, even when an event is relayed again', async () => {
    const p = await project();
    const hook = await destination(p, '/once');
    const topicId = await topic(p);
    await routeEvent(p, 'write.async.done', topicId);
    await subscribe(p, topicId, hook.id);
    const eventId = await emit(p.id, 'write.async.done', {
      projectId: p.id,
      success: true,
      successfulRecordIds: ['1'],
      errors: [],
    });
    await receiver.waitFor('/once');
    await deliveryResult(eventId, hook.id);

    // As if the relay crashed after starting the workflow but before its commit.
    await transaction(async (em) => {
      await em.execute('update events set routed_time = null where id = ?', [eventId], 'run');
    });
    await routedEvent(p, eventId);
    await settle();
    expect(receiver.requests.filter((r) => r.path === '/once')).toHaveLength(1);
  });
  it('delivers connection.created when a connection is made through the API', async () => {
    const p = await project();
    const hook = await destination(p, '/connections');
    const topicId = await topic(p);
    await routeEvent(p, 'connection.created', topicId);
    await subscribe(p, topicId, hook.id);
    const connection = await p.api('POST', '/connections:generate', {
      provider: 'sandboxApiKey',
      groupRef: 'acme',
      groupName: 'Acme Inc.',
      consumerRef: 'user-1',
      apiKey: 'sandbox-demo-key',
    });
    expect(connection.status).toBe(201);

    const [delivery] = await receiver.waitFor('/connections');
    const verified = new Webhook(hook.secret).verify(
      delivery.body,
      delivery.headers as Record<string, string>,
    );
    expect(verified).toMatchObject({
      notificationType: 'connection.created',
      data: { projectId: p.id, connectionId: connection.body.id, groupRef: 'acme', consumerRef: 'user-1' },
    });
    expect(delivery.body).not.toContain('sandbox-demo-key');
  });
});
