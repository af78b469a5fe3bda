import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OperationEntity } from '../../src/db/entities/operation.js';
import { em as newEntityManager } from '../../src/db/orm.js';
import { ReadRun } from '../../src/domain/reads/read-run.js';
import { settleOperation } from '../../src/domain/stuck-operations.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { temporalClient } from '../../src/temporal/client.js';
import type { InlineReadInput } from '../../src/temporal/contracts/read.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { createReadFixture, runRead, type ReadFixture } from './fixtures.js';

/**
 * A scheduled read runs inline in its installation's workflow (one local activity): it finishes
 * there when it fits its page budget, and hands the rest to its own `read/<operationId>` workflow,
 * which resumes from the checkpoint, when it does not.
 */

const CONTACTS = 450;

let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;

beforeAll(async () => {
  // Several provider pages, as a provider with small pages gives them: the read moves page by page.
  process.env.FERRY_READ_PROVIDER_PAGE_SIZE = String(200);
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = '0,100ms,200ms,300ms,500ms';
  stack = await startTestStack({ worker: true });
  fixture = await createReadFixture(stack, {
    declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: 200 } },
  });
});

afterAll(async () => {
  fixture?.receiver.stop();
  await stack?.close();
  await sandbox?.close();
});

const operationOf = async (id: string) => (await newEntityManager()).findOneOrFail(OperationEntity, { id });

function inlineInput(input: Partial<InlineReadInput> & Pick<InlineReadInput, 'readType'>): InlineReadInput {
  return {
    operationId: randomUUID(),
    installationId: fixture.installationId,
    projectId: fixture.projectId,
    objectName: 'contacts',
    maxPages: 5,
    ...input,
  };
}

describe('an inline read', () => {
  it('finishes in one call when its pages fit the budget, its operation pointing at the installation', async () => {
    const input = inlineInput({ readType: 'backfill' });
    const before = fixture.receiver.acceptedRecordIds().length;
    await expect(ReadRun.inline(input, config())).resolves.toEqual({
      handover: false,
      status: 'success',
      recordsProcessed: CONTACTS,
      result: 'Read 450 contacts in 3 pages.',
    });
    expect(fixture.receiver.acceptedRecordIds().length - before).toBe(CONTACTS);
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${input.operationId}`);
    expect(operation.body).toMatchObject({ status: 'success', metadata: { inline: true } });
    expect(operation.body.metadata.temporal.workflowId).toBe(`installation/${fixture.installationId}`);
  });

  it('hands over after its page budget; the read workflow resumes and delivers every record once', async () => {
    const input = inlineInput({ readType: 'backfill', maxPages: 1 });
    const before = fixture.receiver.acceptedRecordIds().length;
    await expect(ReadRun.inline(input, config())).resolves.toEqual({
      handover: true,
      reason: 'more than 1 page to read',
    });
    const handedOver = await operationOf(input.operationId);
    expect(handedOver.status).toBe('in_progress');
    expect(handedOver.metadata.inline).toBe(false);
    expect(fixture.receiver.acceptedRecordIds().length - before).toBe(200);

    const { result } = await runRead(stack, fixture, {
      operationId: input.operationId,
      readType: 'backfill',
    });
    expect(result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });
    const ids = fixture.receiver.acceptedRecordIds().slice(before);
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);
    const logs = await stack.api('GET', `/projects/${stack.project.id}/operations/${input.operationId}/logs`);
    expect(logs.body.map((log: { message: { msg: string } }) => log.message.msg)).toContain(
      'The read continues in its own workflow: more than 1 page to read.',
    );
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${input.operationId}`);
    expect(operation.body.metadata.temporal.workflowId).toBe(`read/${input.operationId}`);
  });

  it('hands a destination that fails retryably to the read workflow, counting the failed attempt', async () => {
    fixture.receiver.respond(() => ({ status: 503 }));
    try {
      const input = inlineInput({ readType: 'backfill' });
      await expect(ReadRun.inline(input, config())).resolves.toMatchObject({
        handover: true,
        wait: { failedAttempts: 1 },
      });
      expect((await operationOf(input.operationId)).status).toBe('in_progress');
      fixture.receiver.respond(() => ({ status: 200 }));
      // The child waits as the hand-over says, then delivers the page again and the rest.
      const handedOver = await runRead(stack, fixture, {
        operationId: input.operationId,
        readType: 'backfill',
        wait: { failedAttempts: 1 },
      });
      expect(handedOver.result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });
    } finally {
      fixture.receiver.respond(() => ({ status: 200 }));
    }
  });

  it("handed over with the retry schedule spent, fails at the destination, as an older version's loose fields said too", async () => {
    for (const wait of [{ wait: { failedAttempts: 5 } }, { failedAttempts: 5 }]) {
      const input = inlineInput({ readType: 'backfill' });
      const { result } = await runRead(stack, fixture, {
        operationId: input.operationId,
        readType: 'backfill',
        ...wait,
      });
      expect(result).toMatchObject({
        status: 'failure',
        result: expect.stringContaining('still failed after 5 attempts'),
      });
      expect((await operationOf(input.operationId)).metadata.failedAtDestinationId).toBe(
        fixture.destinationId,
      );
    }
  });

  it('is left to its running installation by the stuck-operation sweep, and ended without one', async () => {
    const operationId = randomUUID();
    await ReadRun.begin(
      { ...inlineInput({ readType: 'scheduled', operationId }), inline: true },
      'child',
      config(),
    );
    // The installation's workflow, reading nothing: it is all the sweep looks for.
    const handle = await (
      await temporalClient()
    ).workflow.start('installationWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `installation/${fixture.installationId}`,
      args: [
        {
          installationId: fixture.installationId,
          projectId: fixture.projectId,
          config: {
            configId: randomUUID(),
            revisionId: randomUUID(),
            content: { provider: 'sandboxApiKey' },
            reads: [],
          },
        },
      ],
    });
    try {
      // No `read/<id>` workflow exists: before inline reads this ended the operation.
      await expect(settleOperation(operationId)).resolves.toBeUndefined();
      expect((await operationOf(operationId)).status).toBe('in_progress');
    } finally {
      await handle.terminate('test over');
    }
    await expect(settleOperation(operationId)).resolves.toBe('ended');
    expect((await operationOf(operationId)).status).toBe('failure');
  });
});

describe('a quiet scheduled read', () => {
  const logsOf = async (operationId: string) =>
    (await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}/logs`)).body as {
      message: { msg: string; severity?: string };
    }[];
  const watermarkOf = async () =>
    (
      await (
        await newEntityManager()
      )
        .getConnection()
        .execute<{ watermark: Date }[]>(
          'select watermark from read_watermarks where installation_id = ? and object_name = ?',
          [fixture.installationId, 'contacts'],
        )
    ).map((row) => new Date(row.watermark))[0];

  beforeAll(async () => {
    // A backfill first, so that the scheduled reads' window starts now and holds nothing.
    await ReadRun.inline(inlineInput({ readType: 'backfill' }), config());
  });

  it('is recorded finished in one go: operation, log lines, watermark, and no checkpoint', async () => {
    const before = await watermarkOf();
    const delivered = fixture.receiver.acceptedRecordIds().length;
    const input = inlineInput({ readType: 'scheduled' });
    await expect(ReadRun.inline(input, config())).resolves.toEqual({
      handover: false,
      status: 'success',
      recordsProcessed: 0,
      result: 'Read 0 contacts in 1 page.',
    });
    expect(fixture.receiver.acceptedRecordIds().length).toBe(delivered);
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${input.operationId}`);
    expect(operation.body).toMatchObject({
      status: 'success',
      result: 'Read 0 contacts in 1 page.',
      metadata: { inline: true, readType: 'scheduled', destination: fixture.destinationName },
    });
    expect(operation.body.metadata.window.until).toEqual(expect.any(String));
    const messages = (await logsOf(input.operationId)).map((log) => log.message.msg);
    expect(messages[0]).toMatch(/^Started scheduled read of contacts from .* until /);
    expect(messages.some((msg) => /^GET .*contacts.* → 200/.test(msg))).toBe(true);
    expect(messages.at(-1)).toBe('Read 0 contacts in 1 page.');
    const checkpoints = await (
      await newEntityManager()
    )
      .getConnection()
      .execute('select 1 from read_checkpoints where operation_id = ?', [input.operationId]);
    expect(checkpoints).toHaveLength(0);
    // The provider returned nothing new, so the object's position stays where its data put it: the
    // window's end, Ferry's clock, never moves it.
    const after = await watermarkOf();
    expect(after!.getTime()).toBe(before!.getTime());
    expect(after!.getTime()).toBeLessThan(Date.parse(operation.body.metadata.window.until));
    const installation = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/${fixture.installationId}`,
    );
    expect(installation.body).toMatchObject({ healthStatus: 'healthy', lastOperationStatus: 'success' });
  });

  it("to a disabled destination is not recorded quiet: it fails with the destination's reason", async () => {
    const sql = 'update destinations set disabled_time = ? where project_id = ? and name = ?';
    const connection = (await newEntityManager()).getConnection();
    await connection.execute(sql, [new Date(), fixture.projectId, fixture.destinationName]);
    try {
      const input = inlineInput({ readType: 'scheduled' });
      await expect(ReadRun.inline(input, config())).resolves.toMatchObject({
        handover: false,
        status: 'failure',
        result: expect.stringContaining('is disabled'),
      });
      expect((await operationOf(input.operationId)).status).toBe('failure');
    } finally {
      await connection.execute(sql, [null, fixture.projectId, fixture.destinationName]);
    }
  });

  it("finds no installation under another project's id", async () => {
    await expect(
      ReadRun.inline(inlineInput({ readType: 'scheduled', projectId: randomUUID() }), config()),
    ).resolves.toMatchObject({
      status: 'failure',
      result: expect.stringContaining('no longer exists'),
    });
  });

  it('run again (the activity retried after its commit), answers the same and writes nothing more', async () => {
    const input = inlineInput({ readType: 'scheduled' });
    const first = await ReadRun.inline(input, config());
    const logs = (await logsOf(input.operationId)).length;
    await expect(ReadRun.inline(input, config())).resolves.toEqual(first);
    expect(await logsOf(input.operationId)).toHaveLength(logs);
  });

  it('with records in its window, reads them the long way, asking the provider for the first page once', async () => {
    const created = await fetch(`${sandbox.url}/api/v1/contacts`, {
      method: 'POST',
      headers: { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
      body: JSON.stringify({ email: `quiet-${randomUUID()}@example.com`, firstName: 'Ada' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const input = inlineInput({ readType: 'scheduled' });
    await expect(ReadRun.inline(input, config())).resolves.toMatchObject({
      handover: false,
      status: 'success',
      recordsProcessed: 1,
    });
    expect(fixture.receiver.acceptedRecordIds()).toContain(id);
    const requests = (await logsOf(input.operationId)).filter((log) =>
      /^GET \S*\/contacts\?/.test(log.message.msg),
    );
    expect(requests).toHaveLength(1);
    const checkpoint = await (
      await newEntityManager()
    )
      .getConnection()
      .execute<{ done: boolean }[]>('select done from read_checkpoints where operation_id = ?', [
        input.operationId,
      ]);
    expect(checkpoint).toEqual([{ done: true }]);
  });
});
