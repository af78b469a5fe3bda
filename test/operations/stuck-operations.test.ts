import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InstallationEntity } from '../../src/db/entities/installation.js';
import { OperationEntity } from '../../src/db/entities/operation.js';
import { em as newEntityManager, transaction } from '../../src/db/orm.js';
import { createOperation } from '../../src/domain/operations.js';
import { createReadOperation } from '../../src/domain/reads/read-operation.js';
import { sweepStuckOperations } from '../../src/domain/stuck-operations.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { temporalClient } from '../../src/temporal/client.js';
import { eventually } from '../installations/support.js';
import { createReadFixture, enableContactWrites, runRead, type ReadFixture } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Operations left `in_progress` by a crash, with no run behind them, end or resume by themselves:
 * the sweep every worker runs finds them, logs why, and the installation's status follows.
 */

let sandbox: Sandbox;
let stack: TestStack;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 120, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  // Synchronous writes touch their operation four times per this window (here every 250 ms).
  process.env.FERRY_STUCK_OPERATION_SECONDS = '1';
  stack = await startTestStack({ worker: true });
});

afterAll(async () => {
  delete process.env.FERRY_STUCK_OPERATION_SECONDS;
  await stack?.close();
  await sandbox?.close();
});

const sweep = () => sweepStuckOperations({ projectId: stack.project.id, staleAfterMs: 60_000 });
const operation = async (id: string) =>
  (await stack.api('GET', `/projects/${stack.project.id}/operations/${id}`)).body;
const logMessages = async (id: string): Promise<string[]> =>
  (await stack.api('GET', `/projects/${stack.project.id}/operations/${id}/logs`)).body.map(
    (log: any) => log.message.msg,
  );

/** Makes the operation look untouched for ten minutes, as one whose process died would. */
async function age(operationId: string): Promise<void> {
  const em = await newEntityManager();
  await em.nativeUpdate(OperationEntity, { id: operationId }, { updateTime: new Date(Date.now() - 600_000) });
}

/** An operation row as the API commits it just before it would start (or tell) the run. */
async function committedOnly(fixture: ReadFixture, kind: 'triggered' | 'sync write' | 'async write') {
  return transaction(async (em) => {
    const installation = await em.findOneOrFail(InstallationEntity, { id: fixture.installationId });
    installation.lastOperationStatus = 'in_progress';
    if (kind === 'triggered') {
      return createReadOperation(em, installation, {
        operationId: randomUUID(),
        objectName: 'contacts',
        readType: 'triggered',
        metadata: { backfill: true, requested: {} },
      }).id;
    }
    const created = createOperation(em, {
      projectId: installation.projectId,
      integrationId: installation.integrationId,
      installationId: installation.id,
      configId: installation.configId,
      actionType: 'write',
      metadata: {
        objects: ['contacts'],
        writeType: 'create',
        mode: kind === 'sync write' ? 'synchronous' : 'asynchronous',
        records: 2,
      },
    });
    em.persist(created);
    return created.id;
  });
}

describe('sweeping operations with no live run', () => {
  it('asks the workflow again for a triggered read it never heard of, and the read runs once', async () => {
    const fixture = await createReadFixture(stack);
    const operationId = await committedOnly(fixture, 'triggered');
    await age(operationId);

    expect(await sweep()).toMatchObject({ resumed: 1, ended: 0 });
    const done = await eventually(async () => {
      const body = await operation(operationId);
      return body.status !== 'in_progress' && body;
    }, 60_000);
    expect(done.status).toBe('success');
    expect(fixture.receiver.acceptedRecordIds()).toHaveLength(120);
    expect(await logMessages(operationId)).toContainEqual(
      expect.stringContaining('had not heard of this read'),
    );
    // Nothing is stale any more: a second sweep changes nothing.
    expect(await sweep()).toMatchObject({ resumed: 0, ended: 0 });
    await fixture.receiver.stop();
  });

  it('ends an asynchronous write whose run never started, with the write.async.done event', async () => {
    const fixture = await createReadFixture(stack);
    const operationId = await committedOnly(fixture, 'async write');
    await age(operationId);

    expect(await sweep()).toMatchObject({ ended: 1 });
    const ended = await operation(operationId);
    expect(ended).toMatchObject({ status: 'failure', result: 'Created 0 of 2 contacts records' });
    expect(ended.metadata.errors[0].error).toContain('its run never started');
    expect(await logMessages(operationId)).toContainEqual(expect.stringContaining('nothing was sent'));
    const em = await newEntityManager();
    const installation = await em.findOneOrFail(InstallationEntity, { id: fixture.installationId });
    expect(installation.lastOperationStatus).toBe('failure');
    const events = await em.execute<{ type: string }[]>(
      `select type from events where project_id = ? and data->>'operationId' = ?`,
      [stack.project.id, operationId],
    );
    expect(events.map((event) => event.type)).toEqual(['write.async.done']);
    await fixture.receiver.stop();
  });

  it('ends a synchronous write whose API process stopped, saying records may have been written', async () => {
    const fixture = await createReadFixture(stack);
    const operationId = await committedOnly(fixture, 'sync write');
    await age(operationId);

    expect(await sweep()).toMatchObject({ ended: 1 });
    const ended = await operation(operationId);
    expect(ended.status).toBe('failure');
    expect(ended.metadata.errors[0].error).toContain('records before the stop may have been written');
    await fixture.receiver.stop();
  });

  it('leaves a read whose run is alive, and ends it once the run is terminated', async () => {
    const fixture = await createReadFixture(stack, { declared: { delivery: { pageSize: 50 } } });
    sandbox.faults.set({ latencyMs: 1500 });
    const operationId = randomUUID();
    const reading = runRead(stack, fixture, { readType: 'scheduled', operationId }).catch((error) => error);
    await eventually(async () => (await operation(operationId)).status === 'in_progress', 30_000);
    await age(operationId);

    await sweep();
    expect((await operation(operationId)).status).toBe('in_progress');

    await (await temporalClient()).workflow.getHandle(`read/${operationId}`).terminate('killed in a test');
    await reading;
    sandbox.faults.set({ latencyMs: 0 });
    await age(operationId);
    expect(await sweep()).toMatchObject({ ended: 1 });
    const ended = await operation(operationId);
    expect(ended).toMatchObject({
      status: 'failure',
      result: 'Its run ended (TERMINATED) before it recorded an outcome.',
    });
    expect(await logMessages(operationId)).toContain(
      'Its run ended (TERMINATED) before it recorded an outcome.',
    );
    await fixture.receiver.stop();
  });

  it('leaves a synchronous write that is still writing: it touches its operation as it goes', async () => {
    const fixture = await createReadFixture(stack);
    const integration = await enableContactWrites(stack, fixture);
    sandbox.faults.set({ latencyMs: 600 });
    const writing = stack.write(
      'POST',
      `/projects/${stack.project.id}/integrations/${integration.id}/objects/contacts`,
      {
        body: {
          groupRef: fixture.groupRef,
          type: 'create',
          mode: 'synchronous',
          batch: [1, 2, 3, 4].map((n) => ({
            record: { email: `alive-${n}-${randomUUID().slice(0, 6)}@example.com` },
          })),
        },
      },
    );
    let answered = false;
    void writing.finally(() => (answered = true));
    // Sweeps as often as a busy repair loop would, judging anything untouched for a second.
    const deadline = Date.now() + 30_000;
    while (!answered && Date.now() < deadline) {
      await sweepStuckOperations({ projectId: stack.project.id, staleAfterMs: 1000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    sandbox.faults.set({ latencyMs: 0 });
    const written = await writing;
    expect(written.status).toBe(200);
    expect(written.body.results.map((result: any) => result.success)).toEqual([true, true, true, true]);
    expect((await operation(written.body.operationId)).status).toBe('success');
    await fixture.receiver.stop();
  });

  it('never judges an operation touched recently', async () => {
    const fixture = await createReadFixture(stack);
    const operationId = await committedOnly(fixture, 'async write');
    expect(await sweep()).toMatchObject({ examined: 0 });
    expect((await operation(operationId)).status).toBe('in_progress');
    await fixture.receiver.stop();
  });
});
