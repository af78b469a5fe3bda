/**
 * `npm run bench:soak -- [--minutes 30] [--kill-every-seconds 240] [--rate 2] [--burst-every-seconds 30]
 *   [--burst-records 12] [--no-edges] [--edge-lead-ms 1500] [--commit-lag-ms 1500]
 *   [--catch-up-seconds 300] [--max-live 150]`
 *
 * A fidelity soak: do Ferry's scheduled reads deliver every change a provider shows them, while the
 * provider stamps in whole seconds, commits late, and the worker is killed now and then?
 *
 * It starts its own stack (a fresh PostgreSQL database, a Temporal dev server, the sandbox provider in a
 * process of its own with realism on: `--precision second --commit-lag-ms 1500`, Ferry's API in this
 * process, the worker (`ferry worker`) in a child process), a webhook receiver in this process as the
 * destination, and one installation reading contacts, companies and deals every minute (`* * * * *`).
 * Then, for `--minutes`, it writes to the sandbox's API directly:
 * - creates, updates and deletes, `--rate` a second on average;
 * - every `--burst-every-seconds`, a same-second burst: within one whole second, `--burst-records`
 *   records each changed two or three times, created and changed, changed and deleted;
 * - at each read's start (the installation's `describe` query says when the next is due), an edge
 *   burst: three records at a time of the read's object written without pause from `--edge-lead-ms`
 *   before until a second after, so that the read lists while writes stamped in one second are
 *   still to commit after writes stamped in the next (the sandbox's lag is random): the edge of the
 *   window, where an overlap too short loses changes. With Ferry's overlap set to 0 this soak loses
 *   changes within minutes; `--no-edges` leaves edge bursts out.
 * Every `--kill-every-seconds` it SIGKILLs the worker and starts another; every other kill lands in the
 * middle of a delivery (the receiver takes the message, the worker dies before the answer). Then it
 * stops writing and waits (at most `--catch-up-seconds`) until a read of each object has run after the
 * last write committed, and compares what was written with what the receiver got.
 *
 * What "every change" means here (bench/soak-ledger.ts applies it):
 * - A version is the state one write left a record in. Every create and update sets a marker field
 *   (contacts' `jobTitle`, companies' `industry`, deals' `name`) to `soak-<seq>`, unique to the write;
 *   a delete's version is the deletion.
 * - A read delivers what the provider lists, not its history: when a record changes twice between two
 *   reads, the first version may never be listed, and need not arrive. A version is **required** when it
 *   stood through the whole of at least one successful read of its object: committed (its write
 *   answered, plus the commit lag) before the read began (the end of its window, the instant it was
 *   planned at and before it fetched a page, or its operation's start if earlier), stamped before the end of that
 *   read's window, and not replaced (the record's next write not yet sent) when the read's operation
 *   ended. A required version that never arrives is **lost**. So no update that a read could see whole
 *   is lost, however many changes share its second.
 * - A record's last version (its final state, or its deletion) is required once a read ran after it
 *   committed, and must also be the last version the destination received of the record (a wrong
 *   final state fails the run like a loss). Every deletion is its record's last version: all must
 *   arrive.
 * - A **duplicate** is a version received again. Under the `webhook-id` of its first delivery it is a
 *   redelivery (after a kill) that a receiver deduplicating on that id drops: counted, allowed. Under
 *   another message id it is the same change delivered twice: counted, and it fails the run.
 *
 * Every process it starts is stopped when it ends, also when it is killed (bench/support/reaper.ts); the
 * worker's logs stay in the directory it names. The last line printed is one JSON object with the
 * figures; the exit code is 1 when anything was lost, a final state is wrong or a change arrived twice
 * under two message ids.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEnvironment } from './support/database.js';
import { freePort } from './support/free-port.js';
import { startReaper } from './support/reaper.js';
import {
  caughtUp,
  fidelity,
  type DeliveredEntry,
  type ReadSpan,
  type WriteKind,
  type WrittenVersion,
} from './soak-ledger.js';
import { options } from '../src/cli/options.js';
import { projectRoot } from '../src/config.js';
import { startSandboxProcess } from './support/sandbox-process.js';

const OBJECTS = ['contacts', 'companies', 'deals'] as const;
type SoakObject = (typeof OBJECTS)[number];
/** The field each object's writes mark their version in. */
const MARKER: Record<SoakObject, string> = { contacts: 'jobTitle', companies: 'industry', deals: 'name' };
const SCHEDULE = '* * * * *';
const DESTINATION = 'soak';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function say(line: string): void {
  process.stderr.write(`soak ${new Date().toISOString().slice(11, 19)}: ${line}\n`);
}

interface SoakOptions {
  minutes: number;
  killEverySeconds: number;
  rate: number;
  burstEverySeconds: number;
  burstRecords: number;
  commitLagMs: number;
  catchUpSeconds: number;
  maxLive: number;
  /** Edge bursts on: writes straddling each read's start. */
  edges: boolean;
  edgeLeadMs: number;
}

function parseSoakOptions(args: string[]): SoakOptions {
  const values = options(args, {
    minutes: { type: 'string' },
    'kill-every-seconds': { type: 'string' },
    rate: { type: 'string' },
    'burst-every-seconds': { type: 'string' },
    'burst-records': { type: 'string' },
    'commit-lag-ms': { type: 'string' },
    'catch-up-seconds': { type: 'string' },
    'max-live': { type: 'string' },
    'no-edges': { type: 'boolean' },
    'edge-lead-ms': { type: 'string' },
  });
  const parsed: SoakOptions = {
    minutes: Number(values.minutes ?? 30),
    killEverySeconds: Number(values['kill-every-seconds'] ?? 240),
    rate: Number(values.rate ?? 2),
    burstEverySeconds: Number(values['burst-every-seconds'] ?? 30),
    burstRecords: Number(values['burst-records'] ?? 12),
    commitLagMs: Number(values['commit-lag-ms'] ?? 1500),
    catchUpSeconds: Number(values['catch-up-seconds'] ?? 300),
    maxLive: Number(values['max-live'] ?? 150),
    edges: !values['no-edges'],
    edgeLeadMs: Number(values['edge-lead-ms'] ?? 1500),
  };
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === 'number' && (!Number.isFinite(value) || value < 0))
      throw new Error(`--${name} takes a non-negative number`);
  }
  if (parsed.minutes <= 0 || parsed.rate <= 0) throw new Error('--minutes and --rate must be above 0');
  if (parsed.commitLagMs > 2000)
    throw new Error('--commit-lag-ms is at most 2000 (the sandbox declares 2 s)');
  return parsed;
}

/** The sandbox provider in a process of its own, with realism on; its errors shown. */
async function startRealisticSandbox(port: number, commitLagMs: number): Promise<ChildProcess> {
  const child = await startSandboxProcess([
    '--port',
    String(port),
    '--contacts',
    '100',
    '--precision',
    'second',
    '--commit-lag-ms',
    String(commitLagMs),
  ]);
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(`sandbox: ${chunk.toString()}`));
  return child;
}

/** `ferry worker` processes, one at a time: started, killed with SIGKILL, started again. */
class Workers {
  private child: ChildProcess | undefined;
  private generation = 0;
  private log: WriteStream;
  kills = 0;
  /** Exits the bench did not cause. */
  crashes = 0;
  readyMs: number[] = [];
  private stopping = false;

  constructor(
    private readonly logDir: string,
    private readonly watch: (pid: number | undefined) => void,
  ) {
    this.log = createWriteStream(join(logDir, 'worker.log'), { flags: 'a' });
  }

  async start(): Promise<void> {
    const generation = ++this.generation;
    const started = Date.now();
    const child = spawn(process.execPath, [join(projectRoot, 'bin', 'ferry.js'), 'worker'], {
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.watch(child.pid);
    this.child = child;
    this.log.write(`--- worker ${generation} (pid ${child.pid}) at ${new Date().toISOString()}\n`);
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the worker was not ready within 180 s')), 180_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        this.log.write(chunk);
        if (seen !== 'ready') {
          seen = (seen + chunk.toString()).slice(-4000);
          if (seen.includes('"msg":"worker ready"')) {
            seen = 'ready';
            clearTimeout(timer);
            resolve();
          }
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (this.child === child && !this.stopping && signal !== 'SIGKILL') {
          this.crashes++;
          say(`worker ${generation} exited by itself (${code ?? signal}); starting another`);
          void this.start().catch((error: Error) => say(`restarting the worker failed: ${error.message}`));
        }
        reject(new Error(`the worker exited (${code ?? signal}) before it was ready`));
      });
    });
    this.readyMs.push(Date.now() - started);
  }

  /** SIGKILL, as a machine that dies would; then a new worker. */
  async killAndRestart(why: string): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    this.kills++;
    this.log.write(`--- killed (SIGKILL, ${why}) at ${new Date().toISOString()}\n`);
    await exited;
    say(`killed worker ${this.generation} (${why}); starting another`);
    await this.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await new Promise((resolve) => this.log.end(resolve));
  }
}

/** The destination: keeps every read entry it receives, with the message id, and answers 200. */
async function startReceiver(onMessage: () => Promise<void>) {
  const entries: DeliveredEntry[] = [];
  let messages = 0;
  const handle = async (request: IncomingMessage): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as {
      action?: string;
      objectName?: string;
      operationId?: string;
      result?: { id?: string; deleted?: boolean; raw?: Record<string, unknown> }[];
    };
    if (body.action !== 'read') return;
    messages++;
    const messageId = String(request.headers['webhook-id']);
    const object = body.objectName as SoakObject;
    const receivedAt = Date.now();
    for (const entry of body.result ?? []) {
      const deleted = entry.deleted === true;
      entries.push({
        object,
        id: String(deleted ? entry.id : entry.raw?.id),
        marker: deleted ? 'deleted' : String(entry.raw?.[MARKER[object]]),
        messageId,
        operationId: String(body.operationId),
        receivedAt,
      });
    }
    // Taken, and perhaps the worker dies now, before it hears the answer.
    await onMessage();
  };
  const server = createServer((request, response) => {
    handle(request).then(
      () => response.writeHead(200).end(),
      (error: Error) => {
        say(`receiver: ${error.message}`);
        response.writeHead(400).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/soak`,
    entries,
    messages: () => messages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every write of the soak, whoever made it: one sequence of markers, one list of versions. */
class WriteLog {
  readonly versions: WrittenVersion[] = [];
  seq = 0;
  lastAnsweredAt = 0;
}

/**
 * Writes to the sandbox's API, into the log. Each writer changes only records it created itself, so
 * two writers never change one record at once and each record's versions are in order.
 */
class Writer {
  private readonly live = new Map<SoakObject, string[]>(OBJECTS.map((object) => [object, []]));
  bursts = 0;
  /** Burst writes that shared their burst's second (as stamped). */
  burstWritesInOneSecond = 0;
  burstWrites = 0;
  /** Edge bursts: writes straddling a read's start. */
  edges = 0;

  constructor(
    private readonly sandboxUrl: string,
    private readonly log: WriteLog,
  ) {}

  private values(object: SoakObject, marker: string): Record<string, unknown> {
    const n = this.log.seq;
    if (object === 'contacts')
      return { jobTitle: marker, firstName: `First${n % 97}`, email: `soak${n}@example.com` };
    if (object === 'companies') return { industry: marker, name: `Soak ${n}`, employees: n % 500 };
    return { name: marker, amount: n % 10_000 };
  }

  private async call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.sandboxUrl}/api/v1/${path}`, {
      method,
      headers: { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.ok) return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    // Writes are not retried (one might have happened): a failure stops the soak.
    throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  }

  async write(object: SoakObject, kind: WriteKind, id?: string): Promise<WrittenVersion> {
    const seq = ++this.log.seq;
    const marker = kind === 'delete' ? 'deleted' : `soak-${seq}`;
    const sentAt = Date.now();
    let answer: Record<string, unknown>;
    if (kind === 'create') answer = await this.call('POST', object, this.values(object, marker));
    else if (kind === 'update') {
      const { email: _email, ...changes } = this.values(object, marker);
      answer = await this.call('PATCH', `${object}/${id}`, changes);
    } else answer = await this.call('DELETE', `${object}/${id}`);
    const answeredAt = Date.now();
    this.log.lastAnsweredAt = Math.max(this.log.lastAnsweredAt, answeredAt);
    const recordId = kind === 'create' ? String(answer.id) : id!;
    // A deletion answers 204 without a body; the sandbox stamps it in the second of the write, at
    // the latest the second of the answer.
    const stamp =
      kind === 'delete'
        ? new Date(Math.floor(answeredAt / 1000) * 1000).toISOString()
        : String(answer.updatedAt);
    const version = { object, id: recordId, kind, marker, sentAt, answeredAt, stamp };
    this.log.versions.push(version);
    const live = this.live.get(object)!;
    if (kind === 'create') live.push(recordId);
    if (kind === 'delete') live.splice(live.indexOf(recordId), 1);
    return version;
  }

  private pick(object: SoakObject, taken: Set<string>): string | undefined {
    const candidates = this.live.get(object)!.filter((id) => !taken.has(id));
    return candidates[Math.floor(Math.random() * candidates.length)];
  }

  /** One random write: creates while few records live, otherwise mostly updates, some deletes. */
  async randomWrite(maxLive: number): Promise<void> {
    const object = OBJECTS[Math.floor(Math.random() * OBJECTS.length)];
    const live = this.live.get(object)!.length;
    const roll = Math.random();
    const kind: WriteKind =
      live < 10 || (roll < 0.3 && live < maxLive) ? 'create' : roll < 0.85 ? 'update' : 'delete';
    await this.write(object, kind, kind === 'create' ? undefined : this.pick(object, new Set()));
  }

  /**
   * Many changes to many records within one second: each record's own chain of writes in order
   * (changed twice or three times, created and changed, changed and deleted, created, changed and
   * deleted), the chains at once.
   */
  async burst(records: number): Promise<void> {
    // Early in a second, so that the burst fits in it.
    await sleep(1000 - (Date.now() % 1000) + 20);
    const second = Math.floor(Date.now() / 1000);
    const taken = new Set<string>();
    const chains: (() => Promise<WrittenVersion[]>)[] = [];
    for (let i = 0; i < records; i++) {
      const object = OBJECTS[i % OBJECTS.length];
      const shape = Math.floor(Math.random() * 5);
      const existing = shape <= 2 ? this.pick(object, taken) : undefined;
      if (existing) taken.add(existing);
      chains.push(async () => {
        const made: WrittenVersion[] = [];
        if (existing) {
          made.push(await this.write(object, 'update', existing));
          made.push(await this.write(object, 'update', existing));
          if (shape === 1) made.push(await this.write(object, 'update', existing));
          if (shape === 2) made.push(await this.write(object, 'delete', existing));
        } else {
          const created = await this.write(object, 'create');
          made.push(created);
          made.push(await this.write(object, 'update', created.id));
          if (shape === 4) made.push(await this.write(object, 'delete', created.id));
        }
        return made;
      });
    }
    const made = (await Promise.all(chains.map((chain) => chain()))).flat();
    this.bursts++;
    this.burstWrites += made.length;
    this.burstWritesInOneSecond += made.filter(
      (version) => Math.floor(Date.parse(version.stamp) / 1000) === second,
    ).length;
  }

  /**
   * Writes to `object` without pause from now until `until`, `chains` records at a time: straddling
   * a read's start, across a second's edge, so that writes stamped in one second commit after
   * writes stamped in the next (the commit lag is random), while the read lists.
   */
  async edge(object: SoakObject, until: number, chains: number, maxLive: number): Promise<number> {
    const taken = new Set<string>();
    let writes = 0;
    await Promise.all(
      Array.from({ length: chains }, async () => {
        while (Date.now() < until) {
          const live = this.live.get(object)!.length;
          const roll = Math.random();
          const id = this.pick(object, taken);
          if (!id || live < 5 || (roll < 0.2 && live < maxLive)) {
            await this.write(object, 'create');
          } else {
            taken.add(id);
            await this.write(object, roll < 0.9 ? 'update' : 'delete', id);
            taken.delete(id);
          }
          writes++;
          await sleep(20 + Math.random() * 60);
        }
      }),
    );
    this.edges++;
    return writes;
  }
}

export async function benchSoak(args: string[]): Promise<void> {
  const opts = parseSoakOptions(args);
  const benchStarted = Date.now();
  const reaper = startReaper();
  const bench = benchEnvironment('ferry_soak', {
    FERRY_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // Every minute, which the default config does not allow.
    FERRY_MIN_SCHEDULE_INTERVAL_SECONDS: '60',
    FERRY_SCHEDULE_SPREAD_SECONDS: '30',
    FERRY_WORKER_METRICS_PORT: '0',
    FERRY_METRICS_PORT: '0',
  });
  process.env.FERRY_TASK_QUEUE = `soak-${bench.runId}`;
  const logDir = join(tmpdir(), `ferry-soak-${bench.runId}`);
  mkdirSync(logDir, { recursive: true });
  say(`worker logs in ${logDir}`);

  const stops: (() => Promise<void>)[] = [];
  let failed = false;
  try {
    const { startDevServer } = await import('../src/temporal/dev-server.js');
    say('starting a Temporal dev server');
    const temporal = await startDevServer({ port: await freePort(), log: say });
    reaper.watch(temporal.process.pid);
    process.env.TEMPORAL_ADDRESS = temporal.address;
    stops.push(() => temporal.stop());

    const { resetConfig } = await import('../src/config.js');
    const sandboxPort = await freePort();
    process.env.FERRY_SANDBOX_URL = `http://127.0.0.1:${sandboxPort}`;
    resetConfig();
    const { ensureDatabase, migrate, transaction } = await import('../src/db/orm.js');
    await ensureDatabase(bench.databaseUrl);
    await migrate(bench.databaseUrl);
    stops.push(() => bench.drop());

    const sandbox = await startRealisticSandbox(sandboxPort, opts.commitLagMs);
    reaper.watch(sandbox.pid);
    stops.push(async () => {
      if (sandbox.exitCode !== null) return;
      const exited = new Promise((resolve) => sandbox.once('exit', resolve));
      sandbox.kill('SIGTERM');
      await exited;
    });

    // Kills due mid-delivery are done by the receiver, on the next message it takes.
    let killOnDelivery: (() => void) | undefined;
    const receiver = await startReceiver(async () => {
      const kill = killOnDelivery;
      if (!kill) return;
      killOnDelivery = undefined;
      await workers.killAndRestart('mid-delivery').catch((error: Error) => say(error.message));
      kill();
    });
    stops.push(() => receiver.close());

    const { startServers } = await import('../src/api/server.js');
    const { closeTemporalClient } = await import('../src/temporal/client.js');
    const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
    stops.push(async () => {
      await servers.close();
      await closeTemporalClient();
    });

    const workers = new Workers(logDir, (pid) => reaper.watch(pid));
    say('starting the worker');
    await workers.start();
    stops.push(() => workers.stop());

    const { createApiKey, createOrg, createProject } = await import('../src/domain/projects.js');
    const project = await transaction(async (em) => {
      const org = await createOrg(em, 'soak');
      const created = await createProject(em, {
        name: `soak-${bench.runId}`.replace(/_/g, '-'),
        orgId: org.id,
      });
      return { id: created.id, apiKey: createApiKey(em, created.id, { label: 'soak' }).key };
    });
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${servers.urls.api}/projects/${project.id}${path}`, {
        method,
        headers: { 'x-api-key': project.apiKey, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
      return (text ? JSON.parse(text) : undefined) as Record<string, any>;
    };
    await api('POST', '/destinations', {
      name: DESTINATION,
      type: 'webhook',
      metadata: { url: receiver.url },
    });
    await api('POST', '/integrations', {
      name: 'soak',
      provider: 'sandboxApiKey',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name: 'soak',
          provider: 'sandboxApiKey',
          read: {
            objects: OBJECTS.map((objectName) => ({
              objectName,
              destination: DESTINATION,
              schedule: SCHEDULE,
              optionalFieldsAuto: 'all',
            })),
          },
        },
      },
    });
    await api('POST', '/connections:generate', {
      provider: 'sandboxApiKey',
      groupRef: 'soak',
      consumerRef: 'soak-admin',
      apiKey: 'sandbox-demo-key',
    });
    const installation = await api('POST', '/integrations/soak/installations', {
      groupRef: 'soak',
      config: {
        content: {
          provider: 'sandboxApiKey',
          read: {
            objects: Object.fromEntries(
              OBJECTS.map((objectName) => [
                objectName,
                {
                  objectName,
                  schedule: SCHEDULE,
                  destination: DESTINATION,
                  selectedFields: {},
                  selectedFieldsAuto: 'all',
                },
              ]),
            ),
          },
        },
      },
    });
    const installationId = installation.id as string;
    say(`installation ${installationId}: ${OBJECTS.join(', ')} on ${SCHEDULE}`);

    /** Every read of the installation so far, oldest first. */
    const listReads = async (): Promise<ReadSpan[]> => {
      const spans: ReadSpan[] = [];
      let pageToken: string | undefined;
      do {
        const page = await api(
          'GET',
          `/integrations/soak/installations/${installationId}/operations?pageSize=1000${
            pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''
          }`,
        );
        for (const operation of page.results as Record<string, any>[]) {
          if (operation.actionType !== 'read') continue;
          const metadata = operation.metadata as Record<string, any>;
          spans.push({
            object: (metadata.objects as string[] | undefined)?.[0] ?? '',
            operationId: operation.id as string,
            readType: String(metadata.readType),
            status: operation.status,
            startedAt: Date.parse(operation.createTime as string),
            endedAt: Date.parse(operation.updateTime as string),
            until: Date.parse(
              (metadata.window as { until?: string } | undefined)?.until ?? operation.createTime,
            ),
          });
        }
        pageToken = page.pagination.done ? undefined : (page.pagination.nextPageToken as string | undefined);
      } while (pageToken);
      return spans.sort((a, b) => a.startedAt - b.startedAt);
    };

    // The soak: writes, bursts, kills.
    const log = new WriteLog();
    const writer = new Writer(process.env.FERRY_SANDBOX_URL, log);
    const edgeWriter = new Writer(process.env.FERRY_SANDBOX_URL, log);
    const { describeInstallation } = await import('../src/temporal/gateway.js');
    const soakStarted = Date.now();
    const soakEnds = soakStarted + opts.minutes * 60_000;
    say(
      `soaking for ${opts.minutes} min: ${opts.rate} writes/s, a burst every ${opts.burstEverySeconds} s, a kill every ${opts.killEverySeconds} s`,
    );
    const writing = (async () => {
      let nextBurst = Date.now() + opts.burstEverySeconds * 1000;
      let lastReport = Date.now();
      while (Date.now() < soakEnds) {
        if (opts.burstEverySeconds > 0 && Date.now() >= nextBurst) {
          await writer.burst(opts.burstRecords);
          nextBurst = Date.now() + opts.burstEverySeconds * 1000;
        } else {
          await writer.randomWrite(opts.maxLive);
        }
        // Exponential gaps: writes at `rate` a second on average, some close together.
        await sleep(Math.min(10_000, (-Math.log(1 - Math.random()) * 1000) / opts.rate));
        if (Date.now() - lastReport > 60_000) {
          lastReport = Date.now();
          say(
            `${log.versions.length} writes (${writer.bursts} bursts, ${edgeWriter.edges} edges), ${receiver.entries.length} entries received, ${workers.kills} kills`,
          );
        }
      }
    })();
    // Edge bursts: the next read's start, from the installation's own schedule (its `describe` query),
    // straddled by writes to its object from `--edge-lead-ms` before until a second after.
    const edging = (async () => {
      if (!opts.edges) return;
      while (Date.now() < soakEnds) {
        let fires: { object: SoakObject; at: number }[] = [];
        try {
          const view = await describeInstallation(installationId, { deadlineMs: 10_000 });
          fires = view.objects
            .filter((object) => object.nextFireAt && !object.paused)
            .map((object) => ({
              object: object.objectName as SoakObject,
              at: Date.parse(object.nextFireAt!),
            }))
            .filter((fire) => fire.at - Date.now() > opts.edgeLeadMs + 500)
            .sort((a, b) => a.at - b.at);
        } catch {
          // The worker answers queries: not while it restarts.
        }
        const first = fires[0];
        if (!first || first.at + 1000 > soakEnds) {
          await sleep(5000);
          continue;
        }
        // An installation's objects fire in the same second: each is straddled at once.
        await sleep(first.at - opts.edgeLeadMs - Date.now());
        await Promise.all(
          fires
            .filter((fire) => fire.at - first.at < 1000)
            .map((fire) => edgeWriter.edge(fire.object, fire.at + 1000, 3, opts.maxLive)),
        );
      }
    })();
    const killing = (async () => {
      if (opts.killEverySeconds <= 0) return;
      for (let kill = 0; ; kill++) {
        // Somewhere in the second half of the period, so that kills fall at any point of a read's minute.
        const wait = opts.killEverySeconds * 1000 * (0.5 + Math.random() * 0.5);
        if (Date.now() + wait >= soakEnds) return;
        await sleep(wait);
        if (kill % 2 === 0) {
          // The next delivery: the receiver takes it and the worker dies before hearing back.
          const delivered = new Promise<boolean>((resolve) => (killOnDelivery = () => resolve(true)));
          if (!(await Promise.race([delivered, sleep(120_000).then(() => false)]))) {
            killOnDelivery = undefined;
            if (Date.now() >= soakEnds) return;
            await workers.killAndRestart('no delivery within 120 s; at once');
          }
        } else {
          await workers.killAndRestart('at a random moment');
        }
      }
    })();
    await Promise.all([writing, edging, killing]);
    const soakSeconds = (Date.now() - soakStarted) / 1000;

    // Catch-up: until a read of each object ran after the last write committed (bounded).
    const caughtUpFrom = log.lastAnsweredAt + opts.commitLagMs;
    const catchUpStarted = Date.now();
    say(`stopped writing; waiting up to ${opts.catchUpSeconds} s for the reads to catch up`);
    let reads = await listReads();
    while (
      !caughtUp(reads, OBJECTS, caughtUpFrom) &&
      Date.now() - catchUpStarted < opts.catchUpSeconds * 1000
    ) {
      await sleep(5000);
      reads = await listReads();
    }
    const readsCaughtUp = caughtUp(reads, OBJECTS, caughtUpFrom);
    // The last deliveries of those reads are answered before their operations end; a moment for stragglers.
    await sleep(2000);
    reads = await listReads();
    const catchUpSeconds = (Date.now() - catchUpStarted) / 1000;

    // Everything the verdict is made of, to check it again: every version, read and entry.
    writeFileSync(
      join(logDir, 'ledger.json'),
      JSON.stringify({
        versions: log.versions,
        reads,
        entries: receiver.entries,
        commitLagMs: opts.commitLagMs,
      }),
    );
    const verdict = fidelity(log.versions, reads, receiver.entries, opts.commitLagMs);
    const scheduled = reads.filter((read) => read.readType === 'scheduled');
    failed =
      !readsCaughtUp ||
      verdict.lost > 0 ||
      verdict.finalStatesWrong > 0 ||
      verdict.duplicatesNewMessageId > 0;
    const { lostVersions, finalStatesWrongRecords, duplicatesNewMessageIdExamples, ...figures } = verdict;
    if (lostVersions.length) say(`lost: ${JSON.stringify(lostVersions)}`);
    if (finalStatesWrongRecords.length) say(`wrong final states: ${finalStatesWrongRecords.join(', ')}`);
    if (duplicatesNewMessageIdExamples.length)
      say(`delivered twice under two message ids: ${duplicatesNewMessageIdExamples.join('; ')}`);
    const result = {
      ok: !failed,
      minutes: opts.minutes,
      ...figures,
      messagesReceived: receiver.messages(),
      bursts: writer.bursts,
      burstWrites: writer.burstWrites,
      burstWritesInTheirSecond: writer.burstWritesInOneSecond,
      edgeBursts: edgeWriter.edges,
      kills: workers.kills,
      workerCrashes: workers.crashes,
      workerReadyP50Ms: [...workers.readyMs].sort((a, b) => a - b)[Math.floor(workers.readyMs.length / 2)],
      reads: scheduled.filter((read) => read.status === 'success').length,
      readsFailed: reads.filter((read) => read.status === 'failure').length,
      readsInProgress: reads.filter((read) => read.status === 'in_progress').length,
      readsCaughtUp,
      readSecondsP50: (() => {
        const spans = scheduled.map((read) => (read.endedAt - read.startedAt) / 1000).sort((a, b) => a - b);
        return spans.length ? spans[Math.floor(spans.length / 2)] : 0;
      })(),
      commitLagMs: opts.commitLagMs,
      precision: 'second',
      schedule: SCHEDULE,
      soakSeconds: Math.round(soakSeconds),
      catchUpSeconds: Math.round(catchUpSeconds),
      benchSeconds: Math.round((Date.now() - benchStarted) / 1000),
      workerLog: join(logDir, 'worker.log'),
      ledger: join(logDir, 'ledger.json'),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    failed = true;
    say(`failed: ${(error as Error).stack ?? String(error)}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch((error) => say(`cleanup: ${String(error)}`));
    reaper.close();
  }
  process.exitCode = failed ? 1 : 0;
}
