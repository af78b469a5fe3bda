import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { temporalTestServerPath } from '../../src/temporal/cli.js';
import {
  RETENTION_TASKS,
  configureRetentionSignal,
  describeRetentionQuery,
  runRetentionNowUpdate,
  type RetentionProgress,
  type RetentionTaskInput,
  type RetentionWorkflowInput,
} from '../../src/temporal/contracts/retention.js';
import type { retentionWorkflow } from '../../workflows/retention.js';

/**
 * The cleanup workflow on Temporal's time-skipping test server, its activity replaced by one that
 * records each call at its simulated time: days pass in seconds, and the test sees when passes ran.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
let taskQueue: string;
const calls: { task: string; at: number }[] = [];
/** How each call answers; done at once by default. */
let behaviour: (input: RetentionTaskInput, call: number) => Partial<RetentionProgress> | Error = () => ({});

beforeAll(async () => {
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: temporalTestServerPath() } },
  });
  const { code } = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../../workflows/retention.ts', import.meta.url)),
    logger: silent,
  });
  taskQueue = `retention-${randomUUID()}`;
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { code },
    activities: {
      async runRetentionTask(input: RetentionTaskInput): Promise<RetentionProgress> {
        const call = calls.filter((recorded) => recorded.task === input.task).length;
        calls.push({ task: input.task, at: await env.currentTimeMs() });
        const answer = behaviour(input, call);
        if (answer instanceof Error) throw answer;
        return { task: input.task, deleted: 5, batches: 1, longestBatchMs: 3, done: true, ...answer };
      },
    },
  });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const handles: WorkflowHandle[] = [];
beforeEach(async () => {
  for (const handle of handles.splice(0)) await handle.terminate('test over').catch(() => undefined);
  calls.length = 0;
  behaviour = () => ({});
});

/** Starts the workflow at a quarter past some hour of simulated time, away from every fire. */
async function start(input: RetentionWorkflowInput): Promise<WorkflowHandle<typeof retentionWorkflow>> {
  const now = await env.currentTimeMs();
  await env.sleep(HOUR - ((now - 15 * MINUTE) % HOUR));
  const handle = await env.client.workflow.start<typeof retentionWorkflow>('retentionWorkflow', {
    workflowId: `retention/${randomUUID()}`,
    taskQueue,
    args: [input],
  });
  handles.push(handle);
  return handle;
}

/** The simulated times at which passes began (their first task's call). */
const passStarts = () =>
  calls.filter((call) => call.task === RETENTION_TASKS[0]).map((call) => new Date(call.at));

describe('the retention workflow', () => {
  it('runs a pass at each fire of its schedule, every task in order, children before operations', async () => {
    const handle = await start({ schedule: '0 3 * * *' });
    const started = await env.currentTimeMs();
    await env.sleep(3 * DAY);
    const starts = passStarts();
    expect(starts).toHaveLength(3);
    for (const at of starts) {
      expect(at.toISOString().slice(11, 16)).toBe('03:00');
      expect(at.getTime()).toBeGreaterThan(started);
    }
    expect(calls.slice(0, RETENTION_TASKS.length).map((call) => call.task)).toEqual([...RETENTION_TASKS]);
    const description = await handle.query(describeRetentionQuery);
    expect(description.schedule).toBe('0 3 * * *');
    expect(description.nextPassAt.slice(11, 16)).toBe('03:00');
    expect(description.lastPass?.tasks.map((task) => [task.task, task.deleted, task.done])).toEqual(
      RETENTION_TASKS.map((task) => [task, 5, true]),
    );
  });

  it('calls a task again until it is done, adding up what each call deleted', async () => {
    behaviour = (input, call) => (input.task === 'operation-logs' && call < 2 ? { done: false } : {});
    const handle = await start({ schedule: '0 * * * *' });
    await env.sleep(HOUR);
    expect(calls.filter((call) => call.task === 'operation-logs')).toHaveLength(3);
    const { lastPass } = await handle.query(describeRetentionQuery);
    expect(lastPass?.tasks[0]).toEqual({
      task: 'operation-logs',
      deleted: 15,
      batches: 3,
      longestBatchMs: 3,
      done: true,
    });
  });

  it('skips a task that keeps failing and still runs the others', async () => {
    behaviour = (input) =>
      input.task === 'stored-pages' ? ApplicationFailure.nonRetryable('statement timeout', 'Timeout') : {};
    const handle = await start({ schedule: '0 * * * *' });
    await env.sleep(HOUR);
    const { lastPass } = await handle.query(describeRetentionQuery);
    const byTask = Object.fromEntries(lastPass!.tasks.map((task) => [task.task, task.done]));
    expect(byTask['stored-pages']).toBe(false);
    expect(byTask.operations).toBe(true);
    expect(calls.map((call) => call.task)).toContain('operations');
  });

  it('moves to a new schedule when signalled, and runs a pass at once when asked', async () => {
    const handle = await start({ schedule: '0 3 * * *' });
    await handle.signal(configureRetentionSignal, { schedule: '*/10 * * * *' });
    await env.sleep(30 * MINUTE);
    expect(passStarts().map((at) => at.getUTCMinutes() % 10)).toEqual([0, 0, 0]);
    const before = calls.length;
    const result = await handle.executeUpdate(runRetentionNowUpdate);
    expect(result.tasks).toHaveLength(RETENTION_TASKS.length);
    expect(calls.length - before).toBe(RETENTION_TASKS.length);
    expect((await handle.query(describeRetentionQuery)).schedule).toBe('*/10 * * * *');
  });

  it('ignores a signalled schedule that cannot fire and keeps its own', async () => {
    const handle = await start({ schedule: '0 3 * * *' });
    await handle.signal(configureRetentionSignal, { schedule: 'whenever' });
    await env.sleep(DAY);
    expect((await handle.query(describeRetentionQuery)).schedule).toBe('0 3 * * *');
    expect(passStarts()).toHaveLength(1);
  });

  it('continues as new after its passes, keeping its schedule and its last pass', async () => {
    const handle = await start({ schedule: '0 * * * *', maxPasses: 2 });
    const { runId } = await handle.describe();
    await env.sleep(3 * HOUR);
    expect(passStarts()).toHaveLength(3);
    const latest = env.client.workflow.getHandle<typeof retentionWorkflow>(handle.workflowId);
    const description = await latest.describe();
    expect(description.runId).not.toBe(runId);
    expect(description.status.name).toBe('RUNNING');
    const state = await latest.query(describeRetentionQuery);
    expect(state.schedule).toBe('0 * * * *');
    expect(state.lastPass?.tasks).toHaveLength(RETENTION_TASKS.length);
    handles.push(latest);
  });
});
