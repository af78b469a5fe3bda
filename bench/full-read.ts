import { randomUUID } from 'node:crypto';
import { createBenchProject } from './support/bench-project.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { options } from '../src/cli/options.js';
import { benchEnvironment } from './support/database.js';
import { freePort } from './support/free-port.js';
import { procStatusMb } from './support/measure.js';
import { startReaper } from './support/reaper.js';
import { startSandbox, startWorker } from './support/ferry-processes.js';

/**
 * `npm run bench:full-read -- [--records 100000] [--changes 50]`
 *
 * A full read with change detection at scale: the sandbox's `people` (its contacts, listed without a
 * time filter, `read.fullRead`) are backfilled through Ferry (fresh database, Temporal dev server,
 * sandbox and worker in processes of their own, api in this one); then `--changes` changes are made
 * at the provider (updates, creates and deletes, about half, a third and a sixth) and one scheduled
 * read runs, then one more after no change. The first must deliver exactly those (the changed and
 * created records, and the deleted ones as inferred deletions), the second nothing. The worker's
 * resident set is reported when ready, after the backfill and after each scheduled read: fingerprints live in PostgreSQL, compared a page at a time, so it stays
 * flat. Every process it starts is stopped, however it ends. The last line printed is one JSON object.
 */

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

interface Entry {
  id?: string;
  deleted?: boolean;
  inferred?: boolean;
  raw?: { id?: string };
}

/** Read messages by operation: every entry received, in this process (a scheduled read sends few). */
async function startReceiver(): Promise<{
  url: string;
  entries(operationId: string): Entry[];
  server: Server;
}> {
  const byOperation = new Map<string, Entry[]>();
  const counted = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { operationId?: string; result?: Entry[] };
      const operationId = body.operationId ?? '';
      const result = body.result ?? [];
      // A backfill's 100,000 entries are counted, not kept; the other reads' are kept to check.
      if (body.operationId && byOperation.has(operationId)) byOperation.get(operationId)!.push(...result);
      counted.set(operationId, (counted.get(operationId) ?? 0) + result.length);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    entries(operationId) {
      if (!byOperation.has(operationId)) byOperation.set(operationId, []);
      return byOperation.get(operationId)!;
    },
  };
}

export async function benchFullRead(args: string[]): Promise<void> {
  const opts = options(args, { records: { type: 'string' }, changes: { type: 'string' } });
  const records = Number(opts.records ?? 100_000);
  const changes = Number(opts.changes ?? 50);
  if (!Number.isInteger(records) || records < 1000) throw new Error('--records must be at least 1000');
  if (!Number.isInteger(changes) || changes < 6 || changes > records / 10)
    throw new Error('--changes must be 6..records/10');

  const bench = benchEnvironment('ferry_bench_full_read', { FERRY_ALLOW_PRIVATE_DESTINATIONS: 'true' });
  const taskQueue = `bench-${bench.runId}`;
  process.env.FERRY_TASK_QUEUE = taskQueue;
  const reaper = startReaper();
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error) => say(`cleanup: ${String(error)}`));
    reaper.close();
  };
  try {
    const { startDevServer } = await import('../src/temporal/dev-server.js');
    say('starting a Temporal dev server');
    const temporal = await startDevServer({ port: await freePort() });
    process.env.TEMPORAL_ADDRESS = temporal.address;
    stops.push(() => temporal.stop());
    const { resetConfig } = await import('../src/config.js');
    resetConfig();
    const { migrate, em: newEntityManager } = await import('../src/db/orm.js');
    await migrate(bench.databaseUrl);
    stops.push(() => bench.drop());

    const receiver = await startReceiver();
    stops.push(() => new Promise((resolve) => receiver.server.close(() => resolve())));
    const sandbox = await startSandbox(records);
    stops.push(() => sandbox.close());
    process.env.FERRY_SANDBOX_URL = sandbox.url;
    resetConfig();
    const { startServers } = await import('../src/api/server.js');
    const { closeTemporalClient, temporalClient } = await import('../src/temporal/client.js');
    const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
    stops.push(async () => {
      await servers.close();
      await closeTemporalClient();
    });
    const worker = await startWorker({ ...process.env });
    reaper.watch(worker.child.pid);
    stops.push(() => worker.stop());
    const pid = worker.child.pid!;
    const readyRssMb = procStatusMb(pid, 'VmRSS');

    const project = await createBenchProject(bench.runId, servers.urls.api);
    const api = project.api;
    const provider = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${sandbox.url}/api/v1${path}`, {
        method,
        headers: { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}`);
      return response.status === 204 ? undefined : response.json();
    };

    const name = 'people';
    await api('POST', `/projects/${project.id}/destinations`, {
      name,
      type: 'webhook',
      metadata: { url: receiver.url },
    });
    const read = { objectName: 'people', destination: name, schedule: '0 0 1 1 *' };
    await api('POST', `/projects/${project.id}/integrations`, {
      name,
      provider: 'sandboxApiKey',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider: 'sandboxApiKey',
          read: {
            objects: [
              { ...read, backfill: { defaultPeriod: { fullHistory: true } }, optionalFieldsAuto: 'all' },
            ],
          },
        },
      },
    });
    const groupRef = 'group-full-read';
    await api('POST', `/projects/${project.id}/connections:generate`, {
      provider: 'sandboxApiKey',
      groupRef,
      consumerRef: 'consumer-full-read',
      apiKey: 'sandbox-demo-key',
    });
    say(`backfilling ${records.toLocaleString('en-US')} people`);
    const backfillStarted = Date.now();
    const installation = await api('POST', `/projects/${project.id}/integrations/${name}/installations`, {
      groupRef,
      config: {
        content: {
          provider: 'sandboxApiKey',
          read: { objects: { people: { ...read, selectedFields: {}, selectedFieldsAuto: 'all' } } },
        },
      },
    });
    const operationsPath = `/projects/${project.id}/integrations/${name}/installations/${installation.id}/operations`;
    let backfill: {
      status: string;
      result?: string;
      metadata?: { progress?: { recordsProcessed?: number } };
    };
    for (;;) {
      const listed = (await api('GET', operationsPath)) as { results: (typeof backfill)[] };
      backfill = listed.results[0];
      if (backfill && backfill.status !== 'in_progress') break;
      if (Date.now() - backfillStarted > 30 * 60_000)
        throw new Error('the backfill did not end in 30 minutes');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const backfillSeconds = (Date.now() - backfillStarted) / 1000;
    if (backfill.status !== 'success') throw new Error(`the backfill failed: ${backfill.result}`);
    const afterBackfillRssMb = procStatusMb(pid, 'VmRSS');
    say(`backfill: ${backfill.result} in ${backfillSeconds} s`);

    // The changes: about half updates, a third creates, a sixth deletions, spread over the listing.
    const deletes = Math.max(1, Math.floor(changes / 6));
    const creates = Math.max(1, Math.floor(changes / 3));
    const updates = changes - deletes - creates;
    const { idOf } = await import('../src/sandbox/index.js');
    const step = Math.floor(records / (updates + deletes));
    const picked = Array.from({ length: updates + deletes }, (_, n) => idOf('contacts', n * step + 3));
    const updated = picked.slice(0, updates);
    const deleted = picked.slice(updates);
    for (const id of updated) await provider('PATCH', `/contacts/${id}`, { lastName: `Changed ${id}` });
    for (const id of deleted) await provider('DELETE', `/contacts/${id}`);
    const created: string[] = [];
    for (let n = 0; n < creates; n++)
      created.push(
        ((await provider('POST', '/contacts', { email: `new${n}@bench.example` })) as { id: string }).id,
      );

    /** One scheduled read in its own workflow, as the installation's would run it: what it delivered. */
    const client = await temporalClient();
    const scheduledRead = async () => {
      const operationId = randomUUID();
      const delivered = receiver.entries(operationId);
      const started = Date.now();
      const outcome = (await client.workflow.execute('readObjectWorkflow', {
        taskQueue,
        workflowId: `read/${operationId}`,
        args: [
          {
            operationId,
            installationId: installation.id,
            projectId: project.id,
            objectName: 'people',
            readType: 'scheduled',
          },
        ],
        workflowExecutionTimeout: '30 minutes',
      })) as { status: string; recordsProcessed: number; result: string };
      const seconds = (Date.now() - started) / 1000;
      say(`scheduled: ${outcome.result} in ${seconds} s`);
      return { ...outcome, seconds, delivered, rssMb: procStatusMb(pid, 'VmRSS') };
    };
    say(`a scheduled read after ${changes} changes`);
    const scheduled = await scheduledRead();
    const { delivered, seconds: scheduledSeconds, rssMb: afterScheduledRssMb } = scheduled;
    say('a scheduled read after no change');
    const unchanged = await scheduledRead();

    const changedIds = delivered.filter((entry) => !entry.deleted).map((entry) => entry.raw?.id ?? '');
    const inferredIds = delivered
      .filter((entry) => entry.deleted && entry.inferred)
      .map((entry) => entry.id ?? '');
    const same = (a: string[], b: string[]) =>
      a.length === b.length && [...a].sort().join() === [...b].sort().join();
    const [size] = await (
      await newEntityManager()
    ).execute<{ rows: string; bytes: string }[]>(
      `select (select count(*) from read_fingerprints) as rows, pg_total_relation_size('read_fingerprints') as bytes`,
    );
    const summary = {
      records,
      changes: { updates, creates, deletes },
      backfill: {
        seconds: backfillSeconds,
        recordsProcessed: backfill.metadata?.progress?.recordsProcessed ?? null,
        result: backfill.result,
      },
      scheduled: {
        seconds: scheduledSeconds,
        status: scheduled.status,
        recordsProcessed: scheduled.recordsProcessed,
        delivered: delivered.length,
        changedDelivered: changedIds.length,
        inferredDeletionsDelivered: inferredIds.length,
        exactlyTheChanges:
          same(changedIds, [...updated, ...created]) &&
          same(inferredIds, deleted) &&
          delivered.length === changes,
        result: scheduled.result,
      },
      unchangedScheduled: {
        seconds: unchanged.seconds,
        delivered: unchanged.delivered.length,
        result: unchanged.result,
      },
      fingerprints: { rows: Number(size.rows), tableMb: Number((Number(size.bytes) / 2 ** 20).toFixed(1)) },
      workerRssMb: {
        ready: readyRssMb ?? null,
        afterBackfill: afterBackfillRssMb ?? null,
        afterScheduled: afterScheduledRssMb ?? null,
        afterUnchangedScheduled: unchanged.rssMb ?? null,
        peak: procStatusMb(pid, 'VmHWM') ?? null,
      },
    };
    await stopAll();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    await stopAll();
    throw error;
  }
}
