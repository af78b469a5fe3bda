import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * A Ferry worker in a process of its own, so a test can SIGKILL it mid-read and start another.
 * Run directly (`node --import tsx test/support/worker-process.ts`) it is that worker: the
 * environment says where PostgreSQL and Temporal are, and FERRY_TASK_QUEUE which queue to serve.
 */

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  /** Resolves once the worker polls its task queue. */
  ready: Promise<void>;
  exited: Promise<number | null>;
  /** The child's stderr so far, for failure messages. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

const thisFile = fileURLToPath(import.meta.url);

export function startWorkerProcess(env: Record<string, string | undefined>): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', thisFile], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('worker ready')) resolve();
    });
    void exited.then((code) =>
      reject(new Error(`the worker process exited (${code}) before it was ready:\n${stderr}`)),
    );
  });
  return {
    pid: child.pid!,
    child,
    ready,
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
  process.stdout.write('worker ready\n');
  process.once('SIGTERM', () => worker.shutdown());
  await worker.run();
  process.exit(0);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runWorker().catch((error: Error) => {
    process.stderr.write(`worker process failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  });
}
