import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  ListShardsCommand,
} from '@aws-sdk/client-kinesis';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { freePort } from './killable-services.js';

/**
 * moto (PyPI `moto[server]`) in server mode: S3, SQS and Kinesis answering the real AWS protocols
 * on a port of the test's own. `.ci/run` installs the pinned version into `.tools/venv`; elsewhere
 * the tests say how. Every server a test starts is stopped when the test process exits, even when
 * the test failed before its own `stop`.
 */
export const MOTO_VERSION = '5.2.5';
export const motoServerPath = join(process.cwd(), '.tools', 'venv', 'bin', 'moto_server');
export const motoInstalled = existsSync(motoServerPath);

/** Credentials moto accepts (it checks none); real-looking so a leak into a log would be found. */
export const MOTO_CREDENTIALS = {
  awsKeyId: 'AKIAFERRYTESTKEY0001',
  awsSecretKey: 'ferry-test-secret/DO-NOT-LOG+0123456789abcdef',
};
export const MOTO_REGION = 'us-east-1';

export interface MotoServer {
  /** `http://127.0.0.1:<port>`: the endpointUrl destinations use. */
  endpoint: string;
  port: number;
  /** Clears every bucket, queue and stream (moto's reset API). */
  reset(): Promise<void>;
  /** SIGKILLs the server; `start` on the same port brings an empty one back (moto keeps state in memory). */
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Fails (in CI) or warns (elsewhere) when moto is missing, rather than passing silently. */
export function requireMoto(): void {
  if (process.env.CI) throw new Error(`moto is missing at ${motoServerPath}; .ci/run installs it`);
  console.warn(`moto tests skipped: .tools/venv/bin/pip install 'moto[server]==${MOTO_VERSION}'`);
}

/** Whether moto's tests run: `motoAvailable() ? describe : describe.skip` (a missing moto fails in CI). */
export function motoAvailable(): boolean {
  if (!motoInstalled) requireMoto();
  return motoInstalled;
}

export interface MotoClients {
  s3: S3Client;
  sqs: SQSClient;
  kinesis: KinesisClient;
  destroy(): void;
}

/** The AWS SDK's own clients on moto, for creating buckets, queues and streams and reading what landed. */
export function motoClients(endpoint: string): MotoClients {
  const config = {
    region: MOTO_REGION,
    endpoint,
    credentials: { accessKeyId: MOTO_CREDENTIALS.awsKeyId, secretAccessKey: MOTO_CREDENTIALS.awsSecretKey },
  };
  const clients = {
    s3: new S3Client({ ...config, forcePathStyle: true }),
    sqs: new SQSClient(config),
    // Kinesis's client speaks HTTP/2 by default, which moto's plain HTTP endpoint does not.
    kinesis: new KinesisClient({ ...config, requestHandler: new NodeHttpHandler() }),
  };
  return { ...clients, destroy: () => Object.values(clients).forEach((client) => client.destroy()) };
}

/** The records on a one-shard stream from its start (one GetRecords call: what a test puts fits). */
export async function streamRecords(kinesis: KinesisClient, streamName: string) {
  const shards = await kinesis.send(new ListShardsCommand({ StreamName: streamName }));
  const iterator = await kinesis.send(
    new GetShardIteratorCommand({
      StreamName: streamName,
      ShardId: shards.Shards![0].ShardId!,
      ShardIteratorType: 'TRIM_HORIZON',
    }),
  );
  const got = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator.ShardIterator! }));
  return got.Records ?? [];
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    // The server runs in a process group of its own, so nothing it started outlives it.
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntilServing(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`moto_server exited (${child.exitCode ?? child.signalCode}): ${output()}`);
    try {
      const response = await fetch(`${endpoint}/moto-api/`);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`moto_server did not answer within 30 s: ${output()}`);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** `onSpawn` hears each server process's pid (a bench's reaper stops it should the bench die). */
export async function startMoto(
  port?: number,
  onSpawn?: (pid: number | undefined) => void,
): Promise<MotoServer> {
  const chosen = port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${chosen}`;
  let child: ChildProcess | undefined;

  const launch = async () => {
    let output = '';
    const started = spawn(motoServerPath, ['-H', '127.0.0.1', '-p', String(chosen)], {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    running.add(started);
    onSpawn?.(started.pid);
    started.once('exit', () => running.delete(started));
    // Keep only the end of the server's chatter, for a failure message.
    started.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child = started;
    try {
      await waitUntilServing(endpoint, started, () => output);
    } catch (error) {
      killGroup(started, 'SIGKILL');
      await exited(started);
      throw error;
    }
  };

  const halt = async (signal: NodeJS.Signals) => {
    if (!child) return;
    const stopping = child;
    const gone = exited(stopping);
    killGroup(stopping, signal);
    const timer = setTimeout(() => killGroup(stopping, 'SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
    child = undefined;
  };

  await launch();
  return {
    endpoint,
    port: chosen,
    reset: async () => {
      const response = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`moto reset answered ${response.status}`);
    },
    kill: () => halt('SIGKILL'),
    restart: launch,
    stop: () => halt('SIGTERM'),
  };
}
