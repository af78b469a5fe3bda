import { closeDestinationTypes } from '../delivery/registry.js';
import { existsSync } from 'node:fs';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type State,
  type WorkerOptions,
} from '@temporalio/worker';
import { config } from '../config.js';
import { logger } from '../logger.js';
import * as activities from '../../activities/index.js';
import { taskQueueOf, type WorkConcern } from '../temporal/contracts/task-queues.js';
import { temporalConnectionOptions } from '../temporal/connection.js';
import { startTracing, type RunningTracing } from '../tracing.js';
import { heartbeatEveryActivity } from './activity-heartbeat.js';
import { scheduledWorkTraceRoots } from './scheduled-trace-roots.js';
import { bundleInChildProcess } from './workflow-bundle.js';

export interface FerryWorkerOptions {
  /** The deployment's base task queue, when not FERRY_TASK_QUEUE. */
  taskQueue?: string;
  /** The concerns to serve, when not FERRY_WORKER_CONCERNS. */
  concerns?: readonly WorkConcern[];
  /** A prebuilt bundle (tests build one per run) instead of FERRY_WORKFLOW_BUNDLE or bundling `workflows/` now. */
  workflowBundlePath?: string;
  /** Options of the `installations` worker (its cache, or stand-in workflows and activities). */
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
    },
    sinks: { exporter: otel.makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/**
 * Deliveries and writes are short-lived workflows: a small cache holds every one running, and leaves
 * the process's memory to the installation workflows.
 */
const SHORT_LIVED_CACHED_WORKFLOWS = 200;

/**
 * A process's worker: one Temporal worker per concern it serves (`task-queues.ts`), each polling that
 * concern's task queue, all running the same workflow code (bundled once) and activities.
 */
export class FerryWorker {
  constructor(readonly workers: ReadonlyMap<WorkConcern, Worker>) {}

  /** The worker of one concern, when this process serves it. */
  of(concern: WorkConcern): Worker | undefined {
    return this.workers.get(concern);
  }

  /** RUNNING while any of them runs. */
  getState(): State {
    const states = [...this.workers.values()].map((worker) => worker.getState());
    return states.find((state) => state === 'RUNNING') ?? states[0];
  }

  /** Runs them all until they are shut down; one failing shuts down the others and fails the run. */
  async run(): Promise<void> {
    await this.#all((worker) => worker.run());
  }

  /** `Worker.runUntil` for them all: runs until `until` settles, then shuts them down. */
  async runUntil(until: Promise<unknown>): Promise<void> {
    await this.#all(async (worker) => {
      await worker.runUntil(until);
    });
  }

  /** Drains and stops those still running; safe to call again. */
  shutdown(): void {
    for (const worker of this.workers.values()) if (worker.getState() === 'RUNNING') worker.shutdown();
  }

  async #all(run: (worker: Worker) => Promise<void>): Promise<void> {
    // Once the workers stop, the brokers' connections destinations kept open are closed too.
    const results = await Promise.allSettled(
      [...this.workers.values()].map((worker) =>
        run(worker).catch((error: unknown) => {
          this.shutdown();
          throw error;
        }),
      ),
    );
    await closeDestinationTypes().catch(() => {});
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/**
 * The worker runs every workflow in `workflows/` and every activity in `activities/`, on the task
 * queue of each concern it serves (every one unless FERRY_WORKER_CONCERNS says otherwise).
 */
export async function createWorker(options: FerryWorkerOptions = {}): Promise<FerryWorker> {
  installRuntime();
  const tracing = await startTracing('worker');
  const { namespace, taskQueue, maxCachedWorkflows, workerConcerns, workflowBundlePath } = config().temporal;
  const baseTaskQueue = options.taskQueue ?? taskQueue;
  const concerns = options.concerns ?? workerConcerns;
  if (!concerns.length) throw new Error('a worker must serve at least one concern');
  const connection = await NativeConnection.connect(temporalConnectionOptions());
  // A prebuilt bundle has no tracing interceptors in it: traced, the workflows are bundled anew.
  // Bundling happens in a child process, so webpack's memory never stays in the worker's.
  const prebuilt = tracing ? undefined : (options.workflowBundlePath ?? workflowBundlePath);
  if (prebuilt && !existsSync(prebuilt))
    throw new Error(
      `FERRY_WORKFLOW_BUNDLE: no workflow bundle at ${prebuilt} (build one with ferry bundle-workflows --out)`,
    );
  const workflowBundle = { codePath: prebuilt ?? (await bundleInChildProcess({ tracing: !!tracing })) };
  const shared: WorkerOptions = {
    connection,
    namespace,
    taskQueue: baseTaskQueue,
    activities,
    workflowBundle,
    interceptors: { activity: [heartbeatEveryActivity] },
    ...(tracing && (await tracingOptions(tracing))),
  };
  const workers = new Map<WorkConcern, Worker>();
  for (const concern of concerns) {
    const own: Partial<WorkerOptions> =
      concern === 'installations'
        ? {
            // About 0.55 MB per cached installation workflow (bench:installations): the bound on worker memory.
            ...(maxCachedWorkflows !== undefined && { maxCachedWorkflows }),
            ...options.overrides,
            // Stand-in workflows (bench:installations) are bundled from their own path.
            ...(options.overrides?.workflowsPath && { workflowBundle: undefined }),
          }
        : { maxCachedWorkflows: Math.min(maxCachedWorkflows ?? Infinity, SHORT_LIVED_CACHED_WORKFLOWS) };
    workers.set(
      concern,
      await Worker.create({ ...shared, taskQueue: taskQueueOf(baseTaskQueue, concern), ...own }),
    );
  }
  logger.info(
    { taskQueues: [...workers.values()].map((worker) => worker.options.taskQueue) },
    'worker ready',
  );
  return new FerryWorker(workers);
}
