import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { options } from '../src/cli/options.js';
import { benchEnvironment } from './support/database.js';
import { startWorker } from './support/ferry-processes.js';
import { freePort } from './support/free-port.js';
import { startReaper } from './support/reaper.js';

/**
 * `npm run bench:worker-memory [-- --settle-seconds 15]`: what a worker holds at ready, before it
 * has run anything, in the ways it can be started. Each variant is a fresh `ferry worker` process on
 * one Temporal dev server and database; after it is ready and has settled, the bench reads its
 * `/proc` status (VmRSS, RssAnon: the process's own memory, RssFile: mapped files such as node
 * and the Temporal core library) and its `/metrics` (V8 heap used and total). Variants:
 * - `bundledAtStart`: the workflow code bundled by a child process as the worker starts (the default);
 * - `prebuiltBundle`: FERRY_WORKFLOW_BUNDLE names a bundle built ahead (`ferry bundle-workflows`), as the image does;
 * - `prebuiltBundleArenas2`: the same with glibc's MALLOC_ARENA_MAX=2, as the image sets it;
 * - `installationsOnly`: the same serving only the `installations` concern (FERRY_WORKER_CONCERNS):
 *   each concern is a Temporal worker with its own workflow thread and V8 isolate.
 * Every process it starts is stopped when it ends, also when it is killed. The last line is JSON.
 */

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function procStatus(pid: number): Record<string, number> {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const fields: Record<string, number> = {};
  for (const name of ['VmRSS', 'RssAnon', 'RssFile']) {
    const match = new RegExp(`${name}:\\s+(\\d+)\\s+kB`).exec(text);
    if (match) fields[`${name}Mb`] = Math.round(Number(match[1]) / 1024);
  }
  return fields;
}

async function heapMb(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const value = (name: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
    return line ? Math.round(Number(line.slice(name.length + 1)) / 1048576) : -1;
  };
  return {
    heapUsedMb: value('ferry_nodejs_heap_size_used_bytes'),
    heapTotalMb: value('ferry_nodejs_heap_size_total_bytes'),
    externalMb: value('ferry_nodejs_external_memory_bytes'),
  };
}

export async function benchWorkerMemory(args: string[]): Promise<void> {
  const opts = options(args, { 'settle-seconds': { type: 'string' } });
  const settleMs = Number(opts['settle-seconds'] ?? 15) * 1000;
  const reaper = startReaper();
  const bench = benchEnvironment('ferry_bench_worker_memory');
  process.env.FERRY_TASK_QUEUE = `bench-${bench.runId}`;
  const bundleDir = mkdtempSync(join(tmpdir(), 'ferry-bench-bundle-'));
  const stops: (() => Promise<void>)[] = [() => bench.drop()];
  try {
    const { startDevServer } = await import('../src/temporal/dev-server.js');
    const temporal = await startDevServer({ port: await freePort() });
    reaper.watch(temporal.process.pid);
    stops.push(() => temporal.stop());
    process.env.TEMPORAL_ADDRESS = temporal.address;
    const { migrate, closeOrm } = await import('../src/db/orm.js');
    await migrate(bench.databaseUrl);
    await closeOrm();

    const bundle = join(bundleDir, 'workflow-bundle.js');
    const built = spawn(process.execPath, [join('bin', 'ferry.js'), 'bundle-workflows', '--out', bundle], {
      stdio: 'inherit',
    });
    await new Promise((resolve) => built.once('exit', resolve));

    const variants: Record<string, NodeJS.ProcessEnv> = {
      bundledAtStart: {},
      prebuiltBundle: { FERRY_WORKFLOW_BUNDLE: bundle },
      prebuiltBundleArenas2: { FERRY_WORKFLOW_BUNDLE: bundle, MALLOC_ARENA_MAX: '2' },
      installationsOnly: {
        FERRY_WORKFLOW_BUNDLE: bundle,
        MALLOC_ARENA_MAX: '2',
        FERRY_WORKER_CONCERNS: 'installations',
      },
    };
    const results: Record<string, unknown> = {};
    for (const [name, env] of Object.entries(variants)) {
      const metricsPort = await freePort();
      const started = performance.now();
      const worker = await startWorker(
        { ...process.env, ...env, FERRY_WORKER_METRICS_PORT: String(metricsPort) },
        [],
        { onSpawn: (pid) => reaper.watch(pid) },
      );
      const readySeconds = Math.round((performance.now() - started) / 100) / 10;
      await sleep(settleMs);
      results[name] = {
        readySeconds,
        ...procStatus(worker.child.pid!),
        ...(await heapMb(`http://127.0.0.1:${metricsPort}/metrics`)),
      };
      say(`${name}: ${JSON.stringify(results[name])}`);
      await worker.stop();
    }
    process.stdout.write(`${JSON.stringify({ settleSeconds: settleMs / 1000, ...results })}\n`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch((error) => say(`cleanup: ${String(error)}`));
    rmSync(bundleDir, { recursive: true, force: true });
    reaper.close();
  }
}
