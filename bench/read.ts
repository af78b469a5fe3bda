import { Worker } from 'node:worker_threads';
import { cpus, loadavg } from 'node:os';
import { Agent, request } from 'undici';
import { benchEnvironment } from './support/database.js';
import { freePort } from './support/free-port.js';
import { cpuSeconds, machineBusySeconds, procStatusMb, resetPeakRss } from './support/measure.js';
import { options } from '../src/cli/options.js';
import { ferryShapedMessages, startSandbox, startWorker } from './support/ferry-processes.js';

/**
 * `npm run bench:read -- --records N [--page-size 500] [--no-quarter] [--rounds R] [--worker-heap-mb M]
 *   [--worker-cpu-prof DIR]`, or with `--destination <type>` bench/read-destinations.ts's comparison per type.
 *
 * Backfills N sandbox contacts to a local webhook receiver through Ferry (its own fresh database,
 * Temporal dev server, sandbox, api in this process, worker in a child process), and moves the same
 * records with a plain loop (fetch a page from the sandbox, POST it to the receiver: no database, no
 * Temporal) as the baseline, before and after each of R Ferry runs (default 1). Each run is compared
 * with the mean of the two baselines around it, and the figures are the median run's. Each run has
 * a fresh worker, whose ready and peak RSS are reported. Unless --no-quarter, one more Ferry run
 * with N/4 records shows whether the worker's memory grows with N. The last line printed is one
 * JSON object with the figures.
 *
 * The baseline loop delivers what Ferry delivers (COMPAT.md), made by Ferry's own message functions:
 * each record as `{fields, mappedFields, raw}` in the message envelope, messages under 300 KB, signed
 * the Standard Webhooks way, so `ratio` compares the cost of the pipeline (database, Temporal,
 * checkpoints), not of the message format. The receiver counts the bytes each
 * side delivered per record (`bytesPerRecord`), which should match. A second loop that POSTs the raw
 * records alone (`{result: [{raw}]}`, less than half the bytes, unsigned) runs beside it:
 * `ratioToRawLoop` is Ferry against that one.
 */

interface Counts {
  unique: number;
  total: number;
  /** Body bytes received. */
  bytes: number;
  firstAt?: number;
  /** Gaps of over 100 ms between two messages: how many, and their total. */
  pauses: { count: number; ms: number };
}

interface Receiver {
  url: string;
  /** Records received on a path: distinct record ids, and all of them (redeliveries included). */
  count(path: string): Promise<Counts>;
  /** Resolves with the time the path has `records` distinct records. */
  waitFor(path: string, records: number, timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/**
 * The receiver runs in a worker thread of its own, so parsing what it receives never competes with
 * the loop or the API for this thread. It counts records in read messages (`result[].raw.id`) per
 * path, once per record id, and answers 200 at once.
 */
const RECEIVER_SOURCE = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const seen = new Map();
const totals = new Map();
const firsts = new Map();
const lasts = new Map();
const pauses = new Map();
const bytes = new Map();
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const path = req.url || '/';
    const now = Date.now();
    if (!firsts.has(path)) firsts.set(path, now);
    const gap = lasts.has(path) ? now - lasts.get(path) : 0;
    if (gap > 100) {
      const p = pauses.get(path) || { count: 0, ms: 0 };
      pauses.set(path, { count: p.count + 1, ms: p.ms + gap });
    }
    lasts.set(path, now);
    const received = Buffer.concat(chunks);
    bytes.set(path, (bytes.get(path) || 0) + received.length);
    const body = JSON.parse(received.toString());
    let ids = seen.get(path);
    if (!ids) seen.set(path, (ids = new Set()));
    for (const entry of body.result || []) ids.add(String(entry.raw && entry.raw.id));
    totals.set(path, (totals.get(path) || 0) + (body.result ? body.result.length : 0));
    res.writeHead(200).end();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (message) => {
  if (message.type === 'count') {
    parentPort.postMessage({ id: message.id, unique: seen.get(message.path)?.size ?? 0, total: totals.get(message.path) ?? 0, firstAt: firsts.get(message.path), bytes: bytes.get(message.path) ?? 0, pauses: pauses.get(message.path) ?? { count: 0, ms: 0 } });
  } else if (message.type === 'close') {
    server.closeAllConnections();
    server.close(() => parentPort.close());
  }
});
`;

async function startReceiver(): Promise<Receiver> {
  const thread = new Worker(RECEIVER_SOURCE, { eval: true });
  const port = await new Promise<number>((resolve, reject) => {
    thread.once('message', (message: { port: number }) => resolve(message.port));
    thread.once('error', reject);
  });
  let nextId = 0;
  const pending = new Map<number, (counts: Counts) => void>();
  thread.on('message', (message: Counts & { id?: number }) => {
    if (message.id === undefined) return;
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const count = (path: string) =>
    new Promise<Counts>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      thread.postMessage({ type: 'count', id, path });
    });
  return {
    url: `http://127.0.0.1:${port}`,
    count,
    async waitFor(path, records, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { unique } = await count(path);
        if (unique >= records) return Date.now();
        if (Date.now() > deadline) throw new Error(`only ${unique} of ${records} records arrived`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async close() {
      const exited = new Promise((resolve) => thread.once('exit', resolve));
      thread.postMessage({ type: 'close' });
      await exited;
    },
  };
}

/** One page's deliveries: each body with the headers it is POSTed with. */
type PageMessages = (
  records: Record<string, unknown>[],
) => { body: string | Buffer; headers: Record<string, string> }[];

/** The raw records alone, one unsigned message per page. */
const rawMessages: PageMessages = (records) => [
  {
    body: JSON.stringify({ result: records.map((raw) => ({ raw })) }),
    headers: { 'content-type': 'application/json' },
  },
];

/** The baseline: page through the sandbox and POST each page's messages to the receiver, nothing else. */
async function plainLoop(
  sandboxUrl: string,
  receiverUrl: string,
  pageSize: number,
  messages: PageMessages,
): Promise<number> {
  const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: 8 });
  let cursor: string | null = null;
  let records = 0;
  do {
    const query = new URLSearchParams({ limit: String(pageSize), ...(cursor && { cursor }) });
    const page = await request(`${sandboxUrl}/api/v1/contacts?${query}`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
      dispatcher,
    });
    const body = (await page.body.json()) as {
      results: Record<string, unknown>[];
      nextCursor: string | null;
    };
    for (const { body: message, headers } of messages(body.results)) {
      const delivered = await request(receiverUrl, { method: 'POST', headers, body: message, dispatcher });
      await delivered.body.dump();
    }
    records += body.results.length;
    cursor = body.nextCursor;
  } while (cursor);
  await dispatcher.close();
  return records;
}

interface FerryRun {
  records: number;
  seconds: number;
  /** From creating the installation to the first message at the receiver. */
  firstRecordSeconds?: number;
  recordsPerSec: number;
  /** Body bytes the receiver got per record. */
  bytesPerRecord: number;
  /** The worker's peak resident set size during the read (since it was ready, where Linux can say). */
  peakRssMb?: number;
  /** The worker's resident set size once ready, before the read. */
  readyRssMb?: number;
  peakIsReadOnly?: boolean;
  /** CPU time the worker used from ready to the last record. */
  workerCpuSeconds?: number;
  /** CPU time the whole machine used meanwhile: every process, the sandbox and receiver included. */
  machineCpuSeconds: number;
  /** Gaps of over 100 ms between two messages at the receiver. */
  pausesOver100ms?: { count: number; seconds: number };
  result?: string;
}

export async function benchRead(args: string[]): Promise<void> {
  const opts = options(args, {
    records: { type: 'string' },
    'page-size': { type: 'string' },
    'no-quarter': { type: 'boolean' },
    'worker-heap-mb': { type: 'string' },
    'worker-cpu-prof': { type: 'string' },
    rounds: { type: 'string' },
    destination: { type: 'string' },
  });
  if (opts.destination) {
    const { benchReadDestinations } = await import('./read-destinations.js');
    return benchReadDestinations(
      opts.destination,
      Number(opts.records ?? 20_000),
      Number(opts['page-size'] ?? 500),
    );
  }
  const rounds = Number(opts.rounds ?? 1);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 9) throw new Error('--rounds must be 1..9');
  const workerHeapMb = opts['worker-heap-mb'] ? Number(opts['worker-heap-mb']) : undefined;
  const workerArgs = workerHeapMb ? [`--max-old-space-size=${workerHeapMb}`] : [];
  // A CPU profile of each worker, written to this folder when the worker stops.
  if (opts['worker-cpu-prof']) workerArgs.push('--cpu-prof', `--cpu-prof-dir=${opts['worker-cpu-prof']}`);
  const records = Number(opts.records ?? 200_000);
  const pageSize = Number(opts['page-size'] ?? 500);
  if (!Number.isInteger(records) || records < 1) throw new Error('--records must be a positive integer');
  if (!Number.isInteger(pageSize) || pageSize < 50 || pageSize > 500)
    throw new Error('--page-size must be 50..500');

  const bench = benchEnvironment('ferry_bench', {
    FERRY_ALLOW_PRIVATE_DESTINATIONS: 'true',
  });
  const { runId, databaseUrl } = bench;
  process.env.FERRY_TASK_QUEUE = `bench-${runId}`;

  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error) => say(`cleanup: ${String(error)}`));
  };
  try {
    const { startDevServer } = await import('../src/temporal/dev-server.js');
    say('starting a Temporal dev server');
    const temporal = await startDevServer({ port: await freePort() });
    process.env.TEMPORAL_ADDRESS = temporal.address;
    stops.push(() => temporal.stop());

    const { resetConfig } = await import('../src/config.js');
    resetConfig();
    const { migrate, transaction } = await import('../src/db/orm.js');
    await migrate(databaseUrl);
    stops.push(() => bench.drop());

    const receiver = await startReceiver();
    stops.push(() => receiver.close());
    const { startServers } = await import('../src/api/server.js');
    const { closeTemporalClient } = await import('../src/temporal/client.js');
    const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0 }, '127.0.0.1');
    stops.push(async () => {
      await servers.close();
      await closeTemporalClient();
    });
    const { createApiKey, createOrg, createProject } = await import('../src/domain/projects.js');
    const project = await transaction(async (em) => {
      const org = await createOrg(em, 'bench');
      const created = await createProject(em, { name: `bench-${runId}`.replace(/_/g, '-'), orgId: org.id });
      return { id: created.id, apiKey: createApiKey(em, created.id, { label: 'bench' }).key };
    });
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${servers.urls.api}${path}`, {
        method,
        headers: { 'x-api-key': project.apiKey, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
      return text ? JSON.parse(text) : undefined;
    };

    /** One Ferry backfill of `count` contacts from a sandbox of its own, with a fresh worker process. */
    const ferryRun = async (count: number, label: string): Promise<FerryRun> => {
      const sandbox = await startSandbox(count);
      process.env.FERRY_SANDBOX_URL = sandbox.url;
      resetConfig();
      const worker = await startWorker({ ...process.env }, workerArgs);
      const pid = worker.child.pid!;
      const readyRssMb = procStatusMb(pid, 'VmRSS');
      const readyCpu = cpuSeconds(pid);
      const peakReset = resetPeakRss(pid);
      try {
        const name = `bench-${label}`;
        const path = `/${label}`;
        await api('POST', `/projects/${project.id}/destinations`, {
          name,
          type: 'webhook',
          metadata: { url: `${receiver.url}${path}` },
        });
        await api('POST', `/projects/${project.id}/integrations`, {
          name,
          provider: 'sandboxApiKey',
          latestRevision: {
            specVersion: '1.0.0',
            content: {
              name,
              provider: 'sandboxApiKey',
              read: {
                objects: [
                  {
                    objectName: 'contacts',
                    destination: name,
                    schedule: '0 0 1 1 *',
                    backfill: { defaultPeriod: { fullHistory: true } },
                    delivery: { pageSize },
                    optionalFieldsAuto: 'all',
                  },
                ],
              },
            },
          },
        });
        const groupRef = `group-${label}`;
        await api('POST', `/projects/${project.id}/connections:generate`, {
          provider: 'sandboxApiKey',
          groupRef,
          consumerRef: `consumer-${label}`,
          apiKey: 'sandbox-demo-key',
        });
        say(`Ferry: backfilling ${count.toLocaleString('en-US')} contacts (${label})`);
        const started = Date.now();
        const machineBefore = machineBusySeconds();
        const installation = await api('POST', `/projects/${project.id}/integrations/${name}/installations`, {
          groupRef,
          config: {
            content: {
              provider: 'sandboxApiKey',
              read: {
                objects: {
                  contacts: {
                    objectName: 'contacts',
                    schedule: '0 0 1 1 *',
                    destination: name,
                    selectedFields: {},
                    selectedFieldsAuto: 'all',
                  },
                },
              },
            },
          },
        });
        const finished = await receiver.waitFor(path, count, 30 * 60_000);
        const machineCpuSeconds = Number((machineBusySeconds() - machineBefore).toFixed(2));
        const seconds = (finished - started) / 1000;
        const peak = procStatusMb(pid, 'VmHWM');
        const usedCpu = cpuSeconds(pid);
        // The operation ends just after its last delivery: wait for its summary.
        let operations: { results?: { status: string; result?: string }[] } = {};
        for (let tries = 0; tries < 100; tries++) {
          operations = await api(
            'GET',
            `/projects/${project.id}/integrations/${name}/installations/${installation.id}/operations`,
          );
          if (operations.results?.[0] && operations.results[0].status !== 'in_progress') break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const { total, firstAt, pauses, bytes } = await receiver.count(path);
        if (total !== count) say(`Ferry (${label}): ${total - count} records redelivered`);
        return {
          records: count,
          seconds,
          recordsPerSec: Math.round(count / seconds),
          bytesPerRecord: Math.round(bytes / total),
          ...(firstAt && { firstRecordSeconds: (firstAt - started) / 1000 }),
          pausesOver100ms: { count: pauses.count, seconds: pauses.ms / 1000 },
          machineCpuSeconds,
          ...(readyCpu !== undefined &&
            usedCpu !== undefined && { workerCpuSeconds: Number((usedCpu - readyCpu).toFixed(2)) }),
          ...(peak !== undefined && { peakRssMb: peak }),
          ...(readyRssMb !== undefined && { readyRssMb }),
          peakIsReadOnly: peakReset,
          result: operations.results?.[0]?.result,
        };
      } finally {
        await worker.stop();
        await sandbox.close();
      }
    };

    // The baselines read the same generated records from a sandbox of the same size. They run before
    // and after each Ferry run, and each Ferry run is compared with the mean of the two around it,
    // so a machine whose load changes during the bench skews the ratio less.
    interface Baseline {
      seconds: number;
      machineCpuSeconds: number;
      bytesPerRecord: number;
    }
    const loops = { sameMessages: await ferryShapedMessages(), rawOnly: rawMessages };
    const baselineRun = async (round: number): Promise<Record<keyof typeof loops, Baseline>> => {
      const baselineSandbox = await startSandbox(records);
      const result = {} as Record<keyof typeof loops, Baseline>;
      try {
        for (const [name, messages] of Object.entries(loops) as [keyof typeof loops, PageMessages][]) {
          say(`baseline (${name}): moving ${records.toLocaleString('en-US')} contacts with a plain loop`);
          const path = `/baseline-${name}-${round}`;
          const started = Date.now();
          const machineBefore = machineBusySeconds();
          const moved = await plainLoop(baselineSandbox.url, `${receiver.url}${path}`, pageSize, messages);
          const machineCpuSeconds = machineBusySeconds() - machineBefore;
          const seconds = (Date.now() - started) / 1000;
          if (moved !== records) throw new Error(`the baseline moved ${moved} of ${records} records`);
          const { bytes } = await receiver.count(path);
          result[name] = { seconds, machineCpuSeconds, bytesPerRecord: Math.round(bytes / records) };
          say(`baseline (${name}): ${Math.round(records / seconds)} records/s`);
        }
      } finally {
        await baselineSandbox.close();
      }
      return result;
    };

    const loadBefore = loadavg()[0];
    const baselines = [await baselineRun(0)];
    const ferryRuns: FerryRun[] = [];
    for (let round = 1; round <= rounds; round++) {
      const ferry = await ferryRun(records, round === 1 ? 'full' : `full-${round}`);
      say(
        `Ferry: ${ferry.recordsPerSec} records/s, worker ready RSS ${ferry.readyRssMb ?? '?'} MB, peak ${ferry.peakRssMb ?? '?'} MB (${ferry.result})`,
      );
      ferryRuns.push(ferry);
      baselines.push(await baselineRun(round));
    }
    /** The mean of a baseline figure over the runs before and after Ferry run `index`. */
    const around = (index: number, loop: keyof typeof loops, figure: keyof Baseline) =>
      (baselines[index][loop][figure] + baselines[index + 1][loop][figure]) / 2;
    const baselineSeconds = baselines.map((baseline) => baseline.sameMessages.seconds);
    const roundRatios = ferryRuns.map(
      (ferry, index) => ferry.recordsPerSec / (records / around(index, 'sameMessages', 'seconds')),
    );
    const rawRatios = ferryRuns.map(
      (ferry, index) => ferry.recordsPerSec / (records / around(index, 'rawOnly', 'seconds')),
    );
    // The median round (the lower middle one when there are two).
    const middle = [...roundRatios.keys()].sort((a, b) => roundRatios[a] - roundRatios[b])[
      Math.floor((rounds - 1) / 2)
    ];
    const ferry = ferryRuns[middle];
    const baselineAround = (baselineSeconds[middle] + baselineSeconds[middle + 1]) / 2;
    let quarter: FerryRun | undefined;
    if (!opts['no-quarter'] && records >= 4 * pageSize) {
      quarter = await ferryRun(Math.floor(records / 4), 'quarter');
      say(`Ferry at N/4: ${quarter.recordsPerSec} records/s, worker peak RSS ${quarter.peakRssMb ?? '?'} MB`);
    }
    const rssRatio = (run: FerryRun) =>
      run.peakRssMb !== undefined && run.readyRssMb
        ? Number((run.peakRssMb / run.readyRssMb).toFixed(3))
        : null;
    const summary = {
      records,
      pageSize,
      ...(workerHeapMb && { workerHeapMb }),
      ferrySeconds: Number(ferry.seconds.toFixed(2)),
      ferryFirstRecordSeconds:
        ferry.firstRecordSeconds === undefined ? null : Number(ferry.firstRecordSeconds.toFixed(2)),
      baselineSeconds: Number(baselineAround.toFixed(2)),
      ferryRecordsPerSec: ferry.recordsPerSec,
      baselineRecordsPerSec: Math.round(records / baselineAround),
      ratio: Number(roundRatios[middle].toFixed(3)),
      ratioToRawLoop: Number(rawRatios[middle].toFixed(3)),
      rawLoopRecordsPerSec: Math.round(records / around(middle, 'rawOnly', 'seconds')),
      bytesPerRecord: {
        ferry: ferry.bytesPerRecord,
        sameMessagesLoop: Math.round(around(middle, 'sameMessages', 'bytesPerRecord')),
        rawLoop: Math.round(around(middle, 'rawOnly', 'bytesPerRecord')),
      },
      peakRssMb: ferry.peakRssMb ?? null,
      workerReadyRssMb: ferry.readyRssMb ?? null,
      peakToReadyRss: rssRatio(ferry),
      maxPeakToReadyRss: Math.max(...ferryRuns.map((run) => rssRatio(run) ?? 0)) || null,
      rounds: ferryRuns.map((run, index) => ({
        ferryRecordsPerSec: run.recordsPerSec,
        baselineSecondsBefore: Number(baselineSeconds[index].toFixed(2)),
        baselineSecondsAfter: Number(baselineSeconds[index + 1].toFixed(2)),
        ratio: Number(roundRatios[index].toFixed(3)),
        ratioToRawLoop: Number(rawRatios[index].toFixed(3)),
        pausesOver100ms: run.pausesOver100ms,
        workerCpuSeconds: run.workerCpuSeconds ?? null,
        machineCpuSeconds: run.machineCpuSeconds,
        baselineMachineCpuSeconds: Number(around(index, 'sameMessages', 'machineCpuSeconds').toFixed(2)),
        rawLoopMachineCpuSeconds: Number(around(index, 'rawOnly', 'machineCpuSeconds').toFixed(2)),
        workerReadyRssMb: run.readyRssMb ?? null,
        peakRssMb: run.peakRssMb ?? null,
      })),
      // Busy share of the machine's cores during the median Ferry run: near 1, the machine itself
      // (every process on it, the receiver and sandbox included) is what limits the run.
      machineBusyShare: Number((ferry.machineCpuSeconds / (ferry.seconds * cpus().length)).toFixed(3)),
      cores: cpus().length,
      loadAverage: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0].toFixed(2)) },
      ...(quarter && {
        quarter: {
          records: quarter.records,
          ferryRecordsPerSec: quarter.recordsPerSec,
          peakRssMb: quarter.peakRssMb ?? null,
          workerReadyRssMb: quarter.readyRssMb ?? null,
        },
      }),
    };
    await stopAll();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    await stopAll();
    throw error;
  }
}
