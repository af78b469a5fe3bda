import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { resetConfig } from '../../src/config.js';
import { unlessRunningElsewhere } from '../../src/db/advisory-lock.js';
import { closeOrm, migrate } from '../../src/db/orm.js';
import { startRepairLoop } from '../../src/cli/repair-loop.js';
import { registry } from '../../src/metrics.js';

/**
 * Work one process at a time does (the repair pass), against the real PostgreSQL: a second process
 * is another session, here a client of its own.
 */

// A database of its own: a repair pass reconciles every installation it finds, and the run's shared
// database holds as many as the suites before this one made (a pass over them outlasted the test).
const sharedUrl = process.env.DATABASE_URL!;
const ownUrl = new URL(sharedUrl);
ownUrl.pathname = `/ferry_lock_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

beforeAll(async () => {
  await migrate(ownUrl.toString());
  process.env.DATABASE_URL = ownUrl.toString();
  resetConfig();
}, 60_000);

afterAll(async () => {
  await closeOrm();
  process.env.DATABASE_URL = sharedUrl;
  resetConfig();
  const admin = new pg.Client({ connectionString: sharedUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${ownUrl.pathname.slice(1)}" with (force)`);
  } finally {
    await admin.end();
  }
});

/** Another process holding the lock of `name`, until it disconnects (as a dying process would). */
async function otherProcessHolding(name: string): Promise<pg.Client> {
  const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await other.connect();
  // Anything else on this database holds it for a moment at most.
  for (const deadline = Date.now() + 10_000; ;) {
    const { rows } = await other.query('select pg_try_advisory_lock(hashtext($1)) as locked', [
      `ferry:${name}`,
    ]);
    if (rows[0].locked) return other;
    if (Date.now() > deadline) throw new Error(`${name} stayed locked`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function passesRun(): Promise<number> {
  const metric = (await registry.getSingleMetric('ferry_repair_pass_seconds')?.get())?.values ?? [];
  return (
    metric.find(
      (value) => (value as { metricName?: string }).metricName === 'ferry_repair_pass_seconds_count',
    )?.value ?? 0
  );
}

async function skippedPasses(): Promise<number> {
  const metric = (await registry.getSingleMetric('ferry_repair_passes_total')?.get())?.values ?? [];
  return metric.find((value) => value.labels.outcome === 'skipped')?.value ?? 0;
}

describe('unlessRunningElsewhere', () => {
  it('runs the work and answers its value', async () => {
    expect(await unlessRunningElsewhere('test-value', async () => 42)).toEqual({
      ran: true,
      value: 42,
      durationMs: expect.any(Number),
    });
  });

  it('skips while the work runs in this process, and runs it again once that ends', async () => {
    let finish!: () => void;
    const first = unlessRunningElsewhere(
      'test-overlap',
      () =>
        new Promise<string>((resolve) => {
          finish = () => resolve('first');
        }),
    );
    // The first call holds the lock once its work has begun.
    await new Promise((resolve) => setTimeout(resolve, 200));
    let ranSecond = false;
    expect(
      await unlessRunningElsewhere('test-overlap', async () => {
        ranSecond = true;
      }),
    ).toEqual({ ran: false, why: 'running-elsewhere' });
    expect(ranSecond).toBe(false);
    finish();
    expect(await first).toEqual({ ran: true, value: 'first', durationMs: expect.any(Number) });
    expect(await unlessRunningElsewhere('test-overlap', async () => 'third')).toEqual({
      ran: true,
      value: 'third',
      durationMs: expect.any(Number),
    });
  });

  it('skips while another process holds it, and takes over when that process dies', async () => {
    const other = await otherProcessHolding('test-other');
    expect(await unlessRunningElsewhere('test-other', async () => 'mine')).toEqual({
      ran: false,
      why: 'running-elsewhere',
    });
    // Other names are not held.
    expect(await unlessRunningElsewhere('test-unrelated', async () => 'free')).toEqual({
      ran: true,
      value: 'free',
      durationMs: expect.any(Number),
    });
    await other.end();
    expect(await unlessRunningElsewhere('test-other', async () => 'mine')).toEqual({
      ran: true,
      value: 'mine',
      durationMs: expect.any(Number),
    });
  });

  it('releases the lock when the work fails', async () => {
    await expect(
      unlessRunningElsewhere('test-failure', async () => {
        throw new Error('pass failed');
      }),
    ).rejects.toThrow('pass failed');
    expect(await unlessRunningElsewhere('test-failure', async () => 'after')).toEqual({
      ran: true,
      value: 'after',
      durationMs: expect.any(Number),
    });
  });
});

describe('paced work', () => {
  const pace = { share: 0.5 };
  const setLastRun = async (name: string, endedSecondsAgo: number, durationMs: number) => {
    const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await other.connect();
    try {
      await other.query(
        `insert into exclusive_runs (name, finished_at, duration_ms)
         values ($1, now() - make_interval(secs => $2::float8), $3)
         on conflict (name) do update set finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`,
        [name, endedSecondsAgo, durationMs],
      );
    } finally {
      await other.end();
    }
  };

  it('waits after a run for its share of the time, then runs again', async () => {
    const slow = () => new Promise<string>((resolve) => setTimeout(() => resolve('ran'), 400));
    const first = await unlessRunningElsewhere('test-paced', slow, pace);
    expect(first).toEqual({ ran: true, value: 'ran', durationMs: expect.any(Number) });
    // The run's length is the work's.
    expect(first.ran && first.durationMs).toBeGreaterThanOrEqual(390);
    // Half the time at most: a run of 400 ms is followed by 400 ms of nothing.
    expect(await unlessRunningElsewhere('test-paced', slow, pace)).toEqual({ ran: false, why: 'not-due' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await unlessRunningElsewhere('test-paced', slow, pace)).toEqual({
      ran: true,
      value: 'ran',
      durationMs: expect.any(Number),
    });
  });

  it('is paced by the last run of any process, and never longer than 10 minutes', async () => {
    // Another process's run of 60 s ended a minute ago: at a share of 2 %, the next is 49 minutes
    // after it, cut to 10.
    const share = { share: 0.02 };
    await setLastRun('test-paced-elsewhere', 60, 60_000);
    expect(await unlessRunningElsewhere('test-paced-elsewhere', async () => 'ran', share)).toEqual({
      ran: false,
      why: 'not-due',
    });
    await setLastRun('test-paced-elsewhere', 601, 60_000);
    expect(await unlessRunningElsewhere('test-paced-elsewhere', async () => 'ran', share)).toEqual({
      ran: true,
      value: 'ran',
      durationMs: expect.any(Number),
    });
  });

  it('does not count a run that says it does not set the pace (it found things broken)', async () => {
    const slow = (found: string) => () =>
      new Promise<string>((resolve) => setTimeout(() => resolve(found), 300));
    const paced = { share: 0.5, setsPace: (found: string) => found === 'all in order' };
    await setLastRun('test-paced-repairs', 1000, 1);
    expect((await unlessRunningElsewhere('test-paced-repairs', slow('repaired 3'), paced)).ran).toBe(true);
    // Due at once: the slow run repaired things, so it set no pace.
    expect((await unlessRunningElsewhere('test-paced-repairs', slow('all in order'), paced)).ran).toBe(true);
    // That one did.
    expect(await unlessRunningElsewhere('test-paced-repairs', slow('all in order'), paced)).toEqual({
      ran: false,
      why: 'not-due',
    });
  });

  it('does not count a failed run: the next try is due at once', async () => {
    await setLastRun('test-paced-failure', 1000, 1);
    await expect(
      unlessRunningElsewhere(
        'test-paced-failure',
        () => new Promise((_, reject) => setTimeout(() => reject(new Error('outage')), 300)),
        pace,
      ),
    ).rejects.toThrow('outage');
    expect(await unlessRunningElsewhere('test-paced-failure', async () => 'ran', pace)).toEqual({
      ran: true,
      value: 'ran',
      durationMs: expect.any(Number),
    });
  });
});

describe('the repair loop', () => {
  it('skips its full pass while another worker runs one', async () => {
    const other = await otherProcessHolding('repair-pass');
    const before = await skippedPasses();
    // The first pass runs as the loop starts; marks are left to their own loop, slowed out of the way.
    const loop = startRepairLoop({ intervalMs: 60_000, marksIntervalMs: 60_000 });
    try {
      await loop.stop();
      expect(await skippedPasses()).toBe(before + 1);
    } finally {
      await other.end();
    }
  });

  it('runs a pass as it starts, and a second worker starting right after waits its turn', async () => {
    const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query(`delete from exclusive_runs where name = 'repair-pass'`);
      const before = { run: await passesRun(), skipped: await skippedPasses() };
      await startRepairLoop({ intervalMs: 60_000, marksIntervalMs: 60_000 }).stop();
      expect(await passesRun()).toBe(before.run + 1);
      // Whether that pass set the pace depends on what it found in this shared database (one that
      // repaired something does not): say a pass of a second that found everything in order just
      // ended, in some worker. The next, in any worker, comes 49 seconds later.
      await db.query(
        `insert into exclusive_runs (name, finished_at, duration_ms) values ('repair-pass', now(), 1000)
         on conflict (name) do update set finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`,
      );
      await startRepairLoop({ intervalMs: 60_000, marksIntervalMs: 60_000 }).stop();
      expect(await passesRun()).toBe(before.run + 1);
      expect(await skippedPasses()).toBe(before.skipped);
    } finally {
      await db.end();
    }
  });
});
