/**
 * `npm run bench:installations -- --count N`: how installation workflows scale.
 *
 * Starts its own stack (a fresh PostgreSQL database, a Temporal dev server, the API in this process,
 * the worker as a child process with the production worker settings), creates N installations through
 * the real API with bounded concurrency, each reading three objects on `--schedule` (by default every
 * five minutes, the most frequent schedule the default config allows), then measures:
 * - creation throughput and p50/p99 latency of `POST .../installations`;
 * - schedule lateness: for every scheduled read of the cron times in the observation window, workflow
 *   time at which the read started minus its planned fire (from the workflow's `describe` query), the
 *   same against the read's operation row, and the start minus the plain cron time (the spread
 *   included);
 * - CPU (percent of one core) of worker, Temporal and API while reads fire ("busy"), and once every
 *   installation is paused ("idle": N workflows waiting, nothing due);
 * - resident memory (VmRSS) of the worker and the Temporal server.
 * The read child is a stand-in that records its operation row and reads nothing (see
 * installation-workflows.ts). The last line printed is one JSON object with every figure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';

const MINUTE = 60_000;
const OBJECTS = ['contacts', 'companies', 'deals'];
const root = fileURLToPath(new URL('..', import.meta.url));

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function percentile(values: number[], p: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
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

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface CpuSample {
  worker: number;
  temporal: number;
  api: number;
  at: number;
}

function sampleCpu(workerPid: number, temporalPid: number): CpuSample {
  const api = process.cpuUsage();
  return {
    worker: cpuSeconds(workerPid),
    temporal: cpuSeconds(temporalPid),
    api: (api.user + api.system) / 1e6,
    at: performance.now(),
  };
}

/** Percent of one core each process used between two samples. */
function cpuPercent(from: CpuSample, to: CpuSample) {
  const seconds = (to.at - from.at) / 1000;
  const pct = (key: 'worker' | 'temporal' | 'api') =>
    Math.round(((to[key] - from[key]) / seconds) * 1000) / 10;
  const worker = pct('worker');
  const temporal = pct('temporal');
  const api = pct('api');
  return { worker, temporal, api, total: Math.round((worker + temporal + api) * 10) / 10 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The bench's worker process: the real installation workflow with the stand-in read, real activities. */
async function runWorker(): Promise<void> {
  const { createWorker } = await import('../src/cli/worker.js');
  const activities = await import('./installation-activities.js');
  const worker = await createWorker({
    overrides: {
      workflowsPath: fileURLToPath(new URL('./installation-workflows.ts', import.meta.url)),
      activities,
    },
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  process.stdout.write('worker ready\n');
  await running;
  const { closeOrm } = await import('../src/db/orm.js');
  await closeOrm();
}

function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(root, 'bin/ferry.js'), 'bench', 'installations', '--role', 'worker'],
    {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the bench worker exited with code ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('worker ready')) resolve(child);
    });
  });
}

async function freshDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database if exists "${name}" with (force)`);
  await client.end();
}

export async function benchInstallations(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      count: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '16' },
      'idle-seconds': { type: 'string', default: '60' },
      'observe-minutes': { type: 'string', default: '3' },
      schedule: { type: 'string', default: '*/5 * * * *' },
      role: { type: 'string' },
    },
    strict: true,
  });
  if (values.role === 'worker') return runWorker();
  const count = Number(values.count);
  const concurrency = Number(values.concurrency);
  const idleSeconds = Number(values['idle-seconds']);
  const observeMinutes = Number(values['observe-minutes']);
  const schedule = values.schedule;
  if (![count, concurrency, idleSeconds, observeMinutes].every((n) => Number.isInteger(n) && n > 0)) {
    throw new Error('--count, --concurrency, --idle-seconds and --observe-minutes take positive integers');
  }

  const databaseUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/ferry');
  databaseUrl.pathname = '/ferry_bench_installations';
  const { startDevServer } = await import('../src/temporal/dev-server.js');
  const { freePort } = await import('./free-port.js');
  say('starting a Temporal dev server');
  const temporal = await startDevServer({ port: await freePort(), log: say });
  const temporalPid = temporal.process.pid!;
  Object.assign(process.env, {
    FERRY_ENV: 'development',
    DATABASE_URL: databaseUrl.toString(),
    TEMPORAL_ADDRESS: temporal.address,
    FERRY_TASK_QUEUE: `bench-${randomUUID().slice(0, 8)}`,
    // The default schedule is the most frequent the default config allows; this admits `--schedule '* * * * *'`.
    FERRY_MIN_SCHEDULE_INTERVAL_SECONDS: '60',
    FERRY_ALLOW_PRIVATE_DESTINATIONS: 'true',
    FERRY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    FERRY_BUILDER_TOKEN_SECRET: randomBytes(32).toString('base64'),
    FERRY_DATA_DIR: join(root, '.data', 'bench'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  });
  const { resetConfig } = await import('../src/config.js');
  resetConfig();
  const { ensureDatabase, migrate, closeOrm, transaction } = await import('../src/db/orm.js');
  await freshDatabase(databaseUrl.toString());
  await ensureDatabase(databaseUrl.toString());
  await migrate(databaseUrl.toString());

  let worker: ChildProcess | undefined;
  const { startServers } = await import('../src/api/server.js');
  const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
  try {
    say('starting the worker');
    worker = await startWorkerProcess(process.env);
    const workerPid = worker.pid!;

    const { createApiKey, createOrg, createProject } = await import('../src/domain/projects.js');
    const project = await transaction(async (em) => {
      const org = await createOrg(em, 'bench');
      const created = await createProject(em, { name: 'bench', orgId: org.id });
      return { name: created.name, apiKey: createApiKey(em, created.id, { label: 'bench' }).key };
    });
    const call = async (host: 'api' | 'read', method: string, path: string, body?: unknown) => {
      const response = await fetch(`${servers.urls[host]}${path}`, {
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
      metadata: { url: 'http://127.0.0.1:9/hooks' },
    });
    const integration = await call('api', 'POST', `${base}/integrations`, {
      name: 'bench',
      provider: 'sandboxApiKey',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name: 'bench',
          provider: 'sandboxApiKey',
          read: {
            objects: OBJECTS.map((objectName) => ({
              objectName,
              destination: 'hooks',
              schedule,
            })),
          },
        },
      },
    });
    if (integration.status !== 201)
      throw new Error(`creating the integration failed: ${JSON.stringify(integration.body)}`);
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

    say(`connecting ${count} groups`);
    const groups = Array.from({ length: count }, (_, index) => `group-${index}`);
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

    say(`creating ${count} installations, ${concurrency} at a time`);
    const latencies: number[] = [];
    const installationIds: string[] = [];
    const failures: string[] = [];
    const createStarted = performance.now();
    await eachLimited(groups, concurrency, async (groupRef) => {
      const started = performance.now();
      const response = await call(
        'api',
        'POST',
        `${base}/integrations/${integration.body!.id}/installations`,
        {
          groupRef,
          config: { content },
        },
      );
      latencies.push(performance.now() - started);
      if (response.status === 201) installationIds.push(response.body!.id as string);
      else failures.push(`${response.status} ${response.body?.detail ?? ''}`);
    });
    const createSeconds = (performance.now() - createStarted) / 1000;
    say(
      `created ${installationIds.length} in ${createSeconds.toFixed(1)} s${failures.length ? `; failures: ${failures.slice(0, 3).join(' | ')}` : ''}`,
    );

    // Observe the fires of the cron times in a window that starts at the schedule's next cron time.
    // Each fire comes its installation's spread offset after its cron time (FERRY_SCHEDULE_SPREAD_SECONDS).
    const { nextFireTime, upcomingFireTimes } = await import('../src/core/cron.js');
    const { config } = await import('../src/config.js');
    const spreadMs = config().scheduleSpreadSeconds * 1000;
    const observeFrom = nextFireTime(schedule, new Date(Date.now() + 5000)).getTime();
    const observeUntil = observeFrom + observeMinutes * MINUTE;
    const cronTimes = upcomingFireTimes(schedule, new Date(observeFrom - 1), 10_000)
      .map((time) => time.getTime())
      .filter((time) => time < observeUntil);
    /** The cron time a planned fire belongs to: the latest one at or before it, within the spread. */
    const cronTimeOf = (plannedAt: number) =>
      cronTimes.findLast((time) => time <= plannedAt && plannedAt - time <= spreadMs);
    say(
      `observing ${cronTimes.length} cron time(s) per object from ${new Date(observeFrom).toISOString()}, each installation's fires up to ${spreadMs / 1000} s after them`,
    );
    await sleep(observeFrom - Date.now() + 1000);
    const busyFrom = sampleCpu(workerPid, temporalPid);
    const lastCronTime = cronTimes.at(-1)!;
    await sleep(Math.max(observeUntil, lastCronTime + spreadMs) - Date.now() + 10_000);
    const busy = cpuPercent(busyFrom, sampleCpu(workerPid, temporalPid));
    const busyWorkerRssMb = rssMb(workerPid);

    // Pause before asking the workflows, so that the questions do not queue behind the next fires.
    say('pausing every installation');
    await eachLimited(installationIds, concurrency, async (id) => {
      const response = await call(
        'read',
        'POST',
        `${base}/integrations/${integration.body!.id}/installations/${id}:pause`,
        {},
      );
      if (response.status !== 204) throw new Error(`pausing ${id} failed: ${response.status}`);
    });

    const { describeInstallation } = await import('../src/temporal/gateway.js');
    const fires: { operationId: string; cronTime: number; plannedAt: number; startedAt: number }[] = [];
    let unanswered = 0;
    await eachLimited(installationIds, 16, async (id) => {
      let view;
      try {
        view = await describeInstallation(id, { deadlineMs: 60_000 });
      } catch (error) {
        if (!unanswered++) say(`describe of ${id} failed: ${(error as Error).message}`);
        return;
      }
      for (const fire of view.recentFires) {
        const plannedAt = Date.parse(fire.plannedAt);
        const cronTime = cronTimeOf(plannedAt);
        if (fire.readType !== 'scheduled' || cronTime === undefined) continue;
        fires.push({
          operationId: fire.operationId,
          cronTime,
          plannedAt,
          startedAt: Date.parse(fire.startedAt),
        });
      }
    });
    const missingFires = Math.max(
      0,
      (installationIds.length - unanswered) * OBJECTS.length * cronTimes.length - fires.length,
    );
    const lateness = fires.map((fire) => fire.startedAt - fire.plannedAt);
    const afterCronTime = fires.map((fire) => fire.startedAt - fire.cronTime);
    // The stricter figure: when the read itself began (its operation row), not when it was decided.
    const { OperationEntity } = await import('../src/db/entities/operation.js');
    const readStarts = new Map(
      (
        await transaction((em) =>
          em.find(
            OperationEntity,
            { id: { $in: fires.map((fire) => fire.operationId) } },
            { fields: ['id', 'createTime'] },
          ),
        )
      ).map((operation) => [operation.id, operation.createTime.getTime()]),
    );
    const readStartLateness = fires
      .filter((fire) => readStarts.has(fire.operationId))
      .map((fire) => readStarts.get(fire.operationId)! - fire.plannedAt);
    const operations = await transaction((em) => em.count(OperationEntity, { actionType: 'read' }));

    say(`measuring ${idleSeconds} s of idle`);
    const idleFrom = sampleCpu(workerPid, temporalPid);
    await sleep(idleSeconds * 1000);
    const idle = cpuPercent(idleFrom, sampleCpu(workerPid, temporalPid));

    const result = {
      created: installationIds.length,
      failed: failures.length,
      createSeconds: Math.round(createSeconds * 10) / 10,
      createPerSec: Math.round((installationIds.length / createSeconds) * 10) / 10,
      createP50Ms: Math.round(percentile(latencies, 50)),
      createP99Ms: Math.round(percentile(latencies, 99)),
      objectsPerInstallation: OBJECTS.length,
      schedule,
      observedMinutes: observeMinutes,
      firesPerObject: cronTimes.length,
      scheduleSpreadSeconds: spreadMs / 1000,
      scheduledFires: lateness.length,
      missingFires,
      unansweredQueries: unanswered,
      readOperations: operations,
      scheduleLatenessP50Ms: Math.round(percentile(lateness, 50)),
      scheduleLatenessP99Ms: Math.round(percentile(lateness, 99)),
      scheduleLatenessMaxMs: Math.round(Math.max(0, ...lateness)),
      startAfterCronTimeP50Ms: Math.round(percentile(afterCronTime, 50)),
      startAfterCronTimeP99Ms: Math.round(percentile(afterCronTime, 99)),
      readStartLatenessP50Ms: Math.round(percentile(readStartLateness, 50)),
      readStartLatenessP99Ms: Math.round(percentile(readStartLateness, 99)),
      workerRssMb: rssMb(workerPid),
      workerRssBusyMb: busyWorkerRssMb,
      temporalRssMb: rssMb(temporalPid),
      apiRssMb: Math.round(process.memoryUsage().rss / 1024 / 1024),
      busyCpuPct: busy,
      idleCpuPct: idle.total,
      idleCpu: idle,
      idleSeconds,
      cores: cpus().length,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    if (worker && worker.exitCode === null) {
      worker.removeAllListeners('exit');
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      if (worker.exitCode === null) worker.kill('SIGKILL');
    }
    await servers.close();
    const { closeTemporalClient } = await import('../src/temporal/client.js');
    await closeTemporalClient();
    await closeOrm();
    await temporal.stop();
  }
}
