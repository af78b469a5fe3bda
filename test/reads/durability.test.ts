import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { messageIdFor } from '../../src/delivery/messages.js';
import { em } from '../../src/db/orm.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { temporalClient } from '../../src/temporal/client.js';
import type { ReadObjectInput, ReadObjectResult } from '../../src/temporal/contracts/read.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { createReadFixture, type ReadFixture } from './fixtures.js';

const CONTACTS = 2000;
const PAGE_SIZE = 50;
const PAGES = CONTACTS / PAGE_SIZE;

let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;
let ledgerFixture: ReadFixture | undefined;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  // Several provider pages, as a provider with small pages gives them: the read moves page by page.
  process.env.FERRY_READ_PROVIDER_PAGE_SIZE = String(PAGE_SIZE);
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  // Slow pages, so the read is still running when its worker is killed.
  sandbox.faults.set({ latencyMs: 40 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = '0,100ms,200ms';
  // No worker in this process: the only workers are the child processes below.
  stack = await startTestStack();
  fixture = await createReadFixture(stack, {
    declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: PAGE_SIZE } },
  });
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.kill('SIGKILL')));
  await fixture?.receiver.stop();
  await ledgerFixture?.receiver.stop();
  await stack?.close();
  await sandbox?.close();
});

async function worker(): Promise<WorkerProcess> {
  const started = startWorkerProcess({
    FERRY_TASK_QUEUE: stack.taskQueue,
    FERRY_SANDBOX_URL: sandbox.url,
    FERRY_DELIVERY_RETRY_SCHEDULE: process.env.FERRY_DELIVERY_RETRY_SCHEDULE,
  });
  workers.push(started);
  await started.ready;
  return started;
}

describe('a worker killed in the middle of a backfill', () => {
  it('is replaced by another that finishes the backfill from the last page: nothing lost, no page from zero', async () => {
    const first = await worker();
    const operationId = randomUUID();
    const client = await temporalClient();
    const input: ReadObjectInput = {
      operationId,
      installationId: fixture.installationId,
      projectId: fixture.projectId,
      objectName: 'contacts',
      readType: 'backfill',
    };
    const handle = await client.workflow.start('readObjectWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `read/${operationId}`,
      args: [input],
    });

    const { receiver } = fixture;
    await receiver.waitFor(() => receiver.accepted().length >= PAGES / 4, 60_000, 'a quarter of the pages');
    const exit = await first.kill('SIGKILL');
    expect(exit).toBeNull(); // killed by the signal, not exited
    const deliveredBeforeKill = new Set(receiver.accepted().map((request) => request.messageId)).size;
    expect(deliveredBeforeKill).toBeLessThan(PAGES);

    await worker();
    const result = (await handle.result()) as ReadObjectResult;
    expect(result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });

    // Every record arrived.
    const ids = receiver.acceptedRecordIds();
    expect(new Set(ids).size).toBe(CONTACTS);

    // Duplicates are only redeliveries of one message, with its id and its exact body.
    const bodies = new Map<string, string>();
    for (const request of receiver.accepted()) {
      const known = bodies.get(request.messageId);
      if (known !== undefined) expect(request.rawBody).toBe(known);
      bodies.set(request.messageId, request.rawBody);
    }
    const expectedIds = Array.from({ length: PAGES }, (_, page) => messageIdFor(operationId, page, 0));
    expect([...bodies.keys()].sort()).toEqual([...expectedIds].sort());
    expect(receiver.requests.every((request) => request.verified)).toBe(true);

    // Resumed from the checkpoint: the pages delivered before the kill were not sent again, except
    // at most the two newest: the one on its way when the worker died, and the one before it if its
    // checkpoint write (which runs beside the next delivery) had not committed yet.
    const deliveries = new Map<string, number>();
    for (const request of receiver.accepted()) {
      deliveries.set(request.messageId, (deliveries.get(request.messageId) ?? 0) + 1);
    }
    const redelivered = [...deliveries.values()].filter((count) => count > 1).length;
    expect(redelivered).toBeLessThanOrEqual(2);
    expect(deliveries.get(expectedIds[0])).toBe(1);
  }, 120_000);
});

interface LedgerRow {
  message_id: string;
  attempt: number;
  pending: boolean;
  delivered: boolean;
}

async function ledger(operationId: string): Promise<LedgerRow[]> {
  return (await em()).execute<LedgerRow[]>(
    `select message_id, attempt, pending, delivered from delivery_attempts
      where operation_id = ? order by message_id, attempt`,
    [operationId],
  );
}

describe('the delivery attempts ledger across a worker crash', () => {
  it('keeps the attempts a worker sent before it died between the send and the checkpoint', async () => {
    // Only this test's workers serve the queue.
    await Promise.all(workers.map((running) => running.kill('SIGKILL')));
    // Every message is held unanswered until the worker sending it is dead.
    const received: string[] = [];
    let firstArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    const receiver = await WebhookReceiver.start();
    receiver.respond(async (request) => {
      if (!holding) return { status: 200 };
      received.push(request.messageId);
      firstArrived();
      await released;
      return { status: 200 };
    });
    ledgerFixture = await createReadFixture(stack, {
      receiver,
      declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: PAGE_SIZE } },
    });
    const first = await worker();
    const operationId = randomUUID();
    const client = await temporalClient();
    const handle = await client.workflow.start('readObjectWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `read/${operationId}`,
      args: [
        {
          operationId,
          installationId: ledgerFixture.installationId,
          projectId: ledgerFixture.projectId,
          objectName: 'contacts',
          readType: 'backfill',
        } satisfies ReadObjectInput,
      ],
    });

    await arrived;
    expect(await first.kill('SIGKILL')).toBeNull();
    const sentBeforeCrash = [...new Set(received)];
    holding = false;
    release();

    // Nothing was checkpointed, yet every message the dead worker sent is in the ledger, pending.
    const afterCrash = await ledger(operationId);
    expect(sentBeforeCrash).toContain(messageIdFor(operationId, 0, 0));
    for (const messageId of sentBeforeCrash) {
      expect(afterCrash.filter((row) => row.message_id === messageId)).toEqual([
        { message_id: messageId, attempt: 1, pending: true, delivered: false },
      ]);
    }

    await worker();
    const result = (await handle.result()) as ReadObjectResult;
    expect(result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });

    // Each message's redelivery is attempt 2 beside the pending first one; nothing else is pending,
    // and the ledger holds at least as many attempts of each message as the receiver got.
    const rows = await ledger(operationId);
    for (const messageId of sentBeforeCrash) {
      expect(rows.filter((row) => row.message_id === messageId)).toEqual([
        { message_id: messageId, attempt: 1, pending: true, delivered: false },
        { message_id: messageId, attempt: 2, pending: false, delivered: true },
      ]);
    }
    expect(
      rows
        .filter((row) => row.pending)
        .map((row) => row.message_id)
        .sort(),
    ).toEqual([...sentBeforeCrash].sort());
    const requestsPerMessage = new Map<string, number>();
    for (const request of receiver.requests)
      requestsPerMessage.set(request.messageId, (requestsPerMessage.get(request.messageId) ?? 0) + 1);
    const unrecorded = [...requestsPerMessage].filter(
      ([messageId, requests]) => rows.filter((row) => row.message_id === messageId).length < requests,
    );
    expect(unrecorded).toEqual([]);
    expect(new Set(rows.filter((row) => row.delivered).map((row) => row.message_id)).size).toBe(PAGES);
  }, 120_000);
});
