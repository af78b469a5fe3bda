import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager } from '../../src/db/orm.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../installations/support.js';
import { createReadFixture, enableContactWrites, runRead } from '../reads/fixtures.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Retrying failed operations through the API: a read resumes from its last delivered page as a new
 * operation linked to the failed one, an asynchronous write sends again only the records that
 * failed, and a notification the destination refused is sent again under the same message id.
 */

const CONTACTS = 300;

let sandbox: Sandbox;
let stack: TestStack;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  // Provider pages as small as the delivered ones, so a resume point falls between messages.
  process.env.FERRY_READ_PROVIDER_PAGE_SIZE = '50';
  stack = await startTestStack({ worker: true });
});

afterAll(async () => {
  delete process.env.FERRY_READ_PROVIDER_PAGE_SIZE;
  await stack?.close();
  await sandbox?.close();
});

const operation = async (id: string) =>
  (await stack.api('GET', `/projects/${stack.project.id}/operations/${id}`)).body;

const finished = (id: string) =>
  eventually(async () => {
    const body = await operation(id);
    return body.status !== 'in_progress' && body;
  }, 60_000);

describe('POST /operations/{operationId}:retry', () => {
  it('resumes a failed read from its last delivered page, as a new operation linked to it', async () => {
    // No backfill in the manifest: the installation's workflow, started when the retry is asked
    // for, has no read of its own to run beside the retry.
    const fixture = await createReadFixture(stack, { declared: { delivery: { pageSize: 50 } } });
    // Two pages get through, then the destination refuses for good (a 400 is not retried).
    fixture.receiver.respond((_request, index) => ({ status: index < 2 ? 200 : 400 }));
    const { operationId: failedId, result } = await runRead(stack, fixture, { readType: 'triggered' });
    expect(result.status).toBe('failure');
    expect(fixture.receiver.acceptedRecordIds()).toHaveLength(100);

    fixture.receiver.respond(() => ({ status: 200 }));
    const retried = await stack.api('POST', `/projects/${stack.project.id}/operations/${failedId}:retry`);
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({ retryOf: failedId, actionType: 'read' });
    const retry = await finished(retried.body.operationId);
    expect(retry).toMatchObject({
      status: 'success',
      metadata: { retryOf: failedId, readType: 'triggered' },
    });
    expect(retry.metadata.progress.recordsProcessed).toBe(CONTACTS - 100);
    expect(retry.metadata.temporal.url).toContain(encodeURIComponent(`read/${retried.body.operationId}`));

    // Every record arrived exactly once: the retry began after the pages already delivered.
    const ids = fixture.receiver.acceptedRecordIds();
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);
    const logs = (await stack.api('GET', `/projects/${stack.project.id}/operations/${failedId}/logs`)).body;
    expect(logs.map((log: any) => log.message.msg)).toContain(
      `Retried as operation ${retried.body.operationId}.`,
    );
    await fixture.receiver.stop();
  });

  it('answers 409 for an operation that did not fail, and 404 for an unknown one', async () => {
    const fixture = await createReadFixture(stack);
    const { operationId } = await runRead(stack, fixture, { readType: 'scheduled' });
    const done = await stack.api('POST', `/projects/${stack.project.id}/operations/${operationId}:retry`);
    expect(done.status).toBe(409);
    expect(done.body.detail).toContain('is success; only a failed operation can be retried');
    const unknown = await stack.api('POST', `/projects/${stack.project.id}/operations/${randomUUID()}:retry`);
    expect(unknown.status).toBe(404);
    await fixture.receiver.stop();
  });

  it('writes again only the records of an asynchronous write that failed', async () => {
    const fixture = await createReadFixture(stack);
    const integration = await enableContactWrites(stack, fixture);
    const email = `kept-${randomUUID().slice(0, 8)}@example.com`;
    const write = await stack.write(
      'POST',
      `/projects/${stack.project.id}/integrations/${integration.id}/objects/contacts`,
      {
        body: {
          groupRef: fixture.groupRef,
          type: 'create',
          mode: 'asynchronous',
          batch: [{ record: { email, firstName: 'Kept' } }, { record: { firstName: 'No email' } }],
        },
      },
    );
    expect(write.status).toBe(200);
    const failed = await finished(write.body.operationId);
    expect(failed).toMatchObject({
      status: 'failure',
      metadata: { errors: [expect.objectContaining({ index: 1 })] },
    });

    const retried = await stack.api(
      'POST',
      `/projects/${stack.project.id}/operations/${write.body.operationId}:retry`,
    );
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({ retryOf: write.body.operationId, actionType: 'write' });
    const retry = await finished(retried.body.operationId);
    // Only the record without an email went again (and fails again); the first was not created twice.
    expect(retry).toMatchObject({
      metadata: { retryOf: write.body.operationId, records: 1 },
      result: expect.stringContaining('of 1 contacts'),
    });
    const written = await request(
      'GET',
      `${sandbox.url}/api/v1/contacts?updatedSince=${sandbox.anchor}&limit=1000`,
      {
        headers: { 'x-api-key': 'sandbox-demo-key' },
      },
    );
    const created = written.body.results.filter((record: any) => record.email === email);
    expect(created).toHaveLength(1);
    await fixture.receiver.stop();
  });
});

describe('POST /events/{eventId}:retry', () => {
  it('sends a notification again, under the same message id, where the destination refused it', async () => {
    const signingSecret = generateSigningSecret();
    const receiver = await WebhookReceiver.start([signingSecret]);
    receiver.respond(() => ({ status: 400 }));
    const name = `events-${randomUUID().slice(0, 8)}`;
    const destination = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
      body: { name, type: 'webhook', metadata: { url: receiver.url() }, secrets: { signingSecret } },
    });
    const topic = await stack.api('POST', `/projects/${stack.project.id}/topics`, { body: { name } });
    await stack.api('POST', `/projects/${stack.project.id}/topic-destination-routes`, {
      body: { topicId: topic.body.id, destinationId: destination.body.id },
    });
    await stack.api('POST', `/projects/${stack.project.id}/notification-event-topic-routes`, {
      body: { eventType: 'connection.created', topicId: topic.body.id },
    });
    const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
      body: { provider: 'sandboxApiKey', groupRef: name, consumerRef: name, apiKey: 'sandbox-demo-key' },
    });
    expect(connection.status).toBe(201);
    await receiver.waitFor(() => receiver.requests.length >= 1, 30_000, 'the refused delivery');
    const [refused] = receiver.requests;
    const events = await stack.api(
      'GET',
      `/projects/${stack.project.id}/events?eventType=connection.created`,
    );
    const event = events.body.results.find(
      (candidate: any) => candidate.data.connectionId === connection.body.id,
    );

    receiver.respond(() => ({ status: 200 }));
    const retried = await stack.api('POST', `/projects/${stack.project.id}/events/${event.id}:retry`);
    expect(retried.status).toBe(202);
    expect(retried.body).toEqual({ eventId: event.id, destinationIds: [destination.body.id] });
    await receiver.waitFor(() => receiver.accepted().length === 1, 30_000, 'the redelivery');
    expect(receiver.accepted()[0].messageId).toBe(refused.messageId);

    // Delivered now, once its attempt is recorded (just after the receiver answered): asking again sends nothing.
    await eventually(async () => {
      const [row] = await (
        await newEntityManager()
      ).execute<{ count: string }[]>(
        'select count(*) from delivery_attempts where message_id = ? and delivered',
        [refused.messageId],
      );
      return Number(row.count) === 1;
    }, 30_000);
    const again = await stack.api('POST', `/projects/${stack.project.id}/events/${event.id}:retry`);
    expect(again.body.destinationIds).toEqual([]);
    const missing = await stack.api('POST', `/projects/${stack.project.id}/events/${randomUUID()}:retry`);
    expect(missing.status).toBe(404);
    await receiver.stop();
  });
});
