import { condition, proxyActivities, sleep } from '@temporalio/workflow';
import type { ReadObjectInput, ReadObjectResult } from '../../../src/temporal/contracts/read.js';

/**
 * The workflows of the time-skipping tests: the real installation workflow, and a stand-in for the
 * read child (same type name) whose duration and outcome the test decides, so the installation
 * workflow's scheduling is tested apart from the read pipeline.
 */
export { installationWorkflow } from '../../../workflows/installation.js';
import { WakeTimer } from '../../../workflows/wake-timer.js';

export interface FakeReadBehaviour {
  durationMs: number;
  status: 'success' | 'failure';
  authFailure?: boolean;
}

export interface FakeReadActivities {
  fakeReadStarted(input: ReadObjectInput & { at: string }): Promise<FakeReadBehaviour>;
  fakeReadFinished(input: ReadObjectInput & { at: string }): Promise<void>;
}

const { fakeReadStarted, fakeReadFinished } = proxyActivities<FakeReadActivities>({
  startToCloseTimeout: '10 seconds',
});

export async function readObjectWorkflow(input: ReadObjectInput): Promise<ReadObjectResult> {
  const behaviour = await fakeReadStarted({ ...input, at: new Date().toISOString() });
  if (behaviour.durationMs > 0) await sleep(behaviour.durationMs);
  await fakeReadFinished({ ...input, at: new Date().toISOString() });
  return {
    status: behaviour.status,
    recordsProcessed: 0,
    ...(behaviour.authFailure && { authFailure: true }),
    result: 'fake read',
  };
}

/**
 * The wake timer alone, in one task: armed, then cleared as a loop does when nothing is left due.
 * Workflow time is passed in, as a local activity's result would move it on.
 */
export async function wakeTimerClearedInArmingTask(): Promise<{
  behindArmed: boolean;
  behindCleared: boolean;
}> {
  const timer = new WakeTimer();
  const now = Date.now();
  timer.arm(now + 3_600_000, now);
  const behindArmed = timer.behindTaskEnd(now + 1000);
  timer.arm(undefined, now + 1000);
  return { behindArmed, behindCleared: timer.behindTaskEnd(now + 2000) };
}

/** How long (workflow time) the wake timer took to fire: armed in the run's first task, then in a later one. */
export async function wakeTimerFires(lengths: { firstTaskMs: number; laterMs: number }): Promise<{
  firstTaskMs: number;
  laterMs: number;
}> {
  const timer = new WakeTimer();
  let start = Date.now();
  timer.arm(start + lengths.firstTaskMs, start);
  await condition(() => timer.fired);
  const firstTaskMs = Date.now() - start;
  start = Date.now();
  timer.arm(start + lengths.laterMs, start);
  await condition(() => timer.fired);
  return { firstTaskMs, laterMs: Date.now() - start };
}
