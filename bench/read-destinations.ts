import { request, Agent } from 'undici';
import { startMoto, type MotoServer } from '../test/support/moto.js';
import { AWS_TYPES } from './support/far-side-aws.js';
import { FAR_SIDE_TYPES, openFarSide, tally, type FarSide, type Tally } from './support/far-side.js';
import { ferryShapedMessages, type PageMessages } from './support/ferry-processes.js';
import { say, startFerryStack } from './support/ferry-stack.js';
import { machineBusySeconds } from './support/measure.js';

/**
 * `npm run bench:read -- --destination <type>[,<type>…|all] [--records 20000] [--page-size 500]`
 *
 * For each type: Ferry backfills N sandbox contacts into a destination of that type on the real
 * server (RabbitMQ, PostgreSQL, NATS, Redis and Mosquitto on 127.0.0.1, moto for S3, SQS and
 * Kinesis, a receiver in this process for webhooks), and a plain loop sends the same messages
 * (Ferry's own message functions, bench/support/ferry-processes.ts) to the same server with the
 * same client library, one after another, each waiting for the server's acknowledgement: before
 * and after the Ferry run, which is compared with their mean. Every side's records are counted on
 * the server afterwards (bench/support/far-side.ts); a run that lost records fails the bench.
 * Ferry's time runs from creating the installation to its operation ending, which it does after
 * its last message is acknowledged. One worker and one sandbox serve every type. `slack` is left
 * out: it sends a summary per message, not the records. The last line printed is one JSON object.
 */

interface Side {
  seconds: number;
  recordsPerSec: number;
  machineCpuSeconds: number;
  landed: Tally;
}

/** The baseline: page through the sandbox, send each page's messages with the type's client, nothing else. */
async function plainLoop(sandboxUrl: string, pageSize: number, messages: PageMessages, far: FarSide) {
  const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: 4 });
  let cursor: string | null = null;
  let records = 0;
  try {
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
      for (const message of messages(body.results)) await far.send(message);
      records += body.results.length;
      cursor = body.nextCursor;
    } while (cursor);
  } finally {
    await dispatcher.close();
  }
  return records;
}

/** Counts on the server until every record is there (a subscriber may lag its acks), at most 30 s. */
async function landedOnServer(far: FarSide, records: number): Promise<Tally> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const counted = tally(await far.landed(), records);
    if (counted.records >= records || Date.now() > deadline) return counted;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function benchReadDestinations(list: string, records: number, pageSize: number): Promise<void> {
  const types = list === 'all' ? FAR_SIDE_TYPES : list.split(',').map((type) => type.trim());
  for (const type of types)
    if (!FAR_SIDE_TYPES.includes(type))
      throw new Error(`--destination: ${type} is not benched; one of ${FAR_SIDE_TYPES.join(', ')} or all`);
  const stack = await startFerryStack('ferry_bench_dest');
  const results: Record<string, unknown> = {};
  try {
    let moto: MotoServer | undefined;
    if (types.some((type) => AWS_TYPES.includes(type))) {
      moto = await startMoto(undefined, (pid) => stack.watch(pid));
      stack.onClose(() => moto!.stop());
    }
    const sandbox = await stack.startSandbox(records);
    stack.onClose(() => sandbox.close());
    const worker = await stack.startWorker();
    stack.onClose(() => worker.stop());
    const servers = { databaseUrl: stack.databaseUrl, ...(moto && { aws: { endpoint: moto.endpoint } }) };

    const baseline = async (type: string, round: string): Promise<Side> => {
      const far = await openFarSide(type, `${type}_plain_${round}`, servers);
      try {
        const started = Date.now();
        const machineBefore = machineBusySeconds();
        const moved = await plainLoop(sandbox.url, pageSize, await ferryShapedMessages(), far);
        const seconds = (Date.now() - started) / 1000;
        const machineCpuSeconds = Number((machineBusySeconds() - machineBefore).toFixed(2));
        if (moved !== records) throw new Error(`the plain loop moved ${moved} of ${records} records`);
        return {
          seconds,
          recordsPerSec: Math.round(records / seconds),
          machineCpuSeconds,
          landed: await landedOnServer(far, records),
        };
      } finally {
        await far.close();
      }
    };

    for (const type of types) {
      say(`${type}: plain loop, ${records.toLocaleString('en-US')} records`);
      const before = await baseline(type, 'before');
      say(`${type}: plain loop ${before.recordsPerSec} records/s; Ferry next`);
      const far = await openFarSide(type, `${type}_ferry`, servers);
      let ferry: Side & { result?: string };
      try {
        const machineBefore = machineBusySeconds();
        const backfill = await stack.backfill(`bench-${type}`, far.destination, pageSize);
        const end = await backfill.finished(30 * 60_000);
        const seconds = (end.endedAt - backfill.startedAt) / 1000;
        const machineCpuSeconds = Number((machineBusySeconds() - machineBefore).toFixed(2));
        ferry = {
          seconds,
          recordsPerSec: Math.round(records / seconds),
          machineCpuSeconds,
          landed: await landedOnServer(far, records),
          result: end.result,
        };
      } finally {
        await far.close();
      }
      const after = await baseline(type, 'after');
      const plainSeconds = (before.seconds + after.seconds) / 2;
      const lost = [before, ferry, after].some((side) => side.landed.lost > 0);
      results[type] = {
        ferryRecordsPerSec: ferry.recordsPerSec,
        plainRecordsPerSec: Math.round(records / plainSeconds),
        ratio: Number((ferry.recordsPerSec / (records / plainSeconds)).toFixed(3)),
        ferrySeconds: Number(ferry.seconds.toFixed(2)),
        plainSeconds: { before: Number(before.seconds.toFixed(2)), after: Number(after.seconds.toFixed(2)) },
        machineCpuSeconds: {
          ferry: ferry.machineCpuSeconds,
          plain: Number(((before.machineCpuSeconds + after.machineCpuSeconds) / 2).toFixed(2)),
        },
        onServer: { ferry: ferry.landed, plainBefore: before.landed, plainAfter: after.landed },
        ferryResult: ferry.result,
      };
      say(`${type}: ${JSON.stringify(results[type])}`);
      if (lost) throw new Error(`${type}: records missing on the server: ${JSON.stringify(results[type])}`);
    }
  } finally {
    await stack.close();
  }
  process.stdout.write(
    `${JSON.stringify({ records, pageSize, skipped: { slack: 'a summary per message, not the records' }, types: results })}\n`,
  );
}
