import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { msToTs } from '@temporalio/common/lib/time.js';
import { config } from '../../src/config.js';
import { temporalClient } from '../../src/temporal/client.js';
import { retentionWorkflowId } from '../../src/temporal/contracts/workflow-ids.js';
import { setRetention } from '../../src/temporal/dev-server.js';
import { describeRetention, runRetentionNow, startRetentionWorkflow } from '../../src/temporal/gateway.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { RetentionFixture } from './fixtures.js';

/**
 * The cleanup workflow on the real stack: the Temporal dev server, a worker with the real activity,
 * and PostgreSQL. Started twice, it runs once; asked for a pass, it deletes what is past its window.
 */

let stack: TestStack;
let fixture: RetentionFixture;

beforeAll(async () => {
  stack = await startTestStack({ worker: true });
  fixture = await RetentionFixture.create();
});

afterAll(async () => {
  const client = await temporalClient().catch(() => undefined);
  await client?.workflow
    .getHandle(retentionWorkflowId(stack.taskQueue))
    .terminate('test over')
    .catch(() => undefined);
  await fixture?.close();
  await stack?.close();
});

describe('the retention workflow on the real stack', () => {
  it('is started once however many workers start it, on the latest schedule', async () => {
    await Promise.all([
      startRetentionWorkflow({ schedule: '0 3 * * *', taskQueue: stack.taskQueue }),
      startRetentionWorkflow({ schedule: '0 3 * * *', taskQueue: stack.taskQueue }),
    ]);
    const client = await temporalClient();
    const handle = client.workflow.getHandle(retentionWorkflowId(stack.taskQueue));
    const first = await handle.describe();
    await startRetentionWorkflow({ schedule: '45 * * * *', taskQueue: stack.taskQueue });
    const second = await handle.describe();
    expect(second.runId).toBe(first.runId);
    expect(second.status.name).toBe('RUNNING');
    expect((await describeRetention({ taskQueue: stack.taskQueue })).schedule).toBe('45 * * * *');
  });

  it('deletes what is past its window when asked for a pass, and keeps the rest', async () => {
    const old = await fixture.operation({ ageDays: 40 });
    const fresh = await fixture.operation({ ageDays: 1 });
    await fixture.logs(old, 40, 25);
    await fixture.logs(fresh, 1, 4);
    await fixture.attempts(old, 40, { count: 3 });
    const result = await runRetentionNow({ taskQueue: stack.taskQueue, deadlineMs: 120_000 });
    expect(result.tasks.map((task) => task.task)).toEqual([
      'operation-logs',
      'delivery-attempts',
      'stored-pages',
      'read-checkpoints',
      'read-fingerprints',
      'subscription-events',
      'events',
      'operations',
    ]);
    expect(result.tasks.every((task) => task.done)).toBe(true);
    expect(result.tasks[0].deleted).toBeGreaterThanOrEqual(25);
    expect(await fixture.count('operation_logs', 'operation_id = $2', [old])).toBe(0);
    expect(await fixture.count('operation_logs', 'operation_id = $2', [fresh])).toBe(4);
    expect(await fixture.count('delivery_attempts', 'operation_id = $2', [old])).toBe(0);
    expect((await describeRetention({ taskQueue: stack.taskQueue })).lastPass?.finishedAt).toBe(
      result.finishedAt,
    );
  });
});

describe("the dev server's namespace retention", () => {
  it('is set to FERRY_RETENTION_TEMPORAL_DAYS', async () => {
    const client = await temporalClient();
    const namespace = `retention-${randomUUID().slice(0, 8)}`;
    await client.connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    await setRetention(config().temporal.address, namespace, 45);
    const described = await client.connection.workflowService.describeNamespace({ namespace });
    expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds)).toBe(45 * 86_400);
  });
});
