import pg from 'pg';
import { createBenchProject } from './bench-project.js';
import { benchEnvironment } from './database.js';
import { freePort } from './free-port.js';
import { startReaper } from './reaper.js';
import { startSandbox, startWorker, type SandboxProcess, type WorkerChild } from './ferry-processes.js';

/**
 * Ferry for the destination benches: a database of the bench's own, a Temporal dev server, the API
 * in this process, a project with an API key, and the means to start workers and sandboxes and to
 * backfill contacts into a destination. Every process it starts is watched by a reaper, so none
 * outlives the bench however it ends (done, failed, Ctrl-C, SIGKILL); `close` stops them in order.
 */

export interface FerryStack {
  databaseUrl: string;
  api(method: string, path: string, body?: unknown): Promise<any>;
  /** Registers a process the bench started itself (a broker, moto), so the reaper stops it too. */
  watch(pid: number | undefined): void;
  /** A worker process; `logFile` keeps its log. */
  startWorker(logFile?: string): Promise<WorkerChild>;
  startSandbox(contacts: number): Promise<SandboxProcess>;
  /** Creates the destination and an installation that backfills every contact into it. */
  backfill(label: string, destination: Record<string, unknown>, pageSize: number): Promise<Backfill>;
  /** Delivered messages so far in Ferry's attempts ledger: progress only, never the verdict. */
  deliveredMessages(): Promise<number>;
  /** Runs `stop` (last added, first run) when the stack closes. */
  onClose(stop: () => Promise<void>): void;
  close(): Promise<void>;
}

export interface Backfill {
  startedAt: number;
  /** Resolves when the backfill's operation has ended, with its status and result. */
  finished(timeoutMs: number): Promise<{ status: string; result?: string; endedAt: number }>;
}

export function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

export async function startFerryStack(name: string): Promise<FerryStack> {
  const reaper = startReaper();
  // Metrics ports off: a second worker (after a kill) or another bench would collide on the defaults.
  const bench = benchEnvironment(name, {
    FERRY_ALLOW_PRIVATE_DESTINATIONS: 'true',
    FERRY_WORKER_METRICS_PORT: '0',
    FERRY_METRICS_PORT: '0',
  });
  process.env.FERRY_TASK_QUEUE = `bench-${bench.runId}`;
  const stops: (() => Promise<void>)[] = [];
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const stop of stops.reverse()) await stop().catch((error) => say(`cleanup: ${String(error)}`));
      reaper.close();
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping everything the bench started`);
      void close().finally(() => process.exit(130));
    });
  }
  try {
    const { startDevServer } = await import('../../src/temporal/dev-server.js');
    say('starting a Temporal dev server');
    const temporal = await startDevServer({ port: await freePort() });
    reaper.watch(temporal.process.pid);
    process.env.TEMPORAL_ADDRESS = temporal.address;
    stops.push(() => temporal.stop());
    const { resetConfig } = await import('../../src/config.js');
    resetConfig();
    const { migrate } = await import('../../src/db/orm.js');
    await migrate(bench.databaseUrl);
    stops.push(() => bench.drop());
    const ledger = new pg.Pool({ connectionString: bench.databaseUrl, max: 1 });
    stops.push(() => ledger.end());
    const { startServers } = await import('../../src/api/server.js');
    const { closeTemporalClient } = await import('../../src/temporal/client.js');
    const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
    stops.push(async () => {
      await servers.close();
      await closeTemporalClient();
    });
    const project = await createBenchProject(bench.runId, servers.urls.api);
    const api = project.api;
    const projectPath = `/projects/${project.id}`;

    const backfill = async (label: string, destination: Record<string, unknown>, pageSize: number) => {
      await api('POST', `${projectPath}/destinations`, { name: label, ...destination });
      const read = { objectName: 'contacts', schedule: '0 0 1 1 *', destination: label };
      await api('POST', `${projectPath}/integrations`, {
        name: label,
        provider: 'sandboxApiKey',
        latestRevision: {
          specVersion: '1.0.0',
          content: {
            name: label,
            provider: 'sandboxApiKey',
            read: {
              objects: [
                {
                  ...read,
                  backfill: { defaultPeriod: { fullHistory: true } },
                  delivery: { pageSize },
                  optionalFieldsAuto: 'all',
                },
              ],
            },
          },
        },
      });
      const groupRef = `group-${label}`;
      await api('POST', `${projectPath}/connections:generate`, {
        provider: 'sandboxApiKey',
        groupRef,
        consumerRef: `consumer-${label}`,
        apiKey: 'sandbox-demo-key',
      });
      const startedAt = Date.now();
      const installation = await api('POST', `${projectPath}/integrations/${label}/installations`, {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: { objects: { contacts: { ...read, selectedFields: {}, selectedFieldsAuto: 'all' } } },
          },
        },
      });
      const operations = `${projectPath}/integrations/${label}/installations/${installation.id}/operations`;
      return {
        startedAt,
        async finished(timeoutMs: number) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const latest = (await api('GET', operations)).results?.[0];
            if (latest && latest.status !== 'in_progress')
              return { status: latest.status, result: latest.result, endedAt: Date.now() };
            if (Date.now() > deadline) throw new Error(`the backfill into ${label} did not end in time`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        },
      };
    };

    return {
      databaseUrl: bench.databaseUrl,
      api,
      watch: (pid) => reaper.watch(pid),
      startWorker: (logFile) =>
        startWorker({ ...process.env }, [], { onSpawn: (pid) => reaper.watch(pid), logFile }),
      async startSandbox(contacts) {
        const sandbox = await startSandbox(contacts);
        reaper.watch(sandbox.pid);
        process.env.FERRY_SANDBOX_URL = sandbox.url;
        resetConfig();
        return sandbox;
      },
      backfill,
      async deliveredMessages() {
        const answer = await ledger.query('select count(*)::int as n from delivery_attempts where delivered');
        return answer.rows[0].n as number;
      },
      onClose: (stop) => stops.push(stop),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
