import { proxyActivities, sleep } from '@temporalio/workflow';
import type { ReadObjectInput, ReadObjectResult } from '../../../src/temporal/contracts/read.js';

/**
 * The workflows of the time-skipping tests: the real installation workflow, and a stand-in for the
 * read child (same type name) whose duration and outcome the test decides, so the installation
 * workflow's scheduling is tested apart from the read pipeline.
 */
export { installationWorkflow } from '../../../workflows/installation.js';

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
