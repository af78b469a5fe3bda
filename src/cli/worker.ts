import { createRequire } from 'node:module';
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
import { startTracing, type RunningTracing } from '../tracing.js';
import { heartbeatEveryActivity } from './activity-heartbeat.js';
import { scheduledWorkTraceRoots } from './scheduled-trace-roots.js';

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

/**
 * Temporal's OpenTelemetry interceptors, when tracing is on: workflow spans (bundled into the
 * workflow code, exported through a sink, never during replay), activity spans continuing the
 * workflow's context, and the context handed on to child workflows and activities in headers.
 */
async function tracingOptions(tracing: RunningTracing): Promise<Partial<WorkerOptions>> {
  const otel = await import('@temporalio/interceptors-opentelemetry');
  const require = createRequire(import.meta.url);
  return {
    interceptors: {
      // First, so the activity's span encloses the heartbeat interceptor's work too.
      activity: [
        scheduledWorkTraceRoots,
        (ctx) => ({
          inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
        heartbeatEveryActivity,
      ],
      workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    },
    sinks: { exporter: otel.makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/** The worker runs every workflow in `workflows/` and every activity in `activities/`. */
export async function createWorker(options: FerryWorkerOptions = {}): Promise<Worker> {
  installRuntime();
  const tracing = await startTracing('worker');
  const { address, namespace, taskQueue, maxCachedWorkflows } = config().temporal;
  const connection = await NativeConnection.connect({ address });
  // A prebuilt bundle has no tracing interceptors in it: traced, the workflows are bundled here.
  const bundlePath = tracing ? undefined : options.workflowBundlePath;
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: options.taskQueue ?? taskQueue,
    activities,
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath }),
    interceptors: { activity: [heartbeatEveryActivity] },
    // About 0.8 MB per cached installation workflow (bench:installations): the bound on worker memory.
    ...(maxCachedWorkflows !== undefined && { maxCachedWorkflows }),
    ...(tracing && (await tracingOptions(tracing))),
    ...options.overrides,
  });
  logger.info({ taskQueue: options.taskQueue ?? taskQueue }, 'worker ready');
  return worker;
}
