import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

/**
 * `ferry start` never joins a server it did not start: with Temporal's port taken it stops, naming
 * the port and the setting that moves it, instead of silently using whatever answers there.
 */
let taken: Server;
let port: number;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

describe('ferry start', () => {
  it('refuses a taken Temporal port, naming it, and exits 1', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, FERRY_TEMPORAL_PORT: String(port) };
    delete env.TEMPORAL_ADDRESS;
    const run = spawnSync(process.execPath, ['bin/ferry.js', 'start'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`port ${port} is already in use; set FERRY_TEMPORAL_PORT to another port`);
    expect(run.stderr).toContain('TEMPORAL_ADDRESS');
    expect(run.stdout).not.toContain('Ferry is running');
  });
});

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port: free } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return free;
}

interface Started {
  banner: string;
  stderr: string;
  stop(): Promise<number | null>;
}

/**
 * `ferry start` with nothing at DATABASE_URL, so it falls back to the embedded PostgreSQL, every port
 * moved off its default and its data under `dataDir`; resolves once the banner is printed.
 */
async function startFerry(dataDir: string, user?: { uid: number; gid: number }): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dataDir,
    DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/ferry`,
    FERRY_DATA_DIR: dataDir,
    FERRY_EMBEDDED_POSTGRES_PORT: String(await freePort()),
    FERRY_TEMPORAL_PORT: String(await freePort()),
    FERRY_TEMPORAL_UI_PORT: String(await freePort()),
    FERRY_SANDBOX_URL: `http://127.0.0.1:${await freePort()}`,
    FERRY_API_PORT: '0',
    FERRY_READ_PORT: '0',
    FERRY_WRITE_PORT: '0',
    FERRY_SEARCH_PORT: '0',
    FERRY_PROXY_PORT: '0',
    FERRY_MCP_PORT: '0',
    FERRY_METRICS_PORT: String(await freePort()),
    FERRY_ENV: 'development',
    LOG_LEVEL: 'warn',
    // Another cluster's settings, as an operator's shell may hold them: the dev server started here
    // speaks plaintext, so they must not reach its connections (a missing CA file would stop them).
    TEMPORAL_API_KEY: 'someone-elses-cloud-key',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dataDir, 'no-such-ca.pem'),
  };
  delete env.TEMPORAL_ADDRESS;
  delete env.FERRY_TASK_QUEUE;
  delete env.NODE_ENV;
  // A process group of its own, as a terminal gives it: Ctrl-C reaches every process in it.
  const child = spawn(process.execPath, ['bin/ferry.js', 'start'], { env, ...user, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (stdout.includes('Ctrl-C stops everything')) {
        clearInterval(timer);
        resolve();
      }
    }, 200);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`ferry start exited ${code} before its banner:\n${stderr.slice(-3000)}`));
    });
  });
  return {
    banner: stdout,
    get stderr() {
      return stderr;
    },
    /** Ctrl-C: 0, or 130 when embedded-postgres's own exit hook (which stops its server) ends the process first. */
    async stop() {
      process.kill(-child.pid!, 'SIGINT');
      const code = await exited;
      // Done when the whole group is: the Temporal dev server must let go of its database file.
      for (let tries = 0; tries < 100; tries++) {
        try {
          process.kill(-child.pid!, 0);
        } catch {
          return code;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('processes ferry start had started were still running 10 s after it exited');
    },
  };
}

/** The banner's API key answers on its api URL, from the embedded database. */
async function expectWorking(banner: string): Promise<void> {
  expect(banner).toMatch(/database\s+postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/ferry/);
  // npm start turns private-network destinations on for development, and says so.
  expect(banner).toMatch(/private-network destinations are ALLOWED \(FERRY_ALLOW_PRIVATE_DESTINATIONS=true/);
  const api = /api\s+(http:\/\/\S+\/v1)/.exec(banner)![1];
  const key = /^\s*API key\s+(\S+)/m.exec(banner)![1];
  const response = await fetch(`${api}/projects/development/integrations`, { headers: { 'x-api-key': key } });
  expect(response.status).toBe(200);
  // The MCP listener answers too: a session that names no integration or group is refused, saying so.
  const mcp = /mcp\s+(http:\/\/\S+\/v1\/mcp)/.exec(banner)![1];
  const initialize = await fetch(`${mcp}?project=development`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'start', version: '1' },
      },
    }),
  });
  expect(initialize.status).toBe(400);
  expect(((await initialize.json()) as any).issues.map((issue: any) => issue.name)).toEqual([
    'integration',
    'groupRef',
  ]);
}

const root = process.getuid?.() === 0;
const nobody = (() => {
  if (!root) return undefined;
  const uid = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  const user = { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  // The unprivileged user must be able to run Node from here at all.
  // An absolute path: a relative one resolves from the inherited working directory, whose parents an
  // unprivileged user may not be allowed to enter (a checkout under a mode-700 directory).
  const script = join(process.cwd(), 'bin', 'ferry.js');
  const probe = spawnSync(
    process.execPath,
    ['-e', `require("node:fs").accessSync(${JSON.stringify(script)})`],
    user,
  );
  return probe.status === 0 ? user : undefined;
})();

/** The first directory above the checkout that users other than its owner may not enter. */
const closedAncestor = (() => {
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    if (!(statSync(dir).mode & 0o001)) return dir;
    if (dir === dirname(dir)) return undefined;
  }
})();

function dataDirFor(owner?: { uid: number; gid: number }): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-start-'));
  // PostgreSQL runs as another user than root: the directory must let it through.
  chmodSync(dir, 0o755);
  if (owner) chownSync(dir, owner.uid, owner.gid);
  return dir;
}

describe('ferry start with no PostgreSQL server reachable', () => {
  // As root, PostgreSQL runs as the postgres user, which must reach the programs under node_modules.
  (root && closedAncestor ? it : it.skip)(
    'as root, in a checkout the postgres user cannot enter, stops naming the directory and what to do',
    async () => {
      const dataDir = dataDirFor();
      try {
        await expect(startFerry(dataDir)).rejects.toThrow(
          new RegExp(`cannot enter ${closedAncestor}.*where its programs are installed.*DATABASE_URL`, 's'),
        );
      } finally {
        rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 });
      }
    },
    120_000,
  );

  (root && closedAncestor ? it.skip : it)(
    `runs an embedded one as ${root ? 'root (as the postgres system user)' : 'the current user'}, and finds its data again on the next start`,
    async () => {
      const dataDir = dataDirFor();
      try {
        const first = await startFerry(dataDir);
        try {
          expect(first.stderr).toContain('initialising an embedded one');
          await expectWorking(first.banner);
        } finally {
          expect([0, 130]).toContain(await first.stop());
        }
        const pgVersion = statSync(join(dataDir, 'postgres', 'PG_VERSION'));
        if (root) expect(pgVersion.uid).not.toBe(0);
        const key = /^\s*API key\s+(\S+)/m.exec(first.banner)![1];

        const second = await startFerry(dataDir);
        try {
          expect(second.stderr).not.toContain('initialising');
          await expectWorking(second.banner);
          expect(/^\s*API key\s+(\S+)/m.exec(second.banner)![1]).toBe(key);
        } finally {
          expect([0, 130]).toContain(await second.stop());
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 });
      }
    },
    300_000,
  );

  (nobody ? it : it.skip)(
    'runs an embedded one as an unprivileged user (nobody)',
    async () => {
      const dataDir = dataDirFor(nobody);
      try {
        const started = await startFerry(dataDir, nobody);
        try {
          await expectWorking(started.banner);
        } finally {
          expect([0, 130]).toContain(await started.stop());
        }
        expect(statSync(join(dataDir, 'postgres', 'PG_VERSION')).uid).toBe(nobody!.uid);
      } finally {
        rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 });
      }
    },
    300_000,
  );

  it('names the setting when the embedded PostgreSQL port is taken', async () => {
    const dataDir = dataDirFor();
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/ferry`,
        FERRY_DATA_DIR: dataDir,
        FERRY_EMBEDDED_POSTGRES_PORT: String(port),
        FERRY_TEMPORAL_PORT: String(await freePort()),
      };
      delete env.TEMPORAL_ADDRESS;
      const run = spawnSync(process.execPath, ['bin/ferry.js', 'start'], {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`port ${port} is already in use; set FERRY_EMBEDDED_POSTGRES_PORT`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 });
    }
  });
});
