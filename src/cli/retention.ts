import { config } from '../config.js';
import { logger } from '../logger.js';
import { closeTemporalClient } from '../temporal/client.js';
import { runRetentionNow, startRetentionWorkflow } from '../temporal/gateway.js';

/**
 * Run when a worker starts: starts the cleanup workflow, or hands the running one this worker's
 * FERRY_RETENTION_SCHEDULE. Logs a failure; never stops the worker.
 */
export function startRetentionInBackground(): void {
  const { retention, temporal } = config();
  const { schedule } = retention;
  startRetentionWorkflow({ schedule, taskQueue: temporal.taskQueue })
    .then(() => logger.info({ schedule }, 'retention workflow running'))
    .catch((error: unknown) => logger.error({ err: error }, 'could not start the retention workflow'));
}

/** `ferry retention run`: one cleanup pass now, through the running workflow; prints what it deleted. */
export async function retentionRunCommand(): Promise<void> {
  try {
    const result = await runRetentionNow({ taskQueue: config().temporal.taskQueue, deadlineMs: 60 * 60_000 });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await closeTemporalClient();
  }
}
