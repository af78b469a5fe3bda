/**
 * `npm run bench:installations -- --count N`: how installation workflows scale.
 *
 * Starts its own stack (a fresh PostgreSQL database, a Temporal dev server, the API in this process,
 * the worker as a child process with the production worker settings), creates N installations through
 * the real API with bounded concurrency, each reading three objects on `--schedule` (by default every
 * five minutes, the most frequent schedule the default config allows), then measures:
 * - creation throughput and p50/p99 latency of `POST .../installations`;
 * - schedule lateness over one cron time and the spread window after it: for every scheduled read,
 *   workflow time at which the read started minus its planned fire (from the workflow's `describe`
 *   query), the same against the read's operation row, and the start minus the plain cron time;
 *   fires expected but not seen are missed fires;
 * - CPU (percent of one core) of worker, Temporal and API, and of the whole machine (PostgreSQL and the
 *   sandbox provider included), while reads fire ("busy"), and after the window when the cycle leaves
 *   a gap ("idle": N workflows waiting, nothing due until the next cycle);
 * - resident memory (VmRSS) of the worker and the Temporal server, now and at their peak;
 * - Temporal server operations (persistence requests, from the dev server's metrics) per read
 *   over the observed window.
 * Reads are real (`--read real`, the default): the worker runs the production workflows and
 * activities, each scheduled read runs inline in its installation's workflow against a sandbox
 * provider process and delivers to a local receiver. `--read stub` keeps the old stand-in child
 * that only records its operation row (installation-workflows.ts).
 *
 * `--cycles 2` observes the same part of the next cron time's window too (15 minutes later on
 * every15), every installation due again, and reports it under `laterCycles`.
 *
 * `--schedule every15` is `*\/15 * * * *` shifted (`M-59/15 * * * *`) so that its next cron time
 * comes `--lead-seconds` after the bench starts creating: the same frequency, observed for one
 * cycle without waiting up to 15 minutes for a quarter hour. `--observe-seconds` watches only the
 * fires planned in the first part of the spread window: the spread is even, so its load is the
 * whole window's, and a bench of 10,000 installations spread over 15 minutes ends in under 15.
 * Fires expected of each installation are computed from its creation time and its spread offset, so
 * an installation created after the cron time is expected only where its offset still lies ahead.
 *
 * `--rest-seconds N` measures the stack's CPU at rest, before anything is created: the floor idle is
 * held to. `--idle-only`: only that and idle: N installations on a yearly schedule, measured once the
 * server is quiet after creating them (nothing due for months), against the rest before.
 *
 * `--cost`: only the read-cost comparison: `--count` installations on `* * * * *` with every
 * scheduled read a child workflow (FERRY_READ_INLINE_PAGES=0, the old design), one minute's fires
 * measured; paused; as many again with reads inline, measured the same way, in the same run.
 *
 * Every process it starts is stopped when it ends, also when it is killed (bench/support/reaper.ts). The
 * last line printed is one JSON object with every figure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dropDatabase } from './support/database.js';
import { freePort } from './support/free-port.js';
import { cpuSeconds, machineBusySeconds, percentile, rssMb } from './support/measure.js';
import { startReaper, type Reaper } from './support/reaper.js';
import { startSandboxProcess } from './support/sandbox-process.js';
import { latenessParts, latestFireHistories, type ObservedFire } from './support/lateness-parts.js';

const MINUTE = 60_000;
const OBJECTS = ['contacts', 'companies', 'deals'];
/** Installations whose histories are read to split lateness into its parts. */
const LATENESS_SAMPLE = 300;
const root = fileURLToPath(new URL('..', import.meta.url));

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/** Runs `work` over `items` with at most `concurrency` at once. */
async function eachLimited<T>(
  items: T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index], index);
      }
    }),
  );
}

interface CpuSample {
  worker: number;
  temporal: number;
  api: number;
  machine: number;
  at: number;
}

/** Each process's CPU seconds when last read: a worker killed mid-run keeps what it had used. */
const lastCpuSeconds = new Map<number, number>();

function processCpu(pid: number): number {
  const seconds = cpuSeconds(pid) ?? lastCpuSeconds.get(pid) ?? 0;
  lastCpuSeconds.set(pid, seconds);
  return seconds;
}

/** `worker` is every worker process's CPU together. */
function sampleCpu(workerPids: number[], temporalPid: number): CpuSample {
  const api = process.cpuUsage();
  return {
    worker: workerPids.reduce((sum, pid) => sum + processCpu(pid), 0),
    temporal: processCpu(temporalPid),
    api: (api.user + api.system) / 1e6,
    machine: machineBusySeconds(),
    at: performance.now(),
  };
}

/**
 * Percent of one core each process used between two samples; `machine` is every process of the
 * machine (of `cores` × 100), PostgreSQL, the sandbox provider and the receiver included.
 */
function cpuPercent(from: CpuSample, to: CpuSample) {
  const seconds = (to.at - from.at) / 1000;
  const pct = (key: 'worker' | 'temporal' | 'api' | 'machine') =>
    Math.round(((to[key] - from[key]) / seconds) * 1000) / 10;
  const worker = pct('worker');
  const temporal = pct('temporal');
  const api = pct('api');
  return {
    worker,
    temporal,
    api,
    total: Math.round((worker + temporal + api) * 10) / 10,
    machine: pct('machine'),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The bench's worker process: the production workflows and activities (`real`), or the real
 * installation workflow with the stand-in read child (`stub`). The workflow cache holds every
 * installation (`--max-cached-workflows`), as a production worker sized for its share would.
 */
async function runWorker(read: string, maxCached: number, metricsPort: number): Promise<void> {
  const { createWorker } = await import('../src/cli/worker.js');
  const stub =
    read === 'stub'
      ? {
          workflowsPath: fileURLToPath(new URL('./installation-workflows.ts', import.meta.url)),
          activities: await import('./installation-activities.js'),
        }
      : {};
  const worker = await createWorker({
    overrides: { ...stub, ...(maxCached > 0 && { maxCachedWorkflows: maxCached }) },
  });
  // Beside the Temporal worker, what `ferry worker` runs too: the outbox relay and the repair loop.
  const relay = (await import('../src/notifications/outbox-relay.js')).startOutboxRelay(
    (await import('../src/config.js')).config(),
  );
  const repair = (await import('../src/cli/repair-loop.js')).startRepairLoop();
  // Its reads counted apart from the other workers' (--workers): `ferry_reads_total` on its own port.
  const metrics = metricsPort
    ? await (await import('../src/metrics.js')).startMetricsServer(metricsPort, '127.0.0.1')
    : undefined;
  const shutdown = () => {
    void Promise.all([repair.stop(), relay.stop(), metrics?.close()]).finally(() => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    });
  };
  process.once('SIGTERM', shutdown);
  // The bench holds a pipe open: when it ends however it ends (even SIGKILL), so does the worker.
  process.stdin.once('end', shutdown);
  process.stdin.resume();
  const running = worker.run();
  process.stdout.write('worker ready\n');
  await running;
  const { closeOrm } = await import('../src/db/orm.js');
  await closeOrm();
  process.exit(0);
}

function startWorkerProcess(
  env: NodeJS.ProcessEnv,
  read: string,
  maxCached: number,
  heapMb: number,
  metricsPort: number,
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      ...(heapMb > 0 ? [`--max-old-space-size=${heapMb}`] : []),
      // A profile of the worker, for a run that needs one (`--cpu-prof --cpu-prof-dir=…`).
      ...(process.env.FERRY_BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      join(root, 'bin/ferry.js'),
      'bench',
      'installations',
      '--role',
      'worker',
      '--read',
      read,
      '--max-cached-workflows',
      String(maxCached),
      '--metrics-port',
      String(metricsPort),
    ],
    { env, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the bench worker exited with code ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('worker ready')) resolve(child);
    });
  });
}

interface BenchWorker {
  child: ChildProcess;
  pid: number;
  metricsUrl: string;
  /** When it was SIGKILLed (`--kill-worker-after-seconds`), and the scheduled reads it had finished by then. */
  killedAt?: number;
  readsBeforeKill?: number;
}

/** Scheduled reads a worker process has finished (its `ferry_reads_total`). */
async function scheduledReadsOf(worker: BenchWorker): Promise<number> {
  const text = await (await fetch(worker.metricsUrl)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('ferry_reads_total{') && line.includes('read_type="scheduled"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** One `ferry server` process: the API a deployment runs beside others over one PostgreSQL and Temporal. */
async function startApiProcess(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const ports = {
    FERRY_API_PORT: await freePort(),
    FERRY_READ_PORT: await freePort(),
    FERRY_WRITE_PORT: await freePort(),
    FERRY_SEARCH_PORT: await freePort(),
    FERRY_PROXY_PORT: await freePort(),
    FERRY_MCP_PORT: await freePort(),
  };
  const child = spawn(process.execPath, [join(root, 'bin/ferry.js'), 'server'], {
    env: {
      ...env,
      ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
      FERRY_METRICS_PORT: 'off',
      FERRY_HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${ports.FERRY_API_PORT}/v1`;
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`ferry server exited with code ${child.exitCode}`);
    const healthy = await fetch(`${url}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return { child, url };
    if (tries > 120) throw new Error('ferry server did not answer /v1/health within a minute');
    await sleep(500);
  }
}

/** The destination: answers 200 to every delivery and counts them. */
async function startReceiver(): Promise<{ server: Server; url: string; received: () => number }> {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/hooks`, received: () => received };
}

/** The dev server's persistence requests so far, by operation. */
async function persistenceRequests(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const totals: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('persistence_requests{')) continue;
    const operation = /operation="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (operation && Number.isFinite(value)) totals[operation] = (totals[operation] ?? 0) + value;
  }
  return totals;
}

/** Workflow executions and their histories: what a read costs the server (task queues apart). */
const EXECUTION_OPERATION = /WorkflowExecution|HistoryBranch|HistoryNode|HistoryTree/;

function operationsPerRead(before: Record<string, number>, after: Record<string, number>, reads: number) {
  const delta: Record<string, number> = {};
  for (const [operation, value] of Object.entries(after)) {
    const change = value - (before[operation] ?? 0);
    if (change > 0) delta[operation] = change;
  }
  const sum = (filter: (operation: string) => boolean) =>
    Object.entries(delta)
      .filter(([operation]) => filter(operation))
      .reduce((total, [, value]) => total + value, 0);
  const per = (value: number) => (reads ? Math.round((value / reads) * 100) / 100 : 0);
  const execution = sum((operation) => EXECUTION_OPERATION.test(operation));
  return {
    reads,
    executionOpsPerRead: per(execution),
    allOpsPerRead: per(sum(() => true)),
    byOperationPerRead: Object.fromEntries(
      Object.entries(delta)
        .filter(([, value]) => value >= reads / 20)
        .sort(([, a], [, b]) => b - a)
        .map(([operation, value]) => [operation, per(value)]),
    ),
  };
}

interface Options {
  count: number;
  concurrency: number;
  idleSeconds: number;
  /** Seconds of the stack at rest before anything is created: what idle is compared with. */
  restSeconds: number;
  schedule: string;
  spreadSeconds: number;
  read: string;
  cost: boolean;
  /** Only idle: N installations waiting on a yearly schedule, against the stack at rest. */
  idleOnly: boolean;
  /** Only creating: N installations on a yearly schedule, with the server's work and each process's CPU per creation. */
  createOnly: boolean;
  leadSeconds?: number;
  observeSeconds?: number;
  /** Cron times observed one after the other, the same part of each. */
  cycles: number;
  maxCached: number;
  workerHeapMb: number;
  /** Worker processes, each serving every concern: the scale-out claim, on one box. */
  workers: number;
  /** `ferry server` processes the installations are created through, in turn (0: the API in this process). */
  apiProcesses: number;
  /** SIGKILL the last worker this long into the observed window: its installations must move to the others. */
  killWorkerAfterSeconds?: number;
  /** The worker role's own `/metrics` port. */
  metricsPort: number;
}

function parseOptions(args: string[]): Options & { role?: string } {
  const { values } = parseArgs({
    args,
    options: {
      count: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '16' },
      'idle-seconds': { type: 'string', default: '60' },
      'rest-seconds': { type: 'string', default: '0' },
      schedule: { type: 'string', default: '*/5 * * * *' },
      'spread-seconds': { type: 'string' },
      read: { type: 'string', default: 'real' },
      cost: { type: 'boolean', default: false },
      'idle-only': { type: 'boolean', default: false },
      'create-only': { type: 'boolean', default: false },
      'lead-seconds': { type: 'string' },
      'observe-seconds': { type: 'string' },
      cycles: { type: 'string', default: '1' },
      'max-cached-workflows': { type: 'string' },
      'worker-heap-mb': { type: 'string' },
      workers: { type: 'string', default: '1' },
      'api-processes': { type: 'string', default: '0' },
      'kill-worker-after-seconds': { type: 'string' },
      'metrics-port': { type: 'string', default: '0' },
      role: { type: 'string' },
    },
    strict: true,
  });
  const count = Number(values.count);
  const options: Options & { role?: string } = {
    count,
    concurrency: Number(values.concurrency),
    idleSeconds: Number(values['idle-seconds']),
    restSeconds: Number(values['rest-seconds']),
    schedule: values.cost
      ? '* * * * *'
      : values['idle-only'] || values['create-only']
        ? '0 0 1 1 *'
        : values.schedule,
    spreadSeconds: Number(values['spread-seconds'] ?? (values.cost ? 20 : 300)),
    read: values.read,
    cost: values.cost,
    idleOnly: values['idle-only'],
    createOnly: values['create-only'],
    ...(values['lead-seconds'] !== undefined && { leadSeconds: Number(values['lead-seconds']) }),
    ...(values['observe-seconds'] !== undefined && { observeSeconds: Number(values['observe-seconds']) }),
    cycles: Number(values.cycles),
    // Both phases of --cost, with room to spare.
    maxCached: Number(values['max-cached-workflows'] ?? count * 2 + 100),
    // A cached installation workflow takes about 0.5 MB of heap: room for all of them, and the rest.
    workerHeapMb: Number(values['worker-heap-mb'] ?? Math.max(4096, Math.ceil(count * 0.8) + 2048)),
    workers: Number(values.workers),
    apiProcesses: Number(values['api-processes']),
    ...(values['kill-worker-after-seconds'] !== undefined && {
      killWorkerAfterSeconds: Number(values['kill-worker-after-seconds']),
    }),
    metricsPort: Number(values['metrics-port']),
    ...(values.role !== undefined && { role: values.role }),
  };
  if (
    ![options.count, options.concurrency, options.idleSeconds, options.cycles].every(
      (n) => Number.isInteger(n) && n > 0,
    )
  ) {
    throw new Error('--count, --concurrency, --idle-seconds and --cycles take positive integers');
  }
  if (!Number.isInteger(options.restSeconds) || options.restSeconds < 0)
    throw new Error('--rest-seconds takes a whole number of seconds');
  if (!['real', 'stub'].includes(options.read)) throw new Error('--read is real or stub');
  if (!Number.isInteger(options.workers) || options.workers < 1 || !Number.isInteger(options.apiProcesses))
    throw new Error('--workers takes a positive integer, --api-processes a whole number');
  if (options.killWorkerAfterSeconds !== undefined && options.workers < 2)
    throw new Error('--kill-worker-after-seconds needs --workers 2 or more: the others take over');
  return options;
}

/** Lateness by the minute of the window its fire was planned in: a tail in one stretch, or throughout. */
function latenessByMinute(latenessByPlanned: [number, number][], cronTime: number) {
  const minutes = new Map<number, number[]>();
  for (const [planned, late] of latenessByPlanned) {
    const minute = Math.floor((planned - cronTime) / MINUTE);
    minutes.set(minute, [...(minutes.get(minute) ?? []), late]);
  }
  return [...minutes.entries()]
    .sort(([a], [b]) => a - b)
    .map(([minute, lateness]) => ({
      minute,
      fires: lateness.length,
      p50Ms: Math.round(percentile(lateness, 50)),
      p99Ms: Math.round(percentile(lateness, 99)),
      maxMs: Math.round(Math.max(...lateness)),
    }));
}

/**
 * The fires planned in the two minutes after a worker was killed (its installations' next tasks wait
 * for Temporal to give up on its sticky queue, then replay on another worker) and those after.
 */
function afterKill(latenessByPlanned: [number, number][], killedAt: number) {
  const within = latenessByPlanned.filter(
    ([planned]) => planned >= killedAt && planned < killedAt + 2 * MINUTE,
  );
  const later = latenessByPlanned.filter(([planned]) => planned >= killedAt + 2 * MINUTE);
  const figures = (fires: [number, number][]) => ({
    fires: fires.length,
    latenessP50Ms: Math.round(
      percentile(
        fires.map(([, late]) => late),
        50,
      ),
    ),
    latenessP99Ms: Math.round(
      percentile(
        fires.map(([, late]) => late),
        99,
      ),
    ),
    latenessMaxMs: Math.round(Math.max(0, ...fires.map(([, late]) => late))),
  });
  return { firesInTwoMinutesAfterKill: figures(within), firesLaterAfterKill: figures(later) };
}

/** `M-59/15 * * * *`: every 15 minutes, the next cron time at least `leadMs` from now. */
function every15From(now: number, leadMs: number): string {
  const at = new Date(Math.ceil((now + leadMs) / MINUTE) * MINUTE);
  return `${at.getUTCMinutes() % 15}-59/15 * * * *`;
}

export async function benchInstallations(args: string[]): Promise<void> {
  const options = parseOptions(args);
  if (options.role === 'worker') return runWorker(options.read, options.maxCached, options.metricsPort);
  const { count, concurrency } = options;

  const reaper: Reaper = startReaper();
  const databaseUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/ferry');
  databaseUrl.pathname = '/ferry_bench_installations';
  const { startDevServer } = await import('../src/temporal/dev-server.js');
  say('starting a Temporal dev server');
  const metricsPort = await freePort();
  // The history service keeps each live workflow's state in a cache of 512 per shard by default:
  // with more installations than that, every fire reloads its workflow from the database (a
  // `GetWorkflowExecution` and a history read per fire). Sized, as a production cluster would be,
  // to hold every installation.
  const temporal = await startDevServer({
    port: await freePort(),
    metricsPort,
    dynamicConfig: { 'history.cacheMaxSize': Math.max(512, Math.ceil((options.count * 2.2) / 4)) },
    log: say,
  });
  const temporalPid = temporal.process.pid!;
  reaper.watch(temporalPid);
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const receiver = await startReceiver();
  const sandboxPort = await freePort();
  Object.assign(process.env, {
    FERRY_ENV: 'development',
    DATABASE_URL: databaseUrl.toString(),
    TEMPORAL_ADDRESS: temporal.address,
    FERRY_TASK_QUEUE: `bench-${randomUUID().slice(0, 8)}`,
    // The default schedule is the most frequent the default config allows; this admits `* * * * *`.
    FERRY_MIN_SCHEDULE_INTERVAL_SECONDS: '60',
    FERRY_SCHEDULE_SPREAD_SECONDS: String(options.spreadSeconds),
    FERRY_ALLOW_PRIVATE_DESTINATIONS: 'true',
    FERRY_SANDBOX_URL: `http://127.0.0.1:${sandboxPort}`,
    FERRY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    FERRY_BUILDER_TOKEN_SECRET: randomBytes(32).toString('base64'),
    FERRY_DATA_DIR: join(root, '.data', 'bench'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  });
  const { resetConfig, config } = await import('../src/config.js');
  resetConfig();
  const { ensureDatabase, migrate, closeOrm, transaction } = await import('../src/db/orm.js');
  await dropDatabase(databaseUrl.toString());
  await ensureDatabase(databaseUrl.toString());
  await migrate(databaseUrl.toString());

  const workers: BenchWorker[] = [];
  const apiProcesses: ChildProcess[] = [];
  let sandbox: ChildProcess | undefined;
  const { startServers } = await import('../src/api/server.js');
  const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
  try {
    if (options.read === 'real') {
      sandbox = await startSandboxProcess(['--port', String(sandboxPort)]);
      reaper.watch(sandbox.pid);
    }
    say(`starting ${options.workers} worker process(es) (${options.read} reads)`);
    for (let index = 0; index < options.workers; index++) {
      const metricsPort = await freePort();
      const child = await startWorkerProcess(
        process.env,
        options.read,
        options.maxCached,
        options.workerHeapMb,
        metricsPort,
      );
      reaper.watch(child.pid);
      workers.push({ child, pid: child.pid!, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` });
    }
    const workerPids = workers.map((worker) => worker.pid);
    const liveWorkerPids = () => workers.filter((worker) => worker.killedAt === undefined).map((w) => w.pid);
    const workersRssMb = () => liveWorkerPids().reduce((sum, pid) => sum + (rssMb(pid) ?? 0), 0);
    // Stateless API processes (`ferry server`) the installations are created through, in turn.
    const apiUrls: string[] = [];
    for (let index = 0; index < options.apiProcesses; index++) {
      const api = await startApiProcess(process.env);
      reaper.watch(api.child.pid);
      apiProcesses.push(api.child);
      apiUrls.push(api.url);
    }
    let nextApi = 0;

    const { createApiKey, createOrg, createProject } = await import('../src/domain/projects.js');
    const project = await transaction(async (em) => {
      const org = await createOrg(em, 'bench');
      const created = await createProject(em, { name: 'bench', orgId: org.id });
      return { name: created.name, apiKey: createApiKey(em, created.id, { label: 'bench' }).key };
    });
    const call = async (host: 'api' | 'read', method: string, path: string, body?: unknown) => {
      const base =
        host === 'api' && apiUrls.length ? apiUrls[nextApi++ % apiUrls.length] : servers.urls[host];
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          'x-api-key': project.apiKey,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
    };
    const base = `/projects/${project.name}`;
    await call('api', 'POST', `${base}/destinations`, {
      name: 'hooks',
      type: 'webhook',
      metadata: { url: receiver.url },
    });

    const connectGroups = async (groups: string[]) => {
      const started = performance.now();
      await eachLimited(groups, concurrency, async (groupRef) => {
        const response = await call('api', 'POST', `${base}/connections:generate`, {
          provider: 'sandboxApiKey',
          groupRef,
          consumerRef: `${groupRef}-admin`,
          apiKey: 'sandbox-demo-key',
        });
        if (response.status >= 300)
          throw new Error(`connecting ${groupRef} failed: ${JSON.stringify(response.body)}`);
      });
      return (performance.now() - started) / 1000;
    };

    const createIntegration = async (name: string, schedule: string) => {
      const integration = await call('api', 'POST', `${base}/integrations`, {
        name,
        provider: 'sandboxApiKey',
        latestRevision: {
          specVersion: '1.0.0',
          content: {
            name,
            provider: 'sandboxApiKey',
            read: {
              objects: OBJECTS.map((objectName) => ({ objectName, destination: 'hooks', schedule })),
            },
          },
        },
      });
      if (integration.status !== 201)
        throw new Error(`creating the integration failed: ${JSON.stringify(integration.body)}`);
      return integration.body!.id as string;
    };

    /** Creates one installation per group; each one's creation time (the API's answer) is kept. */
    const createInstallations = async (integrationId: string, groups: string[], schedule: string) => {
      const content = {
        provider: 'sandboxApiKey',
        read: {
          objects: Object.fromEntries(
            OBJECTS.map((objectName) => [
              objectName,
              { objectName, schedule, destination: 'hooks', selectedFields: {} },
            ]),
          ),
        },
      };
      const latencies: number[] = [];
      const created = new Map<string, number>();
      const failures: string[] = [];
      const started = performance.now();
      await eachLimited(groups, concurrency, async (groupRef) => {
        const at = performance.now();
        const response = await call('api', 'POST', `${base}/integrations/${integrationId}/installations`, {
          groupRef,
          config: { content },
        });
        latencies.push(performance.now() - at);
        if (response.status === 201) created.set(response.body!.id as string, Date.now());
        else failures.push(`${response.status} ${response.body?.detail ?? ''}`);
      });
      const seconds = (performance.now() - started) / 1000;
      say(
        `created ${created.size} in ${seconds.toFixed(1)} s${failures.length ? `; failures: ${failures.slice(0, 3).join(' | ')}` : ''}`,
      );
      return { created, failures, latencies, seconds };
    };

    const pauseAll = async (integrationId: string, ids: string[]) => {
      await eachLimited(ids, concurrency, async (id) => {
        const response = await call(
          'read',
          'POST',
          `${base}/integrations/${integrationId}/installations/${id}:pause`,
          {},
        );
        if (response.status !== 204) throw new Error(`pausing ${id} failed: ${response.status}`);
      });
    };

    const { nextFireTime, upcomingFireTimes } = await import('../src/core/cron.js');
    const { nextSpreadFireTime, spreadFraction } = await import('../workflows/schedule.js');
    const { describeInstallation } = await import('../src/temporal/gateway.js');
    const { installationWorkflowId } = await import('../src/temporal/contracts/workflow-ids.js');
    const { temporalClient } = await import('../src/temporal/client.js');

    /** Where lateness comes from, read off the histories of a random sample of the installations. */
    const latenessPartsOfSample = async ({ observedFires }: { observedFires: ObservedFire[] }) => {
      const ids = [...new Set(observedFires.map((fire) => fire.workflowId))];
      const sampled = new Set(ids.sort(() => Math.random() - 0.5).slice(0, LATENESS_SAMPLE));
      return latenessParts(
        await temporalClient(),
        observedFires.filter((fire) => sampled.has(fire.workflowId)),
      );
    };
    /** The same split for the latest 1 % of fires, and the histories around the ten latest: the tail. */
    const tailOf = async ({ observedFires }: { observedFires: ObservedFire[] }) => {
      const byLateness = [...observedFires].sort(
        (a, b) => b.startedAt - b.plannedAt - (a.startedAt - a.plannedAt),
      );
      const client = await temporalClient();
      return {
        latenessPartsOfLatest: await latenessParts(
          client,
          byLateness.slice(0, Math.ceil(byLateness.length / 100)),
        ),
        latestFireHistories: await latestFireHistories(client, byLateness),
      };
    };
    const { OperationEntity } = await import('../src/db/entities/operation.js');

    /**
     * The fires of one cron time: each installation's planned fire (its spread offset after the cron
     * time) is expected when it comes after the installation was created; describes every
     * installation and compares. Lateness is the read's start (workflow time) minus its planned fire.
     */
    const collectFires = async (
      created: Map<string, number>,
      schedule: string,
      cronTime: number,
      windowMs: number,
      observedMs = windowMs,
    ) => {
      let expected = 0;
      let missing = 0;
      let unanswered = 0;
      const lateness: number[] = [];
      const afterCronTime: number[] = [];
      const operationIds: string[] = [];
      const planned = new Map<string, number>();
      // Each fire's lateness by its planned time: the fires after a worker was killed are reported apart.
      const latenessByPlanned: [number, number][] = [];
      const observedFires: ObservedFire[] = [];
      // The same object's fire for the same planned time seen twice would be a read run twice.
      const firesSeen = new Set<string>();
      let duplicates = 0;
      // Queries are answered from the worker's cache: 64 at once asks all 10,000 in well under a minute.
      await eachLimited([...created.keys()], 64, async (id) => {
        // This cron time's fire, expected when it is observed and comes after the installation was made.
        const fire = nextSpreadFireTime(schedule, new Date(Math.max(created.get(id)! + 2000, cronTime - 1)), {
          maxMs: windowMs,
          fraction: spreadFraction(id),
        })?.getTime();
        const due = fire !== undefined && fire < cronTime + observedMs ? OBJECTS.length : 0;
        expected += due;
        let view;
        try {
          view = await describeInstallation(id, { deadlineMs: 60_000 });
        } catch (error) {
          if (!unanswered++) say(`describe of ${id} failed: ${(error as Error).message}`);
          missing += due;
          return;
        }
        let seen = 0;
        for (const read of view.recentFires) {
          const plannedAt = Date.parse(read.plannedAt);
          if (read.readType !== 'scheduled' || plannedAt < cronTime || plannedAt >= cronTime + observedMs)
            continue;
          seen++;
          const fireKey = `${id}/${read.objectName}/${read.plannedAt}`;
          if (firesSeen.has(fireKey)) duplicates++;
          firesSeen.add(fireKey);
          const startedAt = Date.parse(read.startedAt);
          lateness.push(startedAt - plannedAt);
          latenessByPlanned.push([plannedAt, startedAt - plannedAt]);
          observedFires.push({ workflowId: installationWorkflowId(id), plannedAt, startedAt });
          afterCronTime.push(startedAt - cronTime);
          operationIds.push(read.operationId);
          planned.set(read.operationId, plannedAt);
        }
        missing += Math.max(0, due - seen);
        // What a workflow that missed its fire says of itself: the first few, to find out why.
        if (due > seen && missing <= 3 * OBJECTS.length) {
          say(
            `missed: ${id} created ${new Date(created.get(id)!).toISOString()}, planned ${new Date(fire!).toISOString()}: ${JSON.stringify(view)}`,
          );
        }
      });
      // The stricter figure: when the read itself began (its operation row), not when it was decided.
      const rows = await transaction((em) =>
        em.find(
          OperationEntity,
          { id: { $in: operationIds } },
          { fields: ['id', 'createTime', 'status', 'metadata'] },
        ),
      );
      const readStartLateness = rows.map((row) => row.createTime.getTime() - planned.get(row.id)!);
      return {
        cronTime,
        expected,
        fires: lateness.length,
        missing,
        unanswered,
        succeeded: rows.filter((row) => row.status === 'success').length,
        ranInline: rows.filter((row) => row.metadata.inline === true).length,
        lateness,
        latenessByPlanned,
        observedFires,
        duplicates,
        afterCronTime,
        readStartLateness,
      };
    };

    /** The window of one cron time's fires, with the server's operations counted over it. */
    const observeCronTime = async (
      schedule: string,
      cronTime: number,
      windowMs: number,
      killWorker = false,
    ) => {
      const wait = cronTime - 1000 - Date.now();
      if (wait < 0) say(`warning: creating ran ${Math.round(-wait / 1000)} s into the observed cycle`);
      await sleep(Math.max(0, wait));
      const opsBefore = await persistenceRequests(metricsUrl);
      const cpuFrom = sampleCpu(workerPids, temporalPid);
      let peakWorkerRss = 0;
      let peakTemporalRss = 0;
      const rssTimer = setInterval(() => {
        peakWorkerRss = Math.max(peakWorkerRss, workersRssMb());
        peakTemporalRss = Math.max(peakTemporalRss, rssMb(temporalPid) ?? 0);
      }, 2000);
      // A worker dies as a crash or the OOM killer would end it: no shutdown, its cached workflows lost.
      const victim = workers.at(-1)!;
      const killTimer =
        killWorker && options.killWorkerAfterSeconds !== undefined
          ? setTimeout(
              () => {
                void scheduledReadsOf(victim)
                  .catch(() => -1)
                  .then((reads) => {
                    victim.readsBeforeKill = reads;
                    victim.killedAt = Date.now();
                    victim.child.removeAllListeners('exit');
                    victim.child.kill('SIGKILL');
                    say(`SIGKILLed worker ${victim.pid} after ${reads} scheduled reads`);
                  });
              },
              cronTime + options.killWorkerAfterSeconds * 1000 - Date.now(),
            )
          : undefined;
      await sleep(cronTime + windowMs + 20_000 - Date.now());
      clearTimeout(killTimer);
      clearInterval(rssTimer);
      const busy = cpuPercent(cpuFrom, sampleCpu(workerPids, temporalPid));
      const opsAfter = await persistenceRequests(metricsUrl);
      return { opsBefore, opsAfter, busy, peakWorkerRss, peakTemporalRss };
    };

    /** What one cron time's observed window showed: its fires, their lateness, the server's work. */
    const firesFigures = (
      fires: Awaited<ReturnType<typeof collectFires>>,
      observed: Awaited<ReturnType<typeof observeCronTime>>,
    ) => ({
      expectedFires: fires.expected,
      scheduledFires: fires.fires,
      missingFires: fires.missing,
      unansweredQueries: fires.unanswered,
      succeededReads: fires.succeeded,
      inlineReads: fires.ranInline,
      scheduleLatenessP50Ms: Math.round(percentile(fires.lateness, 50)),
      scheduleLatenessP99Ms: Math.round(percentile(fires.lateness, 99)),
      scheduleLatenessMaxMs: Math.round(Math.max(0, ...fires.lateness)),
      firesSeenTwice: fires.duplicates,
      startAfterCronTimeP50Ms: Math.round(percentile(fires.afterCronTime, 50)),
      startAfterCronTimeP99Ms: Math.round(percentile(fires.afterCronTime, 99)),
      readStartLatenessP50Ms: Math.round(percentile(fires.readStartLateness, 50)),
      readStartLatenessP99Ms: Math.round(percentile(fires.readStartLateness, 99)),
      serverOps: operationsPerRead(observed.opsBefore, observed.opsAfter, fires.fires),
      latenessByMinute: latenessByMinute(fires.latenessByPlanned, fires.cronTime),
    });

    if (options.cost) {
      // The old design and the new one on the same server, one after the other.
      const phases: Record<string, unknown> = {};
      const integrationId = await createIntegration('bench', options.schedule);
      for (const [phase, inlinePages] of [
        ['child', '0'],
        ['inline', '5'],
      ] as const) {
        process.env.FERRY_READ_INLINE_PAGES = inlinePages;
        resetConfig();
        const groups = Array.from({ length: count }, (_, index) => `${phase}-group-${index}`);
        await connectGroups(groups);
        const { created } = await createInstallations(integrationId, groups, options.schedule);
        const windowMs = Math.min(config().scheduleSpreadSeconds * 1000, 30_000);
        const cronTime = nextFireTime(options.schedule, new Date(Date.now() + 5000)).getTime();
        say(`${phase}: observing the fires of ${new Date(cronTime).toISOString()}`);
        const observed = await observeCronTime(options.schedule, cronTime, windowMs);
        await pauseAll(integrationId, [...created.keys()]);
        const fires = await collectFires(created, options.schedule, cronTime, windowMs);
        phases[phase] = {
          ...operationsPerRead(observed.opsBefore, observed.opsAfter, fires.fires),
          missingFires: fires.missing,
          succeeded: fires.succeeded,
          ranInline: fires.ranInline,
          scheduleLatenessP99Ms: Math.round(percentile(fires.lateness, 99)),
          busyCpuPct: observed.busy,
        };
        say(`${phase}: ${JSON.stringify(phases[phase])}`);
      }
      const child = phases.child as { executionOpsPerRead: number; allOpsPerRead: number };
      const inline = phases.inline as { executionOpsPerRead: number; allOpsPerRead: number };
      const result = {
        installationsPerPhase: count,
        objectsPerInstallation: OBJECTS.length,
        schedule: options.schedule,
        read: options.read,
        ...phases,
        executionOpsRatio: Math.round((inline.executionOpsPerRead / child.executionOpsPerRead) * 100) / 100,
        allOpsRatio: Math.round((inline.allOpsPerRead / child.allOpsPerRead) * 100) / 100,
        deliveries: receiver.received(),
        cores: cpus().length,
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }

    /** CPU of each process and Temporal persistence requests a second over `seconds` of waiting. */
    const measureQuiet = async (seconds: number) => {
      const cpuFrom = sampleCpu(workerPids, temporalPid);
      const opsFrom = await persistenceRequests(metricsUrl);
      await sleep(seconds * 1000);
      const cpu = cpuPercent(cpuFrom, sampleCpu(workerPids, temporalPid));
      const ops = operationsPerRead(opsFrom, await persistenceRequests(metricsUrl), 1).allOpsPerRead;
      return { cpu, serverOpsPerSec: Math.round((ops / seconds) * 10) / 10 };
    };

    // The stack at rest, nothing created yet: the floor that idle with N workflows waiting is held to.
    let rest: Awaited<ReturnType<typeof measureQuiet>> | undefined;
    if (options.restSeconds) {
      say(`measuring ${options.restSeconds} s of the stack at rest`);
      rest = await measureQuiet(options.restSeconds);
    }
    const restFigures = {
      restCpuPct: rest ? rest.cpu.total : null,
      restCpu: rest?.cpu ?? null,
      restSeconds: options.restSeconds,
    };

    say(`connecting ${count} groups`);
    const groups = Array.from({ length: count }, (_, index) => `group-${index}`);
    const connectSeconds = await connectGroups(groups);
    // every15: the cycle begins a minute or so after creating ends (measured at 39–43 a second on two
    // cores; planned at 35), not up to 15 minutes later. The last workflows' first tasks need that
    // minute: a cycle that starts while they wait runs their fires late.
    const schedule =
      options.schedule === 'every15'
        ? every15From(Date.now(), (options.leadSeconds ?? 45 + count / 35) * 1000)
        : options.schedule;
    const integrationId = await createIntegration('bench', schedule);
    say(`creating ${count} installations on ${schedule}, ${concurrency} at a time`);
    const creationOpsFrom = await persistenceRequests(metricsUrl);
    const creationCpuFrom = sampleCpu(workerPids, temporalPid);
    const creation = await createInstallations(integrationId, groups, schedule);
    const { created } = creation;

    if (options.createOnly) {
      // What a creation costs: the first workflow tasks of the last ones created are still running.
      say('waiting for the server to go quiet after creating');
      for (let ops = Infinity, waited = 0; ops > 20 && waited < 300; waited += 5) {
        ops = (await measureQuiet(5)).serverOpsPerSec;
      }
      const cpuTo = sampleCpu(workerPids, temporalPid);
      const cpuSecondsPer = (key: 'worker' | 'temporal' | 'api' | 'machine') =>
        Math.round(((cpuTo[key] - creationCpuFrom[key]) / created.size) * 1e5) / 100;
      const result = {
        created: created.size,
        failed: creation.failures.length,
        concurrency,
        apiProcesses: options.apiProcesses,
        workers: options.workers,
        createSeconds: Math.round(creation.seconds * 10) / 10,
        createPerSec: Math.round((created.size / creation.seconds) * 10) / 10,
        createP50Ms: Math.round(percentile(creation.latencies, 50)),
        createP99Ms: Math.round(percentile(creation.latencies, 99)),
        // Until the server was quiet again: every first workflow task included.
        serverOpsPerCreation: operationsPerRead(
          creationOpsFrom,
          await persistenceRequests(metricsUrl),
          created.size,
        ),
        // The API in this process; with --api-processes it only routes to theirs, whose CPU is in `machine`.
        cpuMsPerCreation: {
          worker: cpuSecondsPer('worker'),
          temporal: cpuSecondsPer('temporal'),
          api: cpuSecondsPer('api'),
          machine: cpuSecondsPer('machine'),
        },
        cores: cpus().length,
        benchSeconds: Math.round(performance.now() / 1000),
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }

    if (options.idleOnly) {
      // Every workflow has run its first task and sleeps to January: the server goes quiet.
      say('waiting for the server to go quiet after creating');
      const quietFrom = performance.now();
      for (let ops = Infinity; ops > 20 && performance.now() - quietFrom < 5 * MINUTE;) {
        ops = (await measureQuiet(10)).serverOpsPerSec;
      }
      say(`measuring ${options.idleSeconds} s of idle (${created.size} installations waiting)`);
      const idle = await measureQuiet(options.idleSeconds);
      const result = {
        created: created.size,
        failed: creation.failures.length,
        schedule,
        settleSeconds: Math.round((performance.now() - quietFrom) / 1000),
        idleCpuPct: idle.cpu.total,
        idleCpu: idle.cpu,
        idleServerOpsPerSec: idle.serverOpsPerSec,
        idleSeconds: options.idleSeconds,
        ...restFigures,
        idleOverRestMachineCpu: rest ? Math.round((idle.cpu.machine / rest.cpu.machine) * 100) / 100 : null,
        workerRssMb: workersRssMb(),
        temporalRssMb: rssMb(temporalPid),
        cores: cpus().length,
        benchSeconds: Math.round(performance.now() / 1000),
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }

    const cronTimes = upcomingFireTimes(schedule, new Date(Date.now() - MINUTE), 2).map((time) =>
      time.getTime(),
    );
    const interval = cronTimes[1] - cronTimes[0];
    const windowMs = Math.min(config().scheduleSpreadSeconds * 1000, interval);
    // The fires planned in the first `--observe-seconds` of the window: with the spread even, the
    // same load as the whole window, for a bench that must end in minutes.
    const observedMs = Math.min(windowMs, (options.observeSeconds ?? Infinity) * 1000);
    // The cycle observed: the first cron time whose observed part is still mostly ahead.
    const cronTime =
      options.schedule === 'every15'
        ? nextFireTime(schedule, new Date(Date.now() - observedMs / 2)).getTime()
        : nextFireTime(schedule, new Date(Date.now() + 5000)).getTime();
    say(
      `observing the fires of ${new Date(cronTime).toISOString()} in the first ${observedMs / 1000} s of the ${windowMs / 1000} s spread after it`,
    );
    const observed = await observeCronTime(schedule, cronTime, observedMs, true);
    const busyWorkerRssMb = workersRssMb();

    // Idle means nothing due: only after the whole window, when it leaves a gap before the next cycle.
    const idleGap = observedMs === windowMs && windowMs + options.idleSeconds * 1000 < interval;
    let idle: Awaited<ReturnType<typeof measureQuiet>> | undefined;
    if (idleGap) {
      say(`measuring ${options.idleSeconds} s of idle (nothing due until the next cycle)`);
      idle = await measureQuiet(options.idleSeconds);
    } else {
      say('no idle to measure: fires are spread over the rest of the cycle');
    }

    say('asking every installation for its fires');
    const fires = await collectFires(created, schedule, cronTime, windowMs, observedMs);
    // Each later cycle: the same part of the next cron time's window, every installation due again.
    const laterCycles = [];
    for (let cycle = 1; cycle < options.cycles; cycle++) {
      const at = cronTime + cycle * interval;
      say(`cycle ${cycle + 1}: observing the fires of ${new Date(at).toISOString()}`);
      const seen = await observeCronTime(schedule, at, observedMs);
      const cycleFires = await collectFires(created, schedule, at, windowMs, observedMs);
      laterCycles.push({
        cronTime: new Date(at).toISOString(),
        ...firesFigures(cycleFires, seen),
        latenessParts: await latenessPartsOfSample(cycleFires),
        ...(await tailOf(cycleFires)),
        busyCpuPct: seen.busy,
        workerRssPeakMb: seen.peakWorkerRss,
        temporalRssPeakMb: seen.peakTemporalRss,
      });
      say(`cycle ${cycle + 1}: ${JSON.stringify(laterCycles.at(-1))}`);
    }
    const operations = await transaction((em) => em.count(OperationEntity, { actionType: 'read' }));
    // Scale-out: each worker's share of the reads, and the fires planned after one was killed.
    const victim = workers.at(-1)!;
    const scaleOut =
      workers.length > 1
        ? {
            workers: workers.length,
            apiProcesses: options.apiProcesses,
            scheduledReadsByWorker: await Promise.all(
              workers.map((worker) =>
                worker.killedAt === undefined ? scheduledReadsOf(worker) : worker.readsBeforeKill,
              ),
            ),
            ...(victim.killedAt !== undefined && {
              killedWorkerAfterSeconds: Math.round((victim.killedAt - cronTime) / 1000),
              ...afterKill(fires.latenessByPlanned, victim.killedAt),
            }),
          }
        : { workers: 1, apiProcesses: options.apiProcesses };

    const createSeconds = creation.seconds;
    const result = {
      created: created.size,
      failed: creation.failures.length,
      connectSeconds: Math.round(connectSeconds * 10) / 10,
      createSeconds: Math.round(createSeconds * 10) / 10,
      createPerSec: Math.round((created.size / createSeconds) * 10) / 10,
      createP50Ms: Math.round(percentile(creation.latencies, 50)),
      createP99Ms: Math.round(percentile(creation.latencies, 99)),
      objectsPerInstallation: OBJECTS.length,
      read: options.read,
      schedule,
      cronTime: new Date(cronTime).toISOString(),
      scheduleSpreadSeconds: windowMs / 1000,
      observedSeconds: observedMs / 1000,
      firesPerSecond: Math.round((fires.fires / (observedMs / 1000)) * 10) / 10,
      ...firesFigures(fires, observed),
      latenessParts: await latenessPartsOfSample(fires),
      ...(await tailOf(fires)),
      readOperations: operations,
      deliveries: receiver.received(),
      idleServerOpsPerSec: idle ? idle.serverOpsPerSec : null,
      workerRssMb: workersRssMb(),
      workerRssBusyMb: busyWorkerRssMb,
      workerRssPeakMb: observed.peakWorkerRss,
      temporalRssMb: rssMb(temporalPid),
      temporalRssPeakMb: observed.peakTemporalRss,
      apiRssMb: Math.round(process.memoryUsage().rss / 1024 / 1024),
      busyCpuPct: observed.busy,
      idleCpuPct: idle ? idle.cpu.total : null,
      idleCpu: idle?.cpu ?? null,
      idleSeconds: idle ? options.idleSeconds : 0,
      ...restFigures,
      maxCachedWorkflows: options.maxCached,
      workerHeapMb: options.workerHeapMb,
      cores: cpus().length,
      cycles: options.cycles,
      scaleOut,
      ...(laterCycles.length && {
        laterCycles,
        missingFiresAllCycles:
          fires.missing + laterCycles.reduce((sum, cycle) => sum + cycle.missingFires, 0),
      }),
      // From this process's start to this line; stopping every process takes seconds more.
      benchSeconds: Math.round(performance.now() / 1000),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await Promise.all(
      [...workers.map((worker) => worker.child), ...apiProcesses].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.removeAllListeners('exit');
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(15_000)]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }),
    );
    if (sandbox && sandbox.exitCode === null) {
      sandbox.removeAllListeners('exit');
      sandbox.kill('SIGTERM');
    }
    receiver.server.closeAllConnections();
    receiver.server.close();
    await servers.close();
    const { closeTemporalClient } = await import('../src/temporal/client.js');
    await closeTemporalClient();
    await closeOrm();
    await temporal.stop();
    reaper.close();
  }
}
