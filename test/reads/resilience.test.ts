import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager } from '../../src/db/orm.js';
import { NotificationEventEntity } from '../../src/db/entities/event.js';
import { DestinationEntity } from '../../src/db/entities/operation.js';
import { messageIdFor } from '../../src/delivery/messages.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { createReadFixture, runRead } from './fixtures.js';

const CONTACTS = 500;

let sandbox: Sandbox;
let stack: TestStack;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  // Five attempts per page, quickly: 0, 100 ms, 200 ms, 300 ms, 400 ms.
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = '0,100ms,200ms,300ms,400ms';
  stack = await startTestStack({ worker: true });
});

afterEach(() => sandbox.reset());

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
});

const backfill = {
  declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: 100 } },
};

async function logsOf(operationId: string) {
  const response = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}/logs`);
  return response.body as { severity: string; message: { msg: string; error?: string; details: any } }[];
}

describe('a destination that is down for a while', () => {
  it('receives everything once it is back; redeliveries carry the same message id', async () => {
    const fixture = await createReadFixture(stack, backfill);
    // Down for the first three attempts, then up.
    fixture.receiver.respond((_request, index) => ({ status: index < 3 ? 503 : 200 }));
    const { operationId, result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });

    const ids = fixture.receiver.acceptedRecordIds();
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);
    const [first, second, third, fourth] = fixture.receiver.requests;
    expect(new Set([first, second, third, fourth].map((request) => request.messageId)).size).toBe(1);
    expect(fourth.rawBody).toBe(first.rawBody);
    expect(fixture.receiver.requests.every((request) => request.verified)).toBe(true);

    const warnings = (await logsOf(operationId)).filter((log) => log.severity === 'WARN');
    expect(warnings).toHaveLength(3);
    expect(warnings[0].message.msg).toContain('will be retried');
    expect(warnings[0].message.details).toMatchObject({ messageId: first.messageId, status: '503' });

    const em = await newEntityManager();
    const errors = await em.find(NotificationEventEntity, {
      projectId: stack.project.id,
      type: 'destination.delivery.error',
    });
    expect(errors.filter((event) => event.data.operationId === operationId)).toHaveLength(3);
    await fixture.receiver.stop();
  });

  it('retries only the messages of a page that were not accepted', async () => {
    // Every field of 500 contacts makes more than 300 KB: each page goes out as two messages.
    const fixture = await createReadFixture(stack, {
      declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: 500 } },
      configured: { selectedFields: {}, selectedFieldsAuto: 'all' },
    });
    fixture.receiver.respond((_request, index) => ({ status: index === 1 ? 503 : 200 }));
    const { operationId, result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });
    expect(fixture.receiver.requests.map((request) => request.messageId)).toEqual([
      messageIdFor(operationId, 0, 0),
      messageIdFor(operationId, 0, 1),
      messageIdFor(operationId, 0, 1),
    ]);
    expect(
      fixture.receiver.requests.every((request) => Buffer.byteLength(request.rawBody) < 300 * 1024),
    ).toBe(true);
    expect(new Set(fixture.receiver.acceptedRecordIds()).size).toBe(CONTACTS);
    await fixture.receiver.stop();
  });

  it('waits as long as the receiver’s Retry-After asks', async () => {
    const fixture = await createReadFixture(stack, backfill);
    const times: number[] = [];
    fixture.receiver.respond((_request, index) => {
      times.push(Date.now());
      return index === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 200 };
    });
    const { result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result.status).toBe('success');
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(1000);
    await fixture.receiver.stop();
  });

  it('fails the read when the destination is still down after the whole retry schedule', async () => {
    const fixture = await createReadFixture(stack, backfill);
    fixture.receiver.respond(() => ({ status: 500 }));
    const { operationId, result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result.status).toBe('failure');
    expect(result.result).toContain('still failed after 5 attempts');
    expect(fixture.receiver.requests).toHaveLength(5);
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}`);
    expect(operation.body).toMatchObject({
      status: 'failure',
      metadata: { error: expect.stringContaining('500') },
    });
    const logs = await logsOf(operationId);
    expect(logs.at(-1)).toMatchObject({ severity: 'ERROR' });
    const installation = await (
      await newEntityManager()
    ).findOneOrFail('Installation', { id: fixture.installationId });
    expect(installation).toMatchObject({ lastOperationStatus: 'failure', healthStatus: 'unhealthy' });
    await fixture.receiver.stop();
  });

  it('fails the read, disables the destination and says so when the receiver answers 410', async () => {
    const fixture = await createReadFixture(stack, backfill);
    fixture.receiver.respond(() => ({ status: 410 }));
    const { result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result.status).toBe('failure');
    expect(result.result).toContain('410');
    expect(fixture.receiver.requests).toHaveLength(1);
    const destination = await stack.api(
      'GET',
      `/projects/${stack.project.id}/destinations/${fixture.destinationName}`,
    );
    expect(destination.body.disabled).toBe(true);
    const em = await newEntityManager();
    const disabled = await em.find(NotificationEventEntity, {
      projectId: stack.project.id,
      type: 'destination.webhook.disabled',
    });
    expect(disabled.some((event) => event.data.destinationId === fixture.destinationId)).toBe(true);

    // A later read of a disabled destination fails at once, sending nothing.
    const again = await runRead(stack, fixture, { readType: 'scheduled' });
    expect(again.result.status).toBe('failure');
    expect(fixture.receiver.requests).toHaveLength(1);
    await fixture.receiver.stop();
  });
});

describe('a provider answering 429s and 500s', () => {
  it('slows the read but loses nothing', async () => {
    const fixture = await createReadFixture(stack, {
      declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: 50 } },
    });
    const faults = await request('POST', `${sandbox.url}/_control/faults`, {
      body: { errorRate: 0.3, rateLimit: { requests: 4, perSeconds: 1 } },
    });
    expect(faults.status).toBe(200);
    const { operationId, result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });
    const ids = fixture.receiver.acceptedRecordIds();
    expect(new Set(ids).size).toBe(CONTACTS);
    expect(ids).toHaveLength(CONTACTS);
    const stats = (await request('GET', `${sandbox.url}/_control/stats`)).body;
    expect(stats.injectedErrors + stats.rateLimited).toBeGreaterThan(0);
    const debug = (await logsOf(operationId)).filter((log) => log.severity === 'DEBUG');
    const statuses = debug.map(
      (log) => log.message.details.response && JSON.parse(log.message.details.response).status,
    );
    expect(statuses.some((status) => [429, 500].includes(status))).toBe(true);
    await fixture.receiver.stop();
  });

  it('fails with authFailure when the provider refuses the credentials', async () => {
    const fixture = await createReadFixture(stack, backfill);
    const { transaction } = await import('../../src/db/orm.js');
    const { sealCredentials } = await import('../../src/domain/connections/sealed-credentials.js');
    await transaction(async (em) => {
      await em.execute(
        'update connections set credentials_encrypted = ? where id = (select connection_id from installations where id = ?)',
        [sealCredentials({ kind: 'apiKey', apiKey: 'wrong-key-123' }), fixture.installationId],
      );
    });
    const { operationId, result } = await runRead(stack, fixture, { readType: 'scheduled' });
    expect(result).toMatchObject({ status: 'failure', authFailure: true });
    expect(fixture.receiver.requests).toHaveLength(0);
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}`);
    expect(operation.body.metadata.authFailure).toBe(true);
    expect(JSON.stringify(await logsOf(operationId))).not.toContain('wrong-key-123');
    await fixture.receiver.stop();
  });
});

describe('a read that cannot run as configured', () => {
  it('fails with a clear result when its destination does not exist', async () => {
    const fixture = await createReadFixture(stack, backfill);
    // The API refuses to delete a destination in use; one lost another way (a restore, a manual
    // delete) must still fail the read clearly.
    const refused = await stack.api(
      'DELETE',
      `/projects/${stack.project.id}/destinations/${fixture.destinationName}`,
    );
    expect(refused.status).toBe(409);
    await (
      await newEntityManager()
    ).nativeDelete(DestinationEntity, { projectId: stack.project.id, name: fixture.destinationName });
    const { operationId, result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result.status).toBe('failure');
    expect(result.result).toContain(`Destination "${fixture.destinationName}"`);
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}`);
    expect(operation.body).toMatchObject({ status: 'failure', actionType: 'read' });
    await fixture.receiver.stop();
  });

  it('fails when the installation does not read the object', async () => {
    const fixture = await createReadFixture(stack, backfill);
    const { result } = await runRead(stack, fixture, { readType: 'scheduled', objectName: 'deals' });
    expect(result.status).toBe('failure');
    expect(result.result).toContain('does not read object "deals"');
    await fixture.receiver.stop();
  });
});
