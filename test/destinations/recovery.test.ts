import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { recordEvent } from '../../src/domain/events.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../installations/support.js';
import { startReceiver, type Receiver } from '../notifications/receiver.js';
import { createReadFixture, runRead } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * A destination that comes back: re-enabling it resumes what waited for it, as Svix's "recover"
 * does. A read it stopped continues from its last delivered page; notifications it missed while
 * disabled are sent; nothing it already accepted is sent again.
 */

const CONTACTS = 200;

let sandbox: Sandbox;
let stack: TestStack;
let receiver: Receiver;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  // A destination failing for a second is disabled, within the read's retry schedule.
  process.env.FERRY_DESTINATION_DISABLE_AFTER_SECONDS = '1';
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = '0,100ms,200ms,1500ms,1500ms';
  stack = await startTestStack({ worker: true });
  receiver = await startReceiver();
});

afterAll(async () => {
  delete process.env.FERRY_DESTINATION_DISABLE_AFTER_SECONDS;
  delete process.env.FERRY_DELIVERY_RETRY_SCHEDULE;
  await receiver?.close();
  await stack?.close();
  await sandbox?.close();
});

const projectPath = () => `/projects/${stack.project.id}`;
const reEnable = (destination: string) =>
  stack.api('PATCH', `${projectPath()}/destinations/${destination}`, {
    body: { updateMask: ['disabled'], destination: { disabled: false } },
  });

describe('re-enabling a destination', () => {
  it('resumes the read it stopped from its last delivered page, once', async () => {
    const fixture = await createReadFixture(stack, { declared: { delivery: { pageSize: 50 } } });
    // Two pages get through, then the destination is down until it is disabled.
    fixture.receiver.respond((_request, index) => ({ status: index < 2 ? 200 : 503 }));
    const { operationId: failedId, result } = await runRead(stack, fixture, { readType: 'triggered' });
    expect(result.status).toBe('failure');
    const destination = (await stack.api('GET', `${projectPath()}/destinations/${fixture.destinationName}`))
      .body;
    expect(destination.disabled).toBe(true);
    expect(fixture.receiver.acceptedRecordIds()).toHaveLength(100);

    fixture.receiver.respond(() => ({ status: 200 }));
    expect((await reEnable(fixture.destinationName)).status).toBe(200);
    const resumed = await eventually(async () => {
      const listed = await stack.api(
        'GET',
        `${projectPath()}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/operations`,
      );
      const retry = listed.body.results?.find((operation: any) => operation.metadata?.retryOf === failedId);
      return retry && retry.status !== 'in_progress' && retry;
    }, 60_000);
    expect(resumed.status).toBe('success');
    const ids = fixture.receiver.acceptedRecordIds();
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);

    // Re-enabling again finds nothing waiting: the read was already resumed.
    await stack.api('PATCH', `${projectPath()}/destinations/${fixture.destinationName}`, {
      body: { updateMask: ['disabled'], destination: { disabled: true } },
    });
    expect((await reEnable(fixture.destinationName)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const listed = await stack.api(
      'GET',
      `${projectPath()}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/operations`,
    );
    expect(listed.body.results.filter((operation: any) => operation.metadata?.retryOf)).toHaveLength(1);
    await fixture.receiver.stop();
  });

  it('sends the notifications routed to it while it was disabled, and not those it accepted', async () => {
    const name = `hook-${randomUUID().slice(0, 8)}`;
    const created = await stack.api('POST', `${projectPath()}/destinations`, {
      body: { name, type: 'webhook', metadata: { url: `${receiver.url}/${name}` } },
    });
    expect(created.status).toBe(201);
    const topic = await stack.api('POST', `${projectPath()}/topics`, { body: { name: `t-${name}` } });
    await stack.api('POST', `${projectPath()}/notification-event-topic-routes`, {
      body: { eventType: 'installation.deleted', topicId: topic.body.id },
    });
    await stack.api('POST', `${projectPath()}/topic-destination-routes`, {
      body: { topicId: topic.body.id, destinationId: created.body.id },
    });
    const emit = (installationId: string) =>
      transaction(
        async (em) =>
          recordEvent(em, stack.project.id, 'installation.deleted', {
            projectId: stack.project.id,
            installationId,
            integrationId: randomUUID(),
          }).id,
      );

    await emit('before');
    await receiver.waitFor(`/${name}`, 1);
    await stack.api('PATCH', `${projectPath()}/destinations/${name}`, {
      body: { updateMask: ['disabled'], destination: { disabled: true } },
    });
    const missed = await emit('while-disabled');
    // Relayed, but routed to no enabled destination.
    await eventually(async () => {
      const events = await stack.api('GET', `${projectPath()}/events?pageSize=100`);
      return events.body.results.some((event: any) => event.id === missed && event.routedTime);
    }, 20_000);
    expect(receiver.requests.filter((request) => request.path === `/${name}`)).toHaveLength(1);

    expect((await reEnable(name)).status).toBe(200);
    const deliveries = await receiver.waitFor(`/${name}`, 2);
    expect(deliveries.map((delivery) => JSON.parse(delivery.body).data.installationId)).toEqual([
      'before',
      'while-disabled',
    ]);
  });
});
