import { proxyLocalActivities } from '@temporalio/workflow';
import type { ReadObjectInput, ReadObjectResult } from '../src/temporal/contracts/read.js';
import type * as activities from './installation-activities.js';

/**
 * The benchmark's workflows: the real installation workflow, and a stand-in read child (same type
 * name) that records its operation row and reads nothing. The bench measures scheduling, not
 * providers: `bench:read` measures the read pipeline.
 */
export { installationWorkflow } from '../workflows/installation.js';

// A local activity: the stand-in costs the server a marker, not an activity task round trip.
const { recordBenchRead } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '30 seconds' });

export async function readObjectWorkflow(input: ReadObjectInput): Promise<ReadObjectResult> {
  await recordBenchRead(input);
  return { status: 'success', recordsProcessed: 0, result: 'bench read: nothing read' };
}
