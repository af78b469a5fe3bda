import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { InstallationEntity } from '../../src/db/entities/installation.js';
import { OperationEntity } from '../../src/db/entities/operation.js';
import { NotificationEventEntity, type NotificationEvent } from '../../src/db/entities/event.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { closeOrm, em as newEntityManager, migrate } from '../../src/db/orm.js';
import { reconcileInstallations } from '../../src/domain/installations/reconcile.js';
import { sweepStuckOperations } from '../../src/domain/stuck-operations.js';
import { notificationDeliveryMessageId } from '../../src/notifications/message.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { closeTemporalClient, temporalClient } from '../../src/temporal/client.js';
import { notificationWorkflowId } from '../../src/temporal/contracts/workflow-ids.js';
import { runningInstallationWorkflows } from '../../src/temporal/gateway.js';
import {
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  eventually,
  type InstallationFixture,
} from '../installations/support.js';
import { createReadFixture, enableContactWrites, type ReadFixture } from '../reads/fixtures.js';
import {
  startKillablePostgres,
  startKillableTemporal,
  type KillablePostgres,
  type KillableTemporal,
} from '../support/killable-services.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import {
  startApiProcess,
  startWorkerProcess,
  type ApiProcess,
  type WorkerProcess,
} from '../support/worker-process.js';
import { createdContactEmails } from '../support/sandbox-contacts.js';

/**
 * Fault injection on the whole stack: the API process, the worker process, PostgreSQL and the
 * Temporal dev server are each SIGKILLed at seeded random points of a mixed workload (installation
 * creates, config changes and deletes, triggered reads, synchronous and asynchronous writes, and the
 * notifications they raise), and started again. Then, with nothing but the workers' own repair
 * loop, the stack must settle into a state where every invariant holds:
 * - every operation ends, and each installation's status is its newest operation's;
 * - PostgreSQL and Temporal agree: one running workflow per installation, holding its config, none
 *   for a deleted one, and a full repair pass finds nothing left to do;
 * - every record and every routed notification reached its webhook at least once, every redelivery
 *   under the same message id;
 * - no provider write happened twice for one request, and every write reported done happened.
 *
 * PostgreSQL and Temporal are this file's own (a cluster directory and a SQLite file under the temp
 * directory, on free ports): the shared ones other test files use are never touched. Set
 * FERRY_FAULT_SEED to replay a run's kill schedule.
 */

const SEED = Number(process.env.FERRY_FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const TARGETS = ['api', 'worker', 'postgres', 'temporal'] as const;
type Target = (typeof TARGETS)[number];
const KILLS_PER_TARGET = 2;
const CONTACTS = 120;
const ROUTED_EVENTS = [
  'installation.created',
  'installation.updated',
  'installation.deleted',
  'write.async.done',
  'read.triggered.done',
];

/** mulberry32: the kill schedule and delays replay from the printed seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(SEED);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const dir = join(tmpdir(), `ferry-faults-${process.pid}-${randomUUID().slice(0, 8)}`);
const savedEnv = { ...process.env };
let postgres: KillablePostgres;
let temporal: KillableTemporal;
let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;
let lifecycle: InstallationFixture;
let events: WebhookReceiver;
let eventsDestinationId: string;
let writeIntegrationId: string;
let childEnv: Record<string, string>;
let api: ApiProcess;
let worker: WorkerProcess;
/** Children that died without being killed by the test: a process must survive its dependencies' restarts. */
const unexpectedExits: string[] = [];
const deliberate = new Set<number>();
const spareGroups: string[] = [];

/** What each request of the workload sent and how it was answered. */
interface Sent {
  kind: string;
  status: number | 'killed';
  body?: any;
  emails?: string[];
  installationId?: string;
}
const sent: Sent[] = [];

/** Error log lines of the children, by message: what the 5xx answers and failed passes were. */
const childErrors: Record<string, number> = {};

function watch<T extends WorkerProcess>(child: T, role: string): T {
  void child.exited.then((code) => {
    for (const line of child.errorLines()) {
      try {
        const entry = JSON.parse(line) as { level: number; msg: string; err?: { message?: string } };
        const key = `${role}: ${entry.msg}: ${(entry.err?.message ?? '').split('\n')[0].slice(0, 160)}`;
        childErrors[key] = (childErrors[key] ?? 0) + 1;
      } catch {
        // not a log line
      }
    }
    if (!deliberate.has(child.pid))
      unexpectedExits.push(`${role} ${child.pid} exited (${code}): ${child.output().slice(-600)}`);
  });
  return child;
}

async function startApi(): Promise<void> {
  api = watch(startApiProcess(childEnv), 'api');
  await api.urls;
}

async function startWorker(): Promise<void> {
  worker = watch(startWorkerProcess({ ...childEnv, FERRY_TEST_WORKER_REPAIR: '1' }), 'worker');
  await worker.ready;
}

beforeAll(async () => {
  const started = Date.now();
  [postgres, temporal] = await Promise.all([
    startKillablePostgres(join(dir, 'pg')),
    startKillableTemporal(join(dir, 'temporal')),
  ]);
  await migrate(postgres.url);
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 2, deals: 2 });
  // Slow provider calls keep reads and writes in flight when something dies.
  sandbox.faults.set({ latencyMs: 100 });
  Object.assign(process.env, {
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: temporal.address,
    FERRY_SANDBOX_URL: sandbox.url,
    // The workers' repair loop is all that repairs here: make it quick.
    FERRY_REPAIR_INTERVAL_SECONDS: '2',
    FERRY_STUCK_OPERATION_SECONDS: '5',
  });
  resetConfig();
  // In-process listeners only for the setup and the checks; the workload goes to child processes.
  stack = await startTestStack({ worker: false });
  childEnv = {
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: temporal.address,
    FERRY_SANDBOX_URL: sandbox.url,
    FERRY_TASK_QUEUE: stack.taskQueue,
    FERRY_REPAIR_INTERVAL_SECONDS: '2',
    FERRY_STUCK_OPERATION_SECONDS: '5',
    LOG_LEVEL: 'error',
  };
  await startWorker();
  // Routes first: every event the suite raises from here on must reach the webhook.
  const project = `/projects/${stack.project.id}`;
  const signingSecret = generateSigningSecret();
  events = await WebhookReceiver.start([signingSecret]);
  const destination = await stack.api('POST', `${project}/destinations`, {
    body: { name: 'events', type: 'webhook', metadata: { url: events.url() }, secrets: { signingSecret } },
  });
  expect(destination.status).toBe(201);
  eventsDestinationId = destination.body.id;
  const topic = await stack.api('POST', `${project}/topics`, { body: { name: 'faults' } });
  expect(topic.status).toBe(201);
  for (const eventType of ROUTED_EVENTS) {
    const route = await stack.api('POST', `${project}/notification-event-topic-routes`, {
      body: { eventType, topicId: topic.body.id },
    });
    expect(route.status).toBe(201);
  }
  const toDestination = await stack.api('POST', `${project}/topic-destination-routes`, {
    body: { topicId: topic.body.id, destinationId: eventsDestinationId },
  });
  expect(toDestination.status).toBe(201);

  fixture = await createReadFixture(stack, { declared: { delivery: { pageSize: 50 } } });
  writeIntegrationId = (await enableContactWrites(stack, fixture)).id;

  await createDestination(stack);
  lifecycle = await createIntegration(stack);
  const groups = await Promise.all(
    Array.from({ length: 2 * TARGETS.length * KILLS_PER_TARGET }, () => connectGroup(stack)),
  );
  spareGroups.push(...groups.map((group) => group.groupRef));
  await startApi();
  process.stderr.write(`fault suite set up in ${Date.now() - started} ms (seed ${SEED})\n`);
}, 120_000);

afterAll(async () => {
  for (const child of [api, worker]) if (child) deliberate.add(child.pid);
  await Promise.all([api?.kill('SIGKILL'), worker?.kill('SIGKILL')]);
  await sleep(100);
  process.stderr.write(`errors the children logged: ${JSON.stringify(childErrors, null, 1)}\n`);
  await events?.stop();
  await fixture?.receiver.stop();
  await stack?.close().catch(() => {});
  await sandbox?.close();
  await temporal?.close();
  await postgres?.close();
  await closeTemporalClient();
  await closeOrm();
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
  resetConfig();
}, 60_000);

/** One mixed burst through the API process of the moment: every request kind at once. */
function burst(round: number): Promise<void>[] {
  const project = `/projects/${stack.project.id}`;
  const urlsPromise = api.urls;
  const send = async (
    kind: string,
    host: 'api' | 'read' | 'write',
    method: string,
    path: string,
    body: unknown,
    extra: Partial<Sent> = {},
  ) => {
    const urls = await urlsPromise;
    const entry: Sent = { kind, status: 'killed', ...extra };
    sent.push(entry);
    try {
      const response = await fetch(`${urls[host]}${project}${path}`, {
        method,
        headers: { 'x-api-key': stack.project.apiKey, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      entry.status = response.status;
      const text = await response.text();
      entry.body = text ? JSON.parse(text) : undefined;
      if (kind === 'create installation' && response.status === 201) entry.installationId = entry.body.id;
    } catch {
      // the process (or what it depends on) died under it
    }
  };
  const contacts = `/integrations/${writeIntegrationId}/objects/contacts`;
  const emails = (n: number) =>
    Array.from({ length: n }, () => `fault-${round}-${randomUUID().slice(0, 8)}@example.com`);
  const write = (mode: 'synchronous' | 'asynchronous', n: number) => {
    const batch = emails(n);
    return send(
      `${mode} write`,
      'write',
      'POST',
      contacts,
      {
        groupRef: fixture.groupRef,
        type: 'create',
        mode,
        batch: batch.map((email) => ({ record: { email } })),
      },
      { emails: batch },
    );
  };
  const created = sent.filter((entry) => entry.installationId && !entry.kind.startsWith('delete'));
  const deletable = created.find(
    (entry) =>
      !sent.some(
        (other) => other.kind === 'delete installation' && other.installationId === entry.installationId,
      ),
  );
  const patchable = created.find(
    (entry) =>
      entry !== deletable &&
      !sent.some(
        (other) => other.kind === 'delete installation' && other.installationId === entry.installationId,
      ),
  );
  return [
    send('triggered read', 'read', 'POST', contacts, { groupRef: fixture.groupRef, mode: 'async' }),
    send('triggered read', 'read', 'POST', contacts, { groupRef: fixture.groupRef, mode: 'async' }),
    write('synchronous', 2),
    write('synchronous', 1),
    write('asynchronous', 2),
    write('asynchronous', 1),
    send(
      'config change',
      'api',
      'PATCH',
      `/integrations/${writeIntegrationId}/installations/${fixture.installationId}`,
      {
        updateMask: ['config.content.read.objects.contacts.schedule'],
        installation: {
          config: { content: { read: { objects: { contacts: { schedule: `${round % 60} * * * *` } } } } },
        },
      },
    ),
    ...[spareGroups.pop()!, spareGroups.pop()!].map((groupRef) =>
      send('create installation', 'api', 'POST', `/integrations/${lifecycle.integrationId}/installations`, {
        groupRef,
        config: { content: configContent() },
      }),
    ),
    ...(deletable
      ? [
          send(
            'delete installation',
            'api',
            'DELETE',
            `/integrations/${lifecycle.integrationId}/installations/${deletable.installationId}`,
            undefined,
            { installationId: deletable.installationId },
          ),
        ]
      : []),
    ...(patchable
      ? [
          send(
            'config change',
            'api',
            'PATCH',
            `/integrations/${lifecycle.integrationId}/installations/${patchable.installationId}`,
            {
              updateMask: ['config.content.read.objects.contacts.selectedFields'],
              installation: {
                config: {
                  content: {
                    read: {
                      objects: { contacts: { selectedFields: { email: true, lastName: round % 2 === 0 } } },
                    },
                  },
                },
              },
            },
          ),
        ]
      : []),
  ];
}

async function operationCount(): Promise<number> {
  for (;;) {
    try {
      return await (await newEntityManager()).fork().count(OperationEntity, { projectId: stack.project.id });
    } catch {
      await sleep(200); // PostgreSQL itself may be the one just killed
    }
  }
}

async function inject(target: Target): Promise<void> {
  switch (target) {
    case 'api':
      deliberate.add(api.pid);
      await api.kill('SIGKILL');
      await sleep(random() * 500);
      await startApi();
      return;
    case 'worker':
      deliberate.add(worker.pid);
      await worker.kill('SIGKILL');
      await sleep(random() * 500);
      await startWorker();
      return;
    case 'postgres':
      await postgres.kill();
      await sleep(random() * 1500);
      await postgres.restart();
      return;
    case 'temporal':
      await temporal.kill();
      await sleep(random() * 1500);
      await temporal.restart();
  }
}

/** Retries a check that reads PostgreSQL or Temporal until it holds; returns its last value. */
async function settled<T>(check: () => Promise<T | false | undefined>, timeoutMs = 90_000): Promise<T> {
  return eventually(check, timeoutMs);
}

describe('SIGKILLs of the API, the worker, PostgreSQL and Temporal during a mixed workload', () => {
  it('leave a state the repair loop makes consistent by itself, with nothing lost or done twice', async () => {
    const schedule: Target[] = TARGETS.flatMap((target) => Array<Target>(KILLS_PER_TARGET).fill(target));
    for (let i = schedule.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [schedule[i], schedule[j]] = [schedule[j], schedule[i]];
    }
    const faults: { target: Target; afterMs: number }[] = [];
    const began = Date.now();
    for (const [round, target] of schedule.entries()) {
      const before = await operationCount();
      const requests = burst(round);
      // Killed at a random point once the burst is under way, however slow the machine is.
      await eventually(async () => (await operationCount()) > before, 30_000).catch(() => undefined);
      const afterMs = Math.round(random() * 1500);
      await sleep(afterMs);
      await inject(target);
      faults.push({ target, afterMs });
      await Promise.all(requests);
      process.stderr.write(
        `round ${round}: ${target} killed after ${afterMs} ms, burst done at ${Date.now() - began} ms (${new Date().toISOString()})\n`,
      );
    }

    const checks: Record<string, number> = {};
    const check = (name: string, holds: () => void) => {
      holds();
      checks[name] = (checks[name] ?? 0) + 1;
    };
    const em = async () => (await newEntityManager()).fork();
    const projectId = stack.project.id;

    const log = (what: string) => process.stderr.write(`${what} at ${Date.now() - began} ms\n`);
    // 1. Every operation ends, by the repair loop alone.
    await settled(
      async () => (await (await em()).count(OperationEntity, { projectId, status: 'in_progress' })) === 0,
    );
    check('every operation ended', () => undefined);
    log('every operation ended');

    // 2. PostgreSQL and Temporal agree; a full pass (what every worker runs) finds nothing to repair.
    await settled(async () => {
      const installations = await (await em()).find(InstallationEntity, { projectId });
      const running = new Map<string, string | undefined>();
      for await (const run of runningInstallationWorkflows(projectId))
        running.set(run.installationId, run.configId);
      return (
        installations.length === running.size &&
        installations.every((installation) => running.get(installation.id) === installation.configId)
      );
    });
    log('PostgreSQL and Temporal agree');
    const installations = await (await em()).find(InstallationEntity, { projectId });
    const running = new Map<string, string | undefined>();
    for await (const run of runningInstallationWorkflows(projectId))
      running.set(run.installationId, run.configId);
    for (const installation of installations)
      check('workflow holds the stored config', () =>
        expect(running.get(installation.id)).toBe(installation.configId),
      );
    for (const id of running.keys())
      check('no workflow without its installation', () =>
        expect(installations.map((installation) => installation.id)).toContain(id),
      );
    const reconciled = await reconcileInstallations({ projectId, graceMs: 0 });
    const swept = await sweepStuckOperations({ projectId, staleAfterMs: 0 });
    check('a full repair pass finds nothing', () => {
      expect([
        reconciled.started,
        reconciled.configResent,
        reconciled.orphansEnded,
        reconciled.failed,
      ]).toEqual([0, 0, 0, 0]);
      expect(swept).toMatchObject({ resumed: 0, ended: 0 });
    });
    for (const entry of sent.filter((one) => one.kind === 'delete installation' && one.status === 204))
      check('a deleted installation is gone', () =>
        expect(installations.map((installation) => installation.id)).not.toContain(entry.installationId),
      );
    for (const entry of sent.filter((one) => one.kind === 'create installation' && one.status === 201)) {
      const deleted = sent.some(
        (other) => other.kind === 'delete installation' && other.installationId === entry.installationId,
      );
      if (!deleted)
        check('a created installation exists', () =>
          expect(installations.map((installation) => installation.id)).toContain(entry.installationId),
        );
    }

    // 3. Each installation's status is its newest operation's.
    for (const installation of installations) {
      const [newest] = await (
        await em()
      ).execute<{ status: string }[]>(
        'select status from operations where installation_id = ? order by seq desc limit 1',
        [installation.id],
      );
      if (newest)
        check("installation status is its newest operation's", () =>
          expect(installation.lastOperationStatus).toBe(newest.status),
        );
    }

    // 4. Records: every contact delivered at least once if any triggered read succeeded, and one
    // message id always carries the same records.
    const reads = await (
      await em()
    ).find(OperationEntity, {
      installationId: fixture.installationId,
      actionType: 'read',
    });
    const readOutcomes: Record<string, number> = {};
    for (const read of reads) readOutcomes[read.status] = (readOutcomes[read.status] ?? 0) + 1;
    if (reads.some((read) => read.status === 'success')) {
      check('every record delivered at least once', () =>
        expect(new Set(fixture.receiver.acceptedRecordIds()).size).toBeGreaterThanOrEqual(CONTACTS),
      );
    }
    const pages = new Map<string, string>();
    for (const request of fixture.receiver.accepted()) {
      if (!Array.isArray(request.body?.result)) continue;
      const records = request.body.result.map((entry: any) => String(entry.raw?.id)).join(',');
      const seen = pages.get(request.messageId);
      if (seen === undefined) pages.set(request.messageId, records);
      else check('a redelivered page keeps its message id and records', () => expect(records).toBe(seen));
    }

    // 5. Notifications: every routed event reached the webhook, each under one stable message id.
    const recorded = await (
      await em()
    ).find(NotificationEventEntity, { projectId, type: { $in: ROUTED_EVENTS } });
    const undelivered = () =>
      recorded.filter(
        (event) =>
          !events
            .accepted()
            .some(
              (request) => request.messageId === notificationDeliveryMessageId(event.id, eventsDestinationId),
            ),
      );
    await settled(async () => undelivered().length === 0, 60_000).catch(async () => {
      const destinations = await (
        await newEntityManager()
      )
        .fork()
        .execute(
          'select id, name, disabled_time, first_failure_time from destinations where project_id = ?',
          [projectId],
        );
      throw new Error(
        `events never delivered: ${JSON.stringify(await explain(undelivered()))}; destinations ${JSON.stringify(destinations)}`,
      );
    });
    const byMessage = new Map<string, Set<string>>();
    for (const request of events.accepted()) {
      const bodies = byMessage.get(request.messageId) ?? new Set();
      bodies.add(JSON.stringify(request.body));
      byMessage.set(request.messageId, bodies);
    }
    for (const event of recorded) {
      const messageId = notificationDeliveryMessageId(event.id, eventsDestinationId);
      check('every routed event delivered under its stable message id', () =>
        expect(byMessage.get(messageId)?.size).toBe(1),
      );
    }
    check('nothing delivered that no event recorded', () => expect(byMessage.size).toBe(recorded.length));
    // (The read fixture's installation was written straight to the database, without its event.)
    for (const installation of installations.filter(({ id }) => id !== fixture.installationId))
      check('every installation has its installation.created event', () =>
        expect(
          recorded.some(
            (event) => event.type === 'installation.created' && event.data.installationId === installation.id,
          ),
        ).toBe(true),
      );

    // 6. Provider writes: no email written twice; every write reported done is there.
    const counts = new Map<string, number>();
    for (const email of await createdContactEmails(sandbox, 'fault-'))
      counts.set(email, (counts.get(email) ?? 0) + 1);
    const duplicated = [...counts].filter(([, count]) => count > 1);
    const writtenTwice = await Promise.all(
      duplicated.map(async ([email, count]) => {
        const entry = sent.find((one) => one.emails?.includes(email))!;
        const round = Number(/^fault-(\d+)-/.exec(email)![1]);
        const operationId = entry.body?.operationId ?? entry.body?.id;
        const operation = operationId && (await (await em()).findOne(OperationEntity, { id: operationId }));
        return {
          email,
          count,
          round,
          fault: faults[round],
          request: { kind: entry.kind, status: entry.status, body: entry.body },
          operation: operation && { status: operation.status, metadata: operation.metadata },
        };
      }),
    );
    // Asynchronous creates included: an activity run again after its worker or Temporal died finds
    // the create marked sent (record-sends) and does not send it again.
    check('no provider write happened twice for one request', () => expect(writtenTwice).toEqual([]));
    for (const entry of sent.filter((one) => one.kind === 'synchronous write' && one.status === 200))
      for (const email of entry.emails!)
        check('a synchronous write answered 200 happened once', () => expect(counts.get(email)).toBe(1));
    for (const entry of sent.filter((one) => one.kind === 'asynchronous write' && one.status === 200)) {
      const operation = await (await em()).findOne(OperationEntity, { id: entry.body.operationId });
      if (operation?.status === 'success')
        for (const email of entry.emails!)
          check('an asynchronous write that succeeded happened once', () =>
            expect(counts.get(email)).toBe(1),
          );
    }

    check('no process died by itself', () => expect(unexpectedExits).toEqual([]));
    // A dependency down is an outage (503, or the connection cut by a killed API), never an "unexpected error".
    check('no request answered 500', () => expect(sent.filter((entry) => entry.status === 500)).toEqual([]));

    const requests: Record<string, number> = {};
    for (const entry of sent)
      requests[`${entry.kind} ${entry.status}`] = (requests[`${entry.kind} ${entry.status}`] ?? 0) + 1;
    const operations = await (await em()).find(OperationEntity, { projectId });
    const outcomes: Record<string, number> = {};
    for (const { actionType, status } of operations)
      outcomes[`${actionType} ${status}`] = (outcomes[`${actionType} ${status}`] ?? 0) + 1;
    process.stdout.write(
      `${JSON.stringify({
        seed: SEED,
        faultsInjected: faults.length,
        faults,
        invariantsChecked: Object.values(checks).reduce((sum, n) => sum + n, 0),
        invariants: checks,
        requests,
        outcomes,
        readOutcomes,
        eventsDelivered: recorded.length,
        recordsDelivered: new Set(fixture.receiver.acceptedRecordIds()).size,
        providerRecordsCreated: counts.size,
      })}\n`,
    );
  }, 240_000);
});

/** Where each undelivered event stands: routed or not, and its delivery workflow's state. */
async function explain(missing: NotificationEvent[]): Promise<unknown[]> {
  const client = await temporalClient();
  return Promise.all(
    missing.map(async (event) => {
      const [row] = await (
        await newEntityManager()
      )
        .fork()
        .execute<{ routed_time: Date | null }[]>('select routed_time from events where id = ?', [event.id]);
      let workflow: unknown;
      try {
        const handle = client.workflow.getHandle(notificationWorkflowId(event.id, eventsDestinationId));
        const description = await handle.describe();
        workflow = {
          status: description.status.name,
          pending: description.raw.pendingActivities?.map((activity) => ({
            type: activity.activityType?.name,
            attempt: activity.attempt,
            state: activity.state,
            lastFailure: activity.lastFailure?.message,
          })),
        };
      } catch (error) {
        workflow = String(error);
      }
      return {
        id: event.id,
        type: event.type,
        createTime: event.createTime,
        routed: row?.routed_time,
        workflow,
      };
    }),
  );
}
