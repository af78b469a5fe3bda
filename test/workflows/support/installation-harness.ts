import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { heartbeatEveryActivity } from '../../../src/cli/activity-heartbeat.js';
import { temporalTestServerPath } from '../../../src/temporal/cli.js';
import type { installationWorkflow } from '../../../workflows/installation.js';
import type {
  InstallationConfigMessage,
  InstallationWorkflowInput,
  ReadObjectPlan,
  SubscriptionAction,
  SubscriptionChange,
  SubscriptionChangeResult,
} from '../../../src/temporal/contracts/installation.js';
import type { InstallationConfigContent } from '../../../src/schemas/installations.js';
import type { FakeReadActivities, FakeReadBehaviour } from './installation-test-workflows.js';
import type { ReadObjectInput } from '../../../src/temporal/contracts/read.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface RecordedRead {
  objectName: string;
  readType: string;
  operationId: string;
  startedAt: string;
  finishedAt?: string;
  sinceTimestamp?: string;
}

const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };

/**
 * The installation workflow on Temporal's time-skipping test server, with every activity mocked and
 * the read child replaced by a fake: simulated days pass in seconds, and the test sees each read
 * (when it started and ended in workflow time) and each activity call.
 */
export class InstallationHarness {
  readonly reads: RecordedRead[] = [];
  /** Operation ids of the reads that ran inline (a local activity of the installation workflow). */
  readonly inlineReads: string[] = [];
  /** What each read was told to do, so a handed-over read's child does the same. */
  readonly behaviours = new Map<string, FakeReadBehaviour>();
  readonly pausedEvents: { installationId: string; objectName: string; note: string }[] = [];
  readonly subscriptionChanges: SubscriptionChange[] = [];
  readonly subscriptionFailures: { installationId: string; action: SubscriptionAction; error: string }[] = [];
  /** Operation ids of triggered reads the workflow gave up (failed), with the reason. */
  readonly abandoned: { operationId: string; reason: string }[] = [];
  /** Reads operators asked for, as the workflow recorded them before queueing. */
  readonly requested: Record<string, unknown>[] = [];
  /** Signals the workflow could not act on, as it recorded them. */
  readonly ignored: { message: string; reason: string; objectName?: string }[] = [];
  /** Retries the workflow prepared: `operationId` retried as `newOperationId`. */
  readonly retries: { operationId: string; newOperationId: string; actionType: string }[] = [];
  /** Schema watch runs, with the simulated time each started at. */
  readonly schemaWatches: { installationId: string; runId: string; at: number }[] = [];
  /** What `describeRetry` answers for an operation id; refused when absent. */
  failedOperations: Record<string, { actionType: 'read' | 'write'; objectName?: string; readType?: string }> =
    {};
  /** How each read behaves; instant success by default. */
  readBehaviour: (input: ReadObjectInput) => FakeReadBehaviour = () => ({ durationMs: 0, status: 'success' });
  /** Real milliseconds an inline read takes (the test server's clock runs on: the workflow task is open). */
  inlineReadMs = 0;
  /** Which objects the database says still need a backfill; all asked about by default. */
  needsBackfill: (objectNames: string[]) => string[] = (objectNames) => objectNames;
  /** Makes `objectsNeedingBackfill` fail for good, as for an installation that was never committed. */
  installationMissing = false;
  /** Makes `objectsNeedingBackfill` fail this many more times, retryably, before it answers. */
  backfillQueryFailures = 0;
  subscriptionOutcome: (change: SubscriptionChange) => SubscriptionChangeResult = (change) => ({
    subscriptionIds: Object.fromEntries(
      change.upserts.map((upsert) => [upsert.objectName, upsert.subscriptionId]),
    ),
  });

  private constructor(
    readonly env: TestWorkflowEnvironment,
    private readonly worker: Worker,
    private readonly running: Promise<void>,
    readonly taskQueue: string,
    /** The bundled workflow code the worker runs, for replaying a history a test made. */
    readonly workflowCode: string,
  ) {}

  static async start(): Promise<InstallationHarness> {
    const env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: temporalTestServerPath() } },
    });
    const { code } = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./installation-test-workflows.ts', import.meta.url)),
      logger: silent,
    });
    const taskQueue = `installation-${randomUUID()}`;
    const holder: { harness?: InstallationHarness } = {};
    const activities = harnessActivities(() => holder.harness!);
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { code },
      activities,
      interceptors: { activity: [heartbeatEveryActivity] },
    });
    const running = worker.run();
    holder.harness = new InstallationHarness(env, worker, running, taskQueue, code);
    return holder.harness;
  }

  /** Starts an installation workflow with the given read plan (and subscribe objects). */
  async startInstallation(
    reads: ReadObjectPlan[],
    options: {
      subscribe?: InstallationConfigContent['subscribe'];
      maxIterations?: number;
      scheduleSpreadSeconds?: number;
      installationId?: string;
      watchSchema?: { schedule: string };
      /** Starts this long after the quarter past the hour the clock is aligned to. */
      startOffsetMs?: number;
      /** The installation was created this long before its workflow starts. */
      createdBeforeStartMs?: number;
    } = {},
  ): Promise<WorkflowHandle<typeof installationWorkflow>> {
    await this.#alignClock();
    if (options.startOffsetMs) await this.env.sleep(options.startOffsetMs);
    const installationId = options.installationId ?? randomUUID();
    const input: InstallationWorkflowInput = {
      installationId,
      projectId: randomUUID(),
      config: {
        ...configMessage(reads, { subscribe: options.subscribe }),
        ...(options.watchSchema && { watchSchema: options.watchSchema }),
      },
      ...(options.maxIterations !== undefined && { maxIterations: options.maxIterations }),
      ...(options.scheduleSpreadSeconds !== undefined && {
        scheduleSpreadSeconds: options.scheduleSpreadSeconds,
      }),
      ...(options.createdBeforeStartMs !== undefined && {
        scheduleFrom: new Date((await this.env.currentTimeMs()) - options.createdBeforeStartMs).toISOString(),
      }),
    };
    return this.env.client.workflow.start<typeof installationWorkflow>('installationWorkflow', {
      workflowId: `installation/${installationId}`,
      taskQueue: this.taskQueue,
      args: [input],
    });
  }

  readsOf(objectName: string, readType?: string): RecordedRead[] {
    return this.reads.filter(
      (read) => read.objectName === objectName && (!readType || read.readType === readType),
    );
  }

  /** Lets `ms` of simulated time pass. */
  async advance(ms: number): Promise<void> {
    await this.env.sleep(ms);
  }

  /**
   * Ends an installation workflow and the reads it still runs. The time-skipping server stops
   * skipping time for good when a parent is terminated with children still running (its TERMINATE
   * parent-close policy), so the children go first, found from the parent, not from what was recorded.
   */
  async stop(handle: WorkflowHandle): Promise<void> {
    const description = await handle.describe().catch(() => undefined);
    for (const child of description?.raw.pendingChildren ?? []) {
      if (!child.workflowId) continue;
      await this.env.client.workflow
        .getHandle(child.workflowId)
        .terminate('test over')
        .catch(() => undefined);
    }
    await handle.terminate('test over').catch(() => undefined);
  }

  /**
   * Moves the simulated clock to a quarter past the hour, so a test that advances whole hours ends
   * well away from any cron fire. Virtual time also runs with the wall clock while work is in
   * flight, so an end a few milliseconds after a fire could pass before the fire's read is recorded.
   */
  async #alignClock(): Promise<void> {
    const now = await this.env.currentTimeMs();
    const sinceQuarter = (now - 15 * MINUTE) % HOUR;
    await this.env.sleep(HOUR - sinceQuarter);
  }

  reset(): void {
    this.reads.length = 0;
    this.inlineReads.length = 0;
    this.behaviours.clear();
    this.pausedEvents.length = 0;
    this.subscriptionChanges.length = 0;
    this.subscriptionFailures.length = 0;
    this.abandoned.length = 0;
    this.requested.length = 0;
    this.ignored.length = 0;
    this.retries.length = 0;
    this.schemaWatches.length = 0;
    this.failedOperations = {};
    this.inlineReadMs = 0;
    this.readBehaviour = () => ({ durationMs: 0, status: 'success' });
    this.needsBackfill = (objectNames) => objectNames;
    this.installationMissing = false;
    this.backfillQueryFailures = 0;
    this.subscriptionOutcome = (change) => ({
      subscriptionIds: Object.fromEntries(
        change.upserts.map((upsert) => [upsert.objectName, upsert.subscriptionId]),
      ),
    });
  }

  async close(): Promise<void> {
    this.worker.shutdown();
    await this.running;
    await this.env.teardown();
  }
}

let configCounter = 0;

export function configMessage(
  reads: ReadObjectPlan[],
  content: Partial<InstallationConfigContent> = {},
): InstallationConfigMessage {
  configCounter++;
  return {
    configId: `00000000-0000-4000-8000-${String(configCounter).padStart(12, '0')}`,
    revisionId: '00000000-0000-4000-8000-00000000000f',
    content: { provider: 'sandboxApiKey', ...content },
    reads,
  };
}

function harnessActivities(
  harness: () => InstallationHarness,
): Record<string, (...args: never[]) => Promise<unknown>> {
  const fake: FakeReadActivities = {
    async fakeReadStarted(input) {
      // A read handed over by its inline part starts once, and behaves as its inline part decided.
      const decided = harness().behaviours.get(input.operationId);
      if (decided) return decided;
      const behaviour = harness().readBehaviour(input);
      harness().behaviours.set(input.operationId, behaviour);
      harness().reads.push({
        objectName: input.objectName,
        readType: input.readType,
        operationId: input.operationId,
        startedAt: input.at,
        ...(input.sinceTimestamp !== undefined && { sinceTimestamp: input.sinceTimestamp }),
      });
      return behaviour;
    },
    async fakeReadFinished(input) {
      const read = harness().reads.find((candidate) => candidate.operationId === input.operationId);
      if (read) read.finishedAt = input.at;
    },
  };
  return {
    ...fake,
    /**
     * The inline read (a local activity): an instant read ends here; one that takes time hands
     * over to the fake child, which waits its duration in workflow time.
     */
    async readObjectInline(input: ReadObjectInput & { maxPages: number }) {
      const at = new Date(await harness().env.currentTimeMs()).toISOString();
      harness().inlineReads.push(input.operationId);
      const behaviour = await fake.fakeReadStarted({ ...input, at });
      if (behaviour.durationMs > 0) return { handover: true, reason: 'takes time' };
      await fake.fakeReadFinished({ ...input, at });
      if (harness().inlineReadMs) await new Promise((resolve) => setTimeout(resolve, harness().inlineReadMs));
      return {
        handover: false,
        status: behaviour.status,
        recordsProcessed: 0,
        ...(behaviour.authFailure && { authFailure: true }),
        result: 'fake inline read',
      };
    },
    async objectsNeedingBackfill(input: { installationId: string; objectNames: string[] }) {
      if (harness().installationMissing) {
        throw ApplicationFailure.nonRetryable('installation is not in the database', 'InstallationNotFound');
      }
      if (harness().backfillQueryFailures > 0) {
        harness().backfillQueryFailures--;
        throw ApplicationFailure.retryable('the database is busy', 'Busy');
      }
      return harness().needsBackfill(input.objectNames);
    },
    async recordSchedulePaused(input: { installationId: string; objectName: string; note: string }) {
      harness().pausedEvents.push(input);
    },
    async changeSubscriptions(change: SubscriptionChange) {
      harness().subscriptionChanges.push(change);
      return harness().subscriptionOutcome(change);
    },
    async abandonTriggeredReads(input: { operationIds: string[]; reason: string }) {
      harness().abandoned.push(
        ...input.operationIds.map((operationId) => ({ operationId, reason: input.reason })),
      );
    },
    async watchSchema(input: { installationId: string; runId: string }) {
      harness().schemaWatches.push({ ...input, at: await harness().env.currentTimeMs() });
      return { operationId: input.runId, messages: 0 };
    },
    async recordRequestedRead(input: Record<string, unknown>) {
      harness().requested.push(input);
    },
    async recordIgnoredMessage(input: { message: string; reason: string; objectName?: string }) {
      harness().ignored.push(input);
    },
    async describeRetry(input: { installationId: string; operationId: string }) {
      const failed = harness().failedOperations[input.operationId];
      if (!failed) {
        throw ApplicationFailure.nonRetryable(
          `Operation ${input.operationId} was not found.`,
          'OperatorRequestRefused',
        );
      }
      return { projectId: 'p', installationId: input.installationId, ...failed };
    },
    async prepareReadRetry(input: { operationId: string; newOperationId: string }) {
      harness().retries.push({ ...input, actionType: 'read' });
    },
    async retryWrite(input: { operationId: string; newOperationId: string }) {
      harness().retries.push({ ...input, actionType: 'write' });
    },
    async recordSubscriptionFailure(input: {
      installationId: string;
      action: SubscriptionAction;
      error: string;
    }) {
      harness().subscriptionFailures.push(input);
    },
  };
}
