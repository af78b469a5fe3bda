import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager } from '../../src/db/orm.js';
import { ReadWatermarkEntity } from '../../src/db/entities/installation.js';
import { NotificationEventEntity } from '../../src/db/entities/event.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { PublicApi } from '../support/public-api.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { createReadFixture, runRead, type ReadFixture } from './fixtures.js';

const CONTACTS = 450;

let sandbox: Sandbox;
let stack: TestStack;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = '0,100ms,200ms,300ms,500ms';
  stack = await startTestStack({ worker: true });
});

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
});

async function events(projectId: string, type: string) {
  const em = await newEntityManager();
  return em.find(NotificationEventEntity, { projectId, type }, { orderBy: { createTime: 'asc' } });
}

describe('a backfill read', () => {
  let fixture: ReadFixture;
  let operationId: string;

  beforeAll(async () => {
    fixture = await createReadFixture(stack, {
      declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: 200 } },
    });
    const run = await runRead(stack, fixture, { readType: 'backfill' });
    operationId = run.operationId;
    expect(run.result).toEqual({
      status: 'success',
      recordsProcessed: CONTACTS,
      result: 'Read 450 contacts in 1 page.',
    });
  });

  afterAll(() => fixture?.receiver.stop());

  it('delivers every record once, in signed messages of at most pageSize records', () => {
    const { receiver } = fixture;
    expect(receiver.requests.every((request) => request.verified)).toBe(true);
    expect(receiver.requests.map((request) => request.body.resultInfo.numRecords)).toEqual([200, 200, 50]);
    const ids = receiver.acceptedRecordIds();
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);
    expect(new Set(receiver.requests.map((request) => request.messageId)).size).toBe(3);
    for (const request of receiver.requests) {
      expect(request.headers['svix-id']).toBe(request.messageId);
      expect(Buffer.byteLength(request.rawBody)).toBeLessThan(300 * 1024);
    }
  });

  it('shapes messages as COMPAT.md describes, with selected and mapped fields', () => {
    const message = fixture.receiver.requests[0].body;
    expect(message).toMatchObject({
      action: 'read',
      projectId: fixture.projectId,
      provider: 'sandboxApiKey',
      groupRef: fixture.groupRef,
      installationId: fixture.installationId,
      objectName: 'contacts',
      rawObjectName: 'contacts',
      operationId,
      readType: 'backfill',
      resultInfo: { type: 'inline', numRecords: 200 },
    });
    const entry = message.result[0];
    expect(Object.keys(entry.fields).sort()).toEqual(['email', 'firstname']);
    expect(Object.keys(entry.mappedFields)).toEqual(['surname']);
    expect(entry.raw.id).toEqual(expect.any(String));
    expect(entry.mappedFields.surname).toBe(entry.raw.lastName);
  });

  it('records the operation, its progress, logs and the installation’s health', async () => {
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}`);
    expect(operation.status).toBe(200);
    expect(operation.body).toMatchObject({
      id: operationId,
      actionType: 'read',
      status: 'success',
      result: 'Read 450 contacts in 1 page.',
      installationId: fixture.installationId,
      metadata: {
        objects: ['contacts'],
        readType: 'backfill',
        progress: {
          installationId: fixture.installationId,
          objectName: 'contacts',
          operationId,
          recordsProcessed: CONTACTS,
          recordsEstimatedTotal: CONTACTS,
        },
      },
    });
    const logs = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}/logs`);
    expect(logs.status).toBe(200);
    const severities = logs.body.map((log: any) => log.severity);
    expect(severities[0]).toBe('INFO');
    expect(severities.at(-1)).toBe('INFO');
    const requests = logs.body.filter((log: any) => log.severity === 'DEBUG');
    // A count and one page: the provider's page is as large as it allows, its messages of 200 records.
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(requests[1].message.details.request).url).toContain('limit=1000');
    expect(requests[0].message).toMatchObject({ operation_id: operationId });
    expect(JSON.parse(requests[0].message.details.request)).toMatchObject({
      method: 'GET',
      url: expect.stringContaining('/api/v1/contacts'),
    });
    expect(JSON.stringify(logs.body)).not.toContain('sandbox-demo-key');

    const installation = await (
      await newEntityManager()
    ).findOneOrFail('Installation', { id: fixture.installationId });
    expect(installation).toMatchObject({ lastOperationStatus: 'success', healthStatus: 'healthy' });
  });

  it('completes each message’s attempt in the ledger with its page’s checkpoint', async () => {
    const em = await newEntityManager();
    const attempts = await em.execute<{ pending: boolean; delivered: boolean; status: number }[]>(
      'select pending, delivered, status from delivery_attempts where operation_id = ? order by id',
      [operationId],
    );
    expect(attempts).toEqual(Array(3).fill({ pending: false, delivered: true, status: 200 }));
  });

  it('moves the watermark to the newest change the provider returned, never to its own clock, and marks the backfill done', async () => {
    const watermark = await (
      await newEntityManager()
    ).findOneOrFail(ReadWatermarkEntity, {
      installationId: fixture.installationId,
      objectName: 'contacts',
    });
    expect(watermark.backfillDone).toBe(true);
    const delivered = fixture.receiver
      .accepted()
      .flatMap((request) => request.body?.result ?? [])
      .map((entry: any) => Date.parse(entry.raw.updatedAt));
    expect(watermark.watermark!.getTime()).toBe(Math.max(...delivered));
  });

  it('emits read.backfill.done', async () => {
    const done = (await events(stack.project.id, 'read.backfill.done')).filter(
      (event) => event.data.operationId === operationId,
    );
    expect(done).toHaveLength(1);
    expect(done[0].data).toMatchObject({
      objectName: 'contacts',
      installationId: fixture.installationId,
      groupRef: fixture.groupRef,
      provider: 'sandboxApiKey',
    });
  });

  it('reports the backfill’s progress, naming the installation and object as the public document requires', async () => {
    const path = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/objects/contacts/backfill-progress`;
    const progress = await stack.api('GET', path);
    expect(progress.status).toBe(200);
    expect(progress.body).toMatchObject({
      installationId: fixture.installationId,
      objectName: 'contacts',
      operationId,
      recordsProcessed: CONTACTS,
      recordsEstimatedTotal: CONTACTS,
    });
    expect(new PublicApi().checkResponse('api', 'GET', path, progress)).toEqual([]);
  });

  it('is followed by scheduled reads that deliver nothing already delivered', async () => {
    const before = fixture.receiver.requests.length;
    const run = await runRead(stack, fixture, { readType: 'scheduled' });
    expect(run.result).toMatchObject({ status: 'success', recordsProcessed: 0 });
    expect(fixture.receiver.requests.length).toBe(before);
  });
});

describe('a read to a destination that had been failing', () => {
  it('marks it healthy again once a page is accepted', async () => {
    const fixture = await createReadFixture(stack, {
      declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: 500 } },
    });
    try {
      const failingSince = new Date(Date.now() - 60_000);
      await (
        await newEntityManager()
      ).execute('update destinations set first_failure_time = ? where id = ?', [
        failingSince,
        fixture.destinationId,
      ]);
      const run = await runRead(stack, fixture, { readType: 'backfill' });
      expect(run.result.status).toBe('success');
      const [destination] = await (
        await newEntityManager()
      ).execute<{ first_failure_time: Date | null }[]>(
        'select first_failure_time from destinations where id = ?',
        [fixture.destinationId],
      );
      expect(destination.first_failure_time).toBeNull();
    } finally {
      fixture.receiver.stop();
    }
  });
});
