import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * A Ferry worker (or API server) in a process of its own, so a test can SIGKILL it mid-work and
 * start another. Run directly (`node --import tsx test/support/worker-process.ts`) it is that
 * process: the environment says where PostgreSQL and Temporal are, FERRY_TASK_QUEUE which queue to
 * serve, and FERRY_TEST_PROCESS_ROLE=api makes it the API's listeners on free ports instead.
 */

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  /** Resolves once the worker polls its task queue (the API listens: with its URLs). */
  ready: Promise<void>;
  exited: Promise<number | null>;
  /** The child's stderr so far, for failure messages. */
  output(): string;
  /** Everything the child wrote to stdout. */
  stdout(): string;
  /** Every error (and fatal) log line the child wrote to stderr, whole. */
  errorLines(): string[];
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

const thisFile = fileURLToPath(import.meta.url);

export interface ApiProcess extends WorkerProcess {
  urls: Promise<Record<'api' | 'read' | 'write' | 'search' | 'proxy', string>>;
}

export function startWorkerProcess(env: Record<string, string | undefined>): WorkerProcess {
  return startProcess(env, 'worker');
}

export function startApiProcess(env: Record<string, string | undefined>): ApiProcess {
  const started = startProcess({ ...env, FERRY_TEST_PROCESS_ROLE: 'api' }, 'api');
  const urls = started.ready.then(() => JSON.parse(/api ready (.*)/.exec(started.stdout())![1]));
  return { ...started, urls };
}

function startProcess(env: Record<string, string | undefined>, role: 'worker' | 'api'): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', thisFile], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let partial = '';
  const errorLines: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    errorLines.push(...lines.filter((line) => /^\{"level":(50|60)/.test(line)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (/(worker|api) ready.*\n/.test(stdout)) resolve();
    });
    void exited.then((code) =>
      reject(new Error(`the ${role} process exited (${code}) before it was ready:\n${stderr}`)),
    );
  });
  return {
    pid: child.pid!,
    child,
    ready,
    stdout: () => stdout,
    errorLines: () => errorLines,
    exited,
    output: () => stderr,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

async function runWorker(): Promise<void> {
  const { createWorker } = await import('../../src/cli/worker.js');
  const worker = await createWorker({ workflowBundlePath: process.env.FERRY_TEST_WORKFLOW_BUNDLE });
  // FERRY_TEST_WORKER_REPAIR=1: a worker as `ferry worker` runs it, with its outbox relay and repair loop.
  const extras =
    process.env.FERRY_TEST_WORKER_REPAIR === '1'
      ? [
          (await import('../../src/notifications/outbox-relay.js')).startOutboxRelay(
            (await import('../../src/config.js')).config(),
          ),
          (await import('../../src/cli/repair-loop.js')).startRepairLoop(),
        ]
      : [];
  process.stdout.write('worker ready\n');
  process.once('SIGTERM', () => {
    void Promise.all(extras.map((extra) => extra.stop())).then(() => worker.shutdown());
  });
  await worker.run();
  process.exit(0);
}

async function runApi(): Promise<void> {
  const { startServers } = await import('../../src/api/server.js');
  const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
  process.stdout.write(`api ready ${JSON.stringify(servers.urls)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  (process.env.FERRY_TEST_PROCESS_ROLE === 'api' ? runApi() : runWorker()).catch((error: Error) => {
    process.stderr.write(`ferry process failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  });
}
