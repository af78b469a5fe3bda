import { fileURLToPath } from 'node:url';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type WorkerOptions,
} from '@temporalio/worker';
import { config } from '../config.js';
import { logger } from '../logger.js';
import * as activities from '../../activities/index.js';
import { heartbeatEveryActivity } from './activity-heartbeat.js';

export const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));

export interface FerryWorkerOptions {
  taskQueue?: string;
  /** A prebuilt bundle (tests build one per run) instead of bundling `workflows/` now. */
  workflowBundlePath?: string;
  overrides?: Partial<WorkerOptions>;
}

let runtimeInstalled = false;

/** Routes the SDK's own logs (bundler chatter included) through pino, warnings and up only. */
function installRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', (entry) =>
        logger[levels[entry.level]]({ temporal: entry.meta }, entry.message),
      ),
    });
  } catch {
    // Already installed by an earlier worker in this process; keep that one.
  }
}

/** The worker runs every workflow in `workflows/` and every activity in `activities/`. */
export async function createWorker(options: FerryWorkerOptions = {}): Promise<Worker> {
  installRuntime();
  const { address, namespace, taskQueue } = config().temporal;
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: options.taskQueue ?? taskQueue,
    activities,
    ...(options.workflowBundlePath
      ? { workflowBundle: { codePath: options.workflowBundlePath } }
      : { workflowsPath }),
    interceptors: { activity: [heartbeatEveryActivity] },
    ...options.overrides,
  });
  logger.info({ taskQueue: options.taskQueue ?? taskQueue }, 'worker ready');
  return worker;
}
