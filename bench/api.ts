import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setMaxListeners } from 'node:events';
import pg from 'pg';
import { Pool, request } from 'undici';
import { benchEnvironment } from './support/database.js';
import { cpuSeconds, machineBusySeconds, percentile, rssMb } from './support/measure.js';
import { options } from '../src/cli/options.js';
import { projectRoot } from '../src/config.js';

/**
 * `npm run bench:api -- [--rows 10000] [--seconds 3] [--slice-seconds 0.5] [--warm-seconds 1] [--grace-seconds 10] [--concurrency 1,10,50] [--only name,...] [--ferry-node-args "..."] [--bare-node-args "..."]`
 *
 * Seeds `rows` rows per table in one project of a fresh database (integrations with their revision,
 * groups, consumers and connections, installations with their config, and operations, all of one
 * installation so its list is a page of 200 out of `rows`), then starts Ferry's api listener and a
 * bare Koa + pg handler (bench/api-servers.ts), each in a process of its own, and measures every list
 * and get endpoint of integrations, installations, operations and connections on both at each
 * concurrency for `seconds` seconds each (gets cycle through 1,000 ids), after `warm-seconds` of the
 * same load on each that is not measured. The two take turns in slices of `slice-seconds`, so that
 * on a machine other work shares both see the same load; the CPU time each server process used per
 * request (/proc) is a figure that load disturbs far less than latency. The last line printed is
 * one JSON object: per endpoint and concurrency, p50/p99 latency (ms), requests/s and CPU ms per
 * request of Ferry and of the bare handler, the machine's busy share while each was loaded, the ratio
 * of their requests/s (`ratio`) and of their CPU per request (`cpuRatio`, bare ÷ Ferry), and the
 * load average at the end.
 */

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/** Every table the endpoints read, `rows` rows each, generated in SQL. */
export async function seed(db: pg.Client, PROJECT: string, rows: number): Promise<void> {
  await db.query(`
    create temporary table bench_rows as
      select g as n, gen_random_uuid() as integration_id, gen_random_uuid() as revision_id,
             gen_random_uuid() as group_id, gen_random_uuid() as consumer_id, gen_random_uuid() as connection_id,
             gen_random_uuid() as installation_id, gen_random_uuid() as config_id,
             now() - make_interval(secs => (${rows} - g)) as at
        from generate_series(1, ${rows}) g;
    insert into integrations (id, project_id, name, provider, latest_revision_id, create_time, update_time)
      select integration_id, '${PROJECT}', 'integration-' || n, 'sandboxApiKey', revision_id, at, at from bench_rows;
    insert into revisions (id, project_id, integration_id, spec_version, content, create_time)
      select revision_id, '${PROJECT}', integration_id, '1.0.0',
             jsonb_build_object('name', 'integration-' || n, 'provider', 'sandboxApiKey',
               'read', jsonb_build_object('objects', jsonb_build_array(
                 jsonb_build_object('objectName', 'contacts', 'destination', 'hooks', 'schedule', '*/30 * * * *',
                   'backfill', jsonb_build_object('defaultPeriod', jsonb_build_object('days', 30)),
                   'requiredFields', jsonb_build_array(jsonb_build_object('fieldName', 'email'),
                     jsonb_build_object('fieldName', 'firstname'), jsonb_build_object('fieldName', 'lastname'))),
                 jsonb_build_object('objectName', 'companies', 'destination', 'hooks', 'schedule', '0 * * * *',
                   'optionalFieldsAuto', 'all')))),
             at
        from bench_rows;
    insert into groups (id, project_id, group_ref, group_name, create_time, update_time)
      select group_id, '${PROJECT}', 'group-' || n, 'Group ' || n, at, at from bench_rows;
    insert into consumers (id, project_id, consumer_ref, consumer_name, create_time, update_time)
      select consumer_id, '${PROJECT}', 'user-' || n, 'User ' || n, at, at from bench_rows;
    insert into connections (id, project_id, provider, group_id, consumer_id, auth_scheme, status,
                             credentials_encrypted, create_time, update_time)
      select connection_id, '${PROJECT}', 'sandboxApiKey', group_id, consumer_id, 'apiKey', 'working', 'sealed', at, at
        from bench_rows;
    insert into installations (id, project_id, integration_id, group_id, connection_id, config_id, created_by,
                               create_time, update_time)
      select installation_id, '${PROJECT}', integration_id, group_id, connection_id, config_id, 'bench', at, at
        from bench_rows;
    insert into installation_configs (id, project_id, installation_id, revision_id, content, created_by, create_time)
      select config_id, '${PROJECT}', installation_id, revision_id,
             jsonb_build_object('provider', 'sandboxApiKey', 'read', jsonb_build_object('objects', jsonb_build_object(
               'contacts', jsonb_build_object('objectName', 'contacts', 'schedule', '*/30 * * * *',
                 'destination', 'hooks', 'selectedFields', jsonb_build_object('email', true, 'phone', true),
                 'selectedFieldsAuto', 'all')))),
             'bench', at
        from bench_rows;
    insert into operations (id, project_id, integration_id, installation_id, config_id, action_type, status, result,
                            metadata, create_time, update_time)
      select gen_random_uuid(), '${PROJECT}', r.integration_id, r.installation_id, r.config_id, 'read', 'success',
             'Read 20 contacts in 1 page.',
             jsonb_build_object('objects', jsonb_build_array('contacts'), 'readType', 'scheduled',
               'window', jsonb_build_object('since', b.at - interval '30 minutes', 'until', b.at),
               'destination', 'hooks', 'progress', jsonb_build_object('objectName', 'contacts', 'recordsProcessed', 20)),
             b.at, b.at + interval '2 seconds'
        from bench_rows b, (select * from bench_rows where n = 1) r
       order by b.at;
  `);
  await db.query('vacuum analyze');
}

interface Cell {
  p50: number;
  p99: number;
  rps: number;
  requests: number;
  /** Answers other than 200. */
  errors: number;
  /** Those answers by status, and the first one's body, to tell what they were. */
  errorStatuses?: Record<string, number>;
  firstErrorBody?: string;
  /** CPU time of the server process (all its threads) per answered request, from /proc. */
  cpuMsPerRequest?: number;
  /** Body bytes per answered request: both sides should answer the same JSON. */
  bytesPerResponse: number;
  /** The server process's largest resident memory seen while it was loaded (sampled every 100 ms). */
  peakRssMb?: number;
  /** Ferry: gets by key per statement to PostgreSQL over the cell (`ferry_db_read_batch_size`). */
  getsPerStatement?: number;
  timeouts?: number;
  censored?: boolean;
  /**
   * Busy share of the machine's cores over the cell (every process: the load generator, the server
   * and PostgreSQL): near 1, the machine itself is what limits throughput and latency.
   */
  machineBusyShare?: number;
}

/** What one server answered over the slices of a cell. */
class Tally {
  latencies: number[] = [];
  errors = 0;
  errorStatuses: Record<string, number> = {};
  firstErrorBody: string | undefined;
  timeouts = 0;
  seconds = 0;
  bytes = 0;
  cpu: number | undefined = 0;
  machineCpu = 0;
  peakRss: number | undefined;
  getsPerStatement: number | undefined;

  cell(): Cell {
    const latencies = this.latencies.sort((a, b) => a - b);
    const round = (ms: number) => Number(ms.toFixed(1));
    return {
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      rps: Number((latencies.length / this.seconds).toFixed(1)),
      requests: latencies.length,
      errors: this.errors,
      ...(this.errors && { errorStatuses: this.errorStatuses, firstErrorBody: this.firstErrorBody }),
      bytesPerResponse: latencies.length ? Math.round(this.bytes / latencies.length) : 0,
      ...(this.cpu !== undefined &&
        latencies.length && { cpuMsPerRequest: Number((this.cpu / latencies.length).toFixed(3)) }),
      ...(this.timeouts && { timeouts: this.timeouts, censored: true }),
      ...(this.peakRss !== undefined && { peakRssMb: this.peakRss }),
      ...(this.getsPerStatement !== undefined && {
        getsPerStatement: Number(this.getsPerStatement.toFixed(1)),
      }),
      machineBusyShare: Number((this.machineCpu / (this.seconds * cpus().length)).toFixed(3)),
    };
  }
}

/**
 * `concurrency` clients, each sending its next request when its last one is answered, for `seconds`,
 * tallied into `tally` (with the server's CPU time over the slice). Requests still unanswered
 * `graceSeconds` after that are aborted and counted as `timeouts` (their latency is then unknown, so
 * p99 is a lower bound: `censored`).
 */
async function load(
  pool: Pool,
  server: ServerChild,
  apiKey: string,
  paths: () => string,
  concurrency: number,
  seconds: number,
  graceSeconds: number,
  tally: Tally,
): Promise<void> {
  const cpuBefore = cpuSeconds(server.pid);
  const machineBefore = machineBusySeconds();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const abort = new AbortController();
  setMaxListeners(concurrency + 10, abort.signal);
  const timer = setTimeout(() => abort.abort(), (seconds + graceSeconds) * 1000);
  const sampleRss = () => {
    const rss = rssMb(server.pid);
    if (rss !== undefined) tally.peakRss = Math.max(tally.peakRss ?? 0, rss);
  };
  const rssSampler = setInterval(sampleRss, 100);
  const client = async () => {
    while (performance.now() < deadline && !abort.signal.aborted) {
      const sent = performance.now();
      try {
        const response = await pool.request({
          method: 'GET',
          path: paths(),
          headers: { 'x-api-key': apiKey },
          signal: abort.signal,
        });
        // Read to the end: a list of 10,000 rows is megabytes, and dump() would cut it short.
        let text = '';
        for await (const chunk of response.body) {
          tally.bytes += (chunk as Buffer).length;
          if (response.statusCode !== 200 && text.length < 2000) text += String(chunk);
        }
        if (response.statusCode !== 200) {
          tally.errors++;
          tally.errorStatuses[response.statusCode] = (tally.errorStatuses[response.statusCode] ?? 0) + 1;
          tally.firstErrorBody ??= text.slice(0, 500);
        }
        tally.latencies.push(performance.now() - sent);
      } catch (error) {
        if (!abort.signal.aborted) throw error;
        tally.timeouts++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  clearTimeout(timer);
  clearInterval(rssSampler);
  sampleRss();
  tally.seconds += (performance.now() - started) / 1000;
  tally.machineCpu += machineBusySeconds() - machineBefore;
  const cpuAfter = cpuSeconds(server.pid);
  tally.cpu =
    tally.cpu === undefined || cpuBefore === undefined || cpuAfter === undefined
      ? undefined
      : tally.cpu + (cpuAfter - cpuBefore) * 1000;
}

/**
 * One cell: Ferry and the bare handler in alternating slices of `slice` seconds, `seconds` in all
 * each, so that both see the same share of a machine other work is loading too.
 */
async function measure(
  servers: { ferry: ServerChild; bare: ServerChild },
  apiKey: string,
  paths: () => () => string,
  concurrency: number,
  seconds: number,
  slice: number,
  graceSeconds: number,
  warmSeconds: number,
): Promise<{ ferry: Cell; bare: Cell }> {
  const pools = {
    ferry: new Pool(servers.ferry.origin, { connections: concurrency, keepAliveTimeout: 60_000 }),
    bare: new Pool(servers.bare.origin, { connections: concurrency, keepAliveTimeout: 60_000 }),
  };
  const tallies = { ferry: new Tally(), bare: new Tally() };
  const path = { ferry: paths(), bare: paths() };
  /** One side loaded for `forSeconds` into `tally`; a server left with aborted requests settles first. */
  const run = async (side: 'ferry' | 'bare', forSeconds: number, tally: Tally) => {
    const timeoutsBefore = tally.timeouts;
    const [pool, server] = [pools[side], servers[side]];
    await load(pool, server, apiKey, path[side], concurrency, forSeconds, graceSeconds, tally);
    if (tally.timeouts > timeoutsBefore) await settle(server.origin);
  };
  try {
    // Unmeasured, at the cell's concurrency: a cell measures a server that has its connections open
    // (HTTP and PostgreSQL) and its code compiled for this load, not the first burst of it.
    for (const side of ['ferry', 'bare'] as const) await run(side, warmSeconds, new Tally());
    const batchesBefore = await servers.ferry.batchSizes?.();
    const slices = Math.max(1, Math.round(seconds / slice));
    for (let index = 0; index < slices; index++) {
      // Who goes first alternates too: neither always follows the other's backlog.
      const order = index % 2 ? (['bare', 'ferry'] as const) : (['ferry', 'bare'] as const);
      for (const side of order) await run(side, seconds / slices, tallies[side]);
    }
    const batchesAfter = await servers.ferry.batchSizes?.();
    if (batchesBefore && batchesAfter && batchesAfter.statements > batchesBefore.statements) {
      tallies.ferry.getsPerStatement =
        (batchesAfter.gets - batchesBefore.gets) / (batchesAfter.statements - batchesBefore.statements);
    }
  } finally {
    await Promise.all([pools.ferry.destroy(), pools.bare.destroy()]);
  }
  return { ferry: tallies.ferry.cell(), bare: tallies.bare.cell() };
}

/**
 * After a cell whose requests were aborted, the server may still be working on them: wait until it
 * answers a trivial request quickly three times in a row (at most two minutes).
 */
async function settle(origin: string): Promise<void> {
  const until = Date.now() + 120_000;
  let quick = 0;
  while (quick < 3 && Date.now() < until) {
    const sent = performance.now();
    const response = await request(`${origin}/v1/health`).catch(() => undefined);
    await response?.body.dump();
    quick = performance.now() - sent < 20 ? quick + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type BatchSizes = { statements: number; gets: number };

interface ServerChild {
  origin: string;
  pid?: number;
  /** Ferry's gets by key and the statements that read them, so far. */
  batchSizes?(): Promise<BatchSizes>;
  stop(): Promise<void>;
}

async function startServer(kind: 'ferry' | 'bare', nodeArgs: string[]): Promise<ServerChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', join(projectRoot, 'bench', 'api-servers.ts'), kind],
    // The IPC channel closes when this process dies, however it dies: the server then exits.
    { env: process.env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /\{"port":(\d+)\}/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    });
    child.once('exit', (code) => reject(new Error(`the ${kind} server exited (${code}):\n${output}`)));
  });
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  child.stdout!.removeAllListeners('data');
  child.stdout!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid,
    ...(kind === 'ferry' && {
      batchSizes: () =>
        new Promise((resolve) => {
          child.once('message', (message) => resolve((message as { batchSizes: BatchSizes }).batchSizes));
          child.send('batch-sizes');
        }),
    }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function benchApi(args: string[]): Promise<void> {
  const opts = options(args, {
    rows: { type: 'string' },
    seconds: { type: 'string' },
    'grace-seconds': { type: 'string' },
    'slice-seconds': { type: 'string' },
    'warm-seconds': { type: 'string' },
    concurrency: { type: 'string' },
    only: { type: 'string' },
    'ferry-node-args': { type: 'string' },
    'bare-node-args': { type: 'string' },
  });
  const rows = Number(opts.rows ?? 10_000);
  const seconds = Number(opts.seconds ?? 3);
  const graceSeconds = Number(opts['grace-seconds'] ?? 10);
  const slice = Number(opts['slice-seconds'] ?? 0.5);
  const warmSeconds = Number(opts['warm-seconds'] ?? 1);
  const concurrencies = String(opts.concurrency ?? '1,10,50')
    .split(',')
    .map(Number);
  if (!Number.isInteger(rows) || rows < 1) throw new Error('--rows must be a positive integer');
  if (!(seconds > 0) || !(graceSeconds >= 0) || !(slice > 0) || !(warmSeconds >= 0))
    throw new Error('--seconds, --slice-seconds, --warm-seconds and --grace-seconds must be positive');
  if (concurrencies.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error('--concurrency must list positive integers');
  const nodeArgs = (name: 'ferry-node-args' | 'bare-node-args') =>
    opts[name] ? String(opts[name]).split(' ') : [];

  const bench = benchEnvironment('ferry_bench_api', { LOG_LEVEL: 'warn' });
  const stops: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of stops.reverse()) await stop().catch((error) => say(`cleanup: ${String(error)}`));
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    say(`${signal}: stopping`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const { resetConfig } = await import('../src/config.js');
    resetConfig();
    const { migrate, transaction } = await import('../src/db/orm.js');
    await migrate(bench.databaseUrl);
    stops.push(() => bench.drop());

    const { createApiKey, createOrg, createProject } = await import('../src/domain/projects.js');
    const { projectId, apiKey } = await transaction(async (em) => {
      const org = await createOrg(em, 'bench');
      const project = await createProject(em, { name: 'bench-api', orgId: org.id });
      return { projectId: project.id, apiKey: createApiKey(em, project.id, { label: 'bench' }).key };
    });
    const db = new pg.Client({ connectionString: bench.databaseUrl });
    await db.connect();
    say(`seeding ${rows.toLocaleString('en-US')} rows per table`);
    await seed(db, projectId, rows);
    const sample = async (sql: string) => (await db.query(sql)).rows as Record<string, string>[];
    const integrations = await sample(`select id from integrations order by random() limit 1000`);
    const installations = await sample(
      `select id, integration_id from installations order by random() limit 1000`,
    );
    const operations = await sample(`select id from operations order by random() limit 1000`);
    const connections = await sample(`select id from connections order by random() limit 1000`);
    const [hot] = await sample(`select installation_id, integration_id from operations limit 1`);
    await db.end();

    const cycle = (ids: Record<string, string>[], path: (row: Record<string, string>) => string) => {
      let next = 0;
      return () => path(ids[next++ % ids.length]);
    };
    const base = `/v1/projects/${projectId}`;
    const endpoints: Record<string, () => () => string> = {
      listIntegrations: () => () => `${base}/integrations`,
      getIntegration: () => cycle(integrations, (row) => `${base}/integrations/${row.id}`),
      listInstallations: () => () => `${base}/installations`,
      getInstallation: () =>
        cycle(installations, (row) => `${base}/integrations/${row.integration_id}/installations/${row.id}`),
      listOperations: () => () =>
        `${base}/integrations/${hot.integration_id}/installations/${hot.installation_id}/operations`,
      getOperation: () => cycle(operations, (row) => `${base}/operations/${row.id}`),
      listConnections: () => () => `${base}/connections`,
      getConnection: () => cycle(connections, (row) => `${base}/connections/${row.id}`),
    };
    const only = opts.only ? String(opts.only).split(',') : Object.keys(endpoints);

    const ferry = await startServer('ferry', nodeArgs('ferry-node-args'));
    stops.push(() => ferry.stop());
    const bare = await startServer('bare', nodeArgs('bare-node-args'));
    stops.push(() => bare.stop());

    const results: Record<
      string,
      Record<string, { ferry: Cell; bare: Cell; ratio: number; cpuRatio?: number }>
    > = {};
    for (const name of only) {
      if (!endpoints[name])
        throw new Error(`unknown endpoint ${name}; known: ${Object.keys(endpoints).join(', ')}`);
      results[name] = {};
      for (const concurrency of concurrencies) {
        const cell = await measure(
          { ferry, bare },
          apiKey,
          endpoints[name],
          concurrency,
          seconds,
          slice,
          graceSeconds,
          warmSeconds,
        );
        const ratio = Number((cell.ferry.rps / cell.bare.rps).toFixed(3));
        const cpuRatio =
          cell.ferry.cpuMsPerRequest && cell.bare.cpuMsPerRequest
            ? Number((cell.bare.cpuMsPerRequest / cell.ferry.cpuMsPerRequest).toFixed(3))
            : undefined;
        results[name][String(concurrency)] = { ...cell, ratio, ...(cpuRatio && { cpuRatio }) };
        const describe = (c: Cell) =>
          `p50 ${c.p50} p99 ${c.p99} ms ${c.rps}/s cpu ${c.cpuMsPerRequest ?? '?'} ms/req` +
          `${c.getsPerStatement ? ` ${c.getsPerStatement} gets/statement` : ''}` +
          `${c.errors ? ` (${c.errors} errors)` : ''}${c.timeouts ? ` (${c.timeouts} timeouts)` : ''}`;
        say(
          `${name} ×${concurrency}: ferry ${describe(cell.ferry)}; bare ${describe(cell.bare)}; ratio ${ratio}` +
            ` cpu ratio ${cpuRatio ?? '?'}`,
        );
      }
    }
    await stopAll();
    process.stdout.write(
      `${JSON.stringify({ rows, seconds, slice, warmSeconds, graceSeconds, load: loadavg(), results })}\n`,
    );
  } catch (error) {
    await stopAll();
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
