import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { searchAttributeNames } from './search-attributes.js';
import { temporalCliPath } from './cli.js';

export interface DevServerOptions {
  port: number;
  uiPort?: number;
  /** SQLite file; in memory when omitted (tests). */
  dbFile?: string;
  namespace?: string;
  /** How long closed workflow runs are kept (the namespace's retention); the server's default when omitted. */
  retentionDays?: number;
  /** Serves the server's Prometheus metrics (persistence requests and more) on this port. */
  metricsPort?: number;
  /** Server settings (`--dynamic-config-value`), e.g. `history.cacheMaxSize` for many live workflows. */
  dynamicConfig?: Record<string, string | number | boolean>;
  log?: (line: string) => void;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

async function waitForServer(address: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the Temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`the Temporal dev server at ${address} did not become ready: ${String(lastError)}`);
}

/** Sets the namespace's retention: closed runs (histories, inputs such as a write's records) are deleted after it. */
export async function setRetention(address: string, namespace: string, days: number): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: 5000 });
  try {
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: msToTs(`${days} days`) },
    });
  } finally {
    await connection.close();
  }
}

/** Starts `temporal server start-dev` with Ferry's search attributes registered. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--log-level',
    'error',
  ];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort), '--ui-disable-news-fetch');
  else args.push('--headless');
  if (options.dbFile) {
    mkdirSync(dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  if (options.metricsPort) args.push('--metrics-port', String(options.metricsPort));
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  for (const name of searchAttributeNames) args.push('--search-attribute', `${name}=Keyword`);
  for (const [key, value] of Object.entries(options.dynamicConfig ?? {})) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  const child = spawn(temporalCliPath(options.log), args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: false,
  });
  // Whatever ends this process (another library's exit hook included) ends the server with it.
  const stopWithProcess = () => child.kill('SIGTERM');
  process.once('exit', stopWithProcess);
  child.once('exit', () => process.off('exit', stopWithProcess));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const address = `127.0.0.1:${options.port}`;
  try {
    await waitForServer(address, child, 60_000);
    if (options.retentionDays)
      await setRetention(address, options.namespace ?? 'default', options.retentionDays);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }
  return {
    address,
    uiUrl: options.uiPort ? `http://localhost:${options.uiPort}` : undefined,
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
