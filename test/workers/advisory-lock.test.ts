import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { unlessRunningElsewhere } from '../../src/db/advisory-lock.js';
import { closeOrm } from '../../src/db/orm.js';
import { startRepairLoop } from '../../src/cli/repair-loop.js';
import { registry } from '../../src/metrics.js';

/**
 * Work one process at a time does (the repair pass), against the real PostgreSQL: a second process
 * is another session, here a client of its own.
 */

afterAll(async () => {
  await closeOrm();
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

async function skippedPasses(): Promise<number> {
  const metric = (await registry.getSingleMetric('ferry_repair_passes_total')?.get())?.values ?? [];
  return metric.find((value) => value.labels.outcome === 'skipped')?.value ?? 0;
}

describe('unlessRunningElsewhere', () => {
  it('runs the work and answers its value', async () => {
    expect(await unlessRunningElsewhere('test-value', async () => 42)).toEqual({ ran: true, value: 42 });
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
    ).toEqual({ ran: false });
    expect(ranSecond).toBe(false);
    finish();
    expect(await first).toEqual({ ran: true, value: 'first' });
    expect(await unlessRunningElsewhere('test-overlap', async () => 'third')).toEqual({
      ran: true,
      value: 'third',
    });
  });

  it('skips while another process holds it, and takes over when that process dies', async () => {
    const other = await otherProcessHolding('test-other');
    expect(await unlessRunningElsewhere('test-other', async () => 'mine')).toEqual({ ran: false });
    // Other names are not held.
    expect(await unlessRunningElsewhere('test-unrelated', async () => 'free')).toEqual({
      ran: true,
      value: 'free',
    });
    await other.end();
    expect(await unlessRunningElsewhere('test-other', async () => 'mine')).toEqual({
      ran: true,
      value: 'mine',
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
});
