import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { options } from '../src/cli/options.js';
import { startMoto, type MotoServer } from '../test/support/moto.js';
import { AWS_TYPES } from './support/far-side-aws.js';
import {
  FAR_SIDE_TYPES,
  openFarSide,
  tally,
  type FarSide,
  type Servers,
  type Tally,
} from './support/far-side.js';
import { say, startFerryStack, type FerryStack } from './support/ferry-stack.js';
import { startOwnNats, startOwnRabbitmq, type OwnBroker } from './support/own-brokers.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

/**
 * `npm run bench:soak-destinations -- [--types postgres,s3,nats,rabbitmq] [--records 200000] [--page-size 500]`
 *
 * The durability soak for destination types (not in CI: minutes per type). For each type, a
 * backfill of N sandbox contacts into a destination of that type, with the worker SIGKILLed twice
 * mid-backfill (a new one started each time) and the server disturbed once in between:
 * - rabbitmq, nats: a broker of the soak's own (bench/support/own-brokers.ts) restarted;
 * - s3, sqs, kinesis: moto restarted. moto keeps its state in memory, so Ferry reaches it through a
 *   TCP proxy the soak cuts first; with nothing in flight the soak takes stock of moto, restarts
 *   it, makes the bucket, queue or stream again and lets Ferry through again;
 * - postgres: Ferry's connections to the destination database terminated (pg_terminate_backend);
 * - webhook, redis, mqtt: the worker kills alone.
 * Then it counts on the server, not in Ferry: every record's id, under which message ids.
 * The verdict per type: 0 lost; 0 records under two message ids; on postgres and s3, 0 duplicate rows
 * or objects at all (a row's key and an object's key are the message id's). Deliveries retry on a
 * short schedule (FERRY_DELIVERY_RETRY_SCHEDULE) so an outage costs seconds, not Svix's 5 minutes.
 * The workers' logs stay in the directory it names. The last line printed is one JSON object; the exit code is 1 when a type failed its verdict.
 */

const SCHEDULE = '0,1s,2s,4s,8s,15s,30s,60s,120s';
/** Types whose far side keeps one row or object per message and record: any duplicate is a failure. */
const NO_DUPLICATES = new Set(['postgres', 's3']);

interface Disturbance {
  what: string;
  /** Ferry's target, when it differs from where the soak reads. */
  servers: Servers;
  /** Disturbs the server; `far` is the far side, for taking stock first. */
  run(far: FarSide): Promise<void>;
  close(): Promise<void>;
}

async function disturbance(type: string, stack: FerryStack, dir: string): Promise<Disturbance> {
  const base = { databaseUrl: stack.databaseUrl };
  if (type === 'rabbitmq' || type === 'nats') {
    const broker: OwnBroker =
      type === 'rabbitmq'
        ? await startOwnRabbitmq(dir, (pid) => stack.watch(pid))
        : await startOwnNats(dir, (pid) => stack.watch(pid));
    return {
      what: `${type} broker of the soak's own restarted (SIGTERM, started again on its data)`,
      servers: { ...base, serverUrl: broker.url },
      run: () => broker.restart(),
      close: () => broker.stop(),
    };
  }
  if (AWS_TYPES.includes(type)) {
    const moto: MotoServer = await startMoto(undefined, (pid) => stack.watch(pid));
    const proxy: TcpProxy = await startTcpProxy(moto.port);
    return {
      what: 'moto restarted (SIGKILL, started again empty) behind a TCP proxy cut first; stock taken before',
      servers: { ...base, aws: { endpoint: moto.endpoint, ferryEndpoint: `http://127.0.0.1:${proxy.port}` } },
      async run(far) {
        await proxy.cut();
        await far.landed();
        await moto.kill();
        await moto.restart();
        await far.recreate!();
        await proxy.resume();
      },
      async close() {
        await proxy.close();
        await moto.stop();
      },
    };
  }
  if (type === 'postgres') {
    return {
      what: "Ferry's connections to the destination database terminated (pg_terminate_backend)",
      servers: base,
      async run() {
        const admin = new pg.Client({ connectionString: stack.databaseUrl });
        await admin.connect();
        const ended = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'ferry-destination'`,
        );
        say(`postgres: ${ended.rowCount} destination connections terminated`);
        await admin.end();
      },
      close: async () => undefined,
    };
  }
  return {
    what: 'none (worker kills only)',
    servers: base,
    run: async () => undefined,
    close: async () => undefined,
  };
}

async function soakOne(
  stack: FerryStack,
  type: string,
  records: number,
  pageSize: number,
  dirs: { data: string; logs: string },
) {
  const disturb = await disturbance(type, stack, dirs.data);
  const far = await openFarSide(type, `soak_${type}`, disturb.servers);
  const events: string[] = [];
  try {
    const log = join(dirs.logs, `worker-${type}.log`);
    let worker = await stack.startWorker(log);
    const deliveredBefore = await stack.deliveredMessages();
    const backfill = await stack.backfill(`soak-${type}`, far.destination, pageSize);
    // Points in delivered messages (Ferry's ledger: progress only) where each blow lands.
    const pages = Math.ceil(records / pageSize);
    const plan: [number, string][] = [
      [Math.ceil(pages * 0.15), 'kill'],
      [Math.ceil(pages * 0.3), 'server'],
      [Math.ceil(pages * 0.45), 'kill'],
    ];
    for (const [at, blow] of plan) {
      for (;;) {
        if (worker.child.exitCode !== null || worker.child.signalCode !== null)
          throw new Error(`${type}: the worker died on its own; its log: ${log}`);
        const delivered = (await stack.deliveredMessages()) - deliveredBefore;
        if (delivered >= at) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const seconds = ((Date.now() - backfill.startedAt) / 1000).toFixed(1);
      if (blow === 'kill') {
        await worker.kill();
        events.push(`${seconds}s: worker SIGKILLed`);
        worker = await stack.startWorker(log);
      } else {
        await disturb.run(far);
        events.push(`${seconds}s: ${disturb.what}`);
      }
      say(`${type}: ${events[events.length - 1]}`);
    }
    const end = await backfill.finished(40 * 60_000);
    const seconds = (end.endedAt - backfill.startedAt) / 1000;
    await worker.stop();
    let counted: Tally = tally(await far.landed(), records);
    // A subscriber's copy may trail the broker's acks by a moment.
    for (let wait = 0; counted.lost && wait < 50; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      counted = tally(await far.landed(), records);
    }
    const duplicates = counted.duplicatesSameMessageId + counted.duplicatesOtherMessageId;
    const passed =
      counted.lost === 0 &&
      counted.duplicatesOtherMessageId === 0 &&
      (!NO_DUPLICATES.has(type) || duplicates === 0);
    return {
      passed,
      records,
      seconds: Number(seconds.toFixed(1)),
      operation: { status: end.status, result: end.result },
      onServer: counted,
      events,
      serverDisturbance: disturb.what,
    };
  } finally {
    await far.close().catch((error) => say(`${type}: cleanup: ${String(error)}`));
    await disturb.close();
  }
}

export async function benchSoakDestinations(args: string[]): Promise<void> {
  const opts = options(args, {
    types: { type: 'string' },
    records: { type: 'string' },
    'page-size': { type: 'string' },
  });
  const types = (opts.types ?? 'postgres,s3,nats,rabbitmq').split(',').map((type) => type.trim());
  for (const type of types)
    if (!FAR_SIDE_TYPES.includes(type))
      throw new Error(`--types: ${type} is not one of ${FAR_SIDE_TYPES.join(', ')}`);
  const records = Number(opts.records ?? 200_000);
  const pageSize = Number(opts['page-size'] ?? 500);
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = SCHEDULE;
  const dir = mkdtempSync(join(tmpdir(), 'ferry-soak-destinations-'));
  // The workers' logs stay; the brokers' data goes.
  const logs = mkdtempSync(join(tmpdir(), 'ferry-soak-destinations-logs-'));
  say(`worker logs in ${logs}`);
  const stack = await startFerryStack('ferry_soak_dest');
  stack.onClose(async () => rmSync(dir, { recursive: true, force: true }));
  const results: Record<string, Awaited<ReturnType<typeof soakOne>>> = {};
  try {
    const sandbox = await stack.startSandbox(records);
    stack.onClose(() => sandbox.close());
    for (const type of types) {
      say(`${type}: backfilling ${records.toLocaleString('en-US')} contacts`);
      results[type] = await soakOne(stack, type, records, pageSize, { data: dir, logs });
      say(`${type}: ${JSON.stringify(results[type])}`);
    }
  } finally {
    await stack.close();
  }
  const passed = Object.values(results).every((result) => result.passed);
  process.stdout.write(
    `${JSON.stringify({ records, pageSize, retrySchedule: SCHEDULE, passed, types: results })}\n`,
  );
  if (!passed) process.exitCode = 1;
}
