import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { config, type RetentionConfig } from '../../src/config.js';
import { closeOrm } from '../../src/db/orm.js';
import { prepareReadRetry } from '../../src/domain/operation-retry.js';
import { runRetentionPass, runRetentionTask } from '../../src/domain/retention.js';
import pg from 'pg';
import { RetentionFixture } from './fixtures.js';

/**
 * The cleanup against the real PostgreSQL: each table loses what is past its window and keeps what
 * is younger or still needed. Every fixture has a project of its own, and all its rows are counted
 * within that project, so tests running beside these (on the same database) do not disturb them.
 */

const windows = (overrides: Partial<RetentionConfig> = {}): RetentionConfig => ({
  ...config().retention,
  operationLogsDays: 30,
  deliveryAttemptsDays: 30,
  readCheckpointsDays: 30,
  storedPagesDays: 14,
  eventsDays: 45,
  subscriptionEventsDays: 7,
  operationsDays: 90,
  batchSize: 1000,
  ...overrides,
});

const fixtures: RetentionFixture[] = [];
async function fixture(): Promise<RetentionFixture> {
  const created = await RetentionFixture.create();
  fixtures.push(created);
  return created;
}

afterAll(async () => {
  for (const created of fixtures) await created.close();
  await closeOrm();
});

describe('old rows go, young rows stay', () => {
  let f: RetentionFixture;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    f = await fixture();
    // A finished read from 100 days ago, one from 40 and one from yesterday (the installation's newest).
    ids.ancient = await f.operation({ ageDays: 100 });
    ids.old = await f.operation({ ageDays: 40 });
    ids.fresh = await f.operation({ ageDays: 1 });
    for (const [id, age] of [
      [ids.ancient, 100],
      [ids.old, 40],
      [ids.fresh, 1],
    ] as const) {
      await f.logs(id, age, 3);
      await f.attempts(id, age, { count: 2 });
      await f.checkpoint(id, age);
      await f.storedPages(id, age, 2);
    }
    ids.oldEvent = await f.event(50);
    ids.youngEvent = await f.event(40);
    ids.oldChange = await f.subscriptionEvent(8, ids.old);
    ids.youngChange = await f.subscriptionEvent(6, ids.fresh);
    await runRetentionPass({ retention: windows() });
  });

  it('deletes operation logs older than their window and keeps younger ones', async () => {
    expect(await f.count('operation_logs', 'operation_id = $2', [ids.old])).toBe(0);
    expect(await f.count('operation_logs', 'operation_id = $2', [ids.fresh])).toBe(3);
  });

  it('deletes record delivery attempts older than their window', async () => {
    expect(await f.count('delivery_attempts', 'operation_id = $2', [ids.old])).toBe(0);
    expect(await f.count('delivery_attempts', 'operation_id = $2', [ids.fresh])).toBe(2);
  });

  it('deletes checkpoints and stored pages of reads that ended before their window', async () => {
    expect(await f.count('read_checkpoints', 'operation_id = $2', [ids.old])).toBe(0);
    expect(await f.count('read_checkpoints', 'operation_id = $2', [ids.fresh])).toBe(1);
    expect(await f.count('stored_pages', 'operation_id = $2', [ids.old])).toBe(0);
    expect(await f.count('stored_pages', 'operation_id = $2', [ids.fresh])).toBe(2);
  });

  it('deletes routed events and change events older than their windows', async () => {
    expect(await f.count('events', 'id = $2', [ids.oldEvent])).toBe(0);
    expect(await f.count('events', 'id = $2', [ids.youngEvent])).toBe(1);
    expect(await f.count('subscription_events', 'id = $2', [ids.oldChange])).toBe(0);
    expect(await f.count('subscription_events', 'id = $2', [ids.youngChange])).toBe(1);
  });

  it('deletes finished operations older than their window, with everything naming them', async () => {
    expect(await f.count('operations', 'id = $2', [ids.ancient])).toBe(0);
    expect(await f.count('operations', 'id = any($2::uuid[])', [[ids.old, ids.fresh]])).toBe(2);
    for (const table of ['operation_logs', 'delivery_attempts', 'read_checkpoints', 'stored_pages']) {
      expect([table, await f.count(table, 'operation_id = $2', [ids.ancient])]).toEqual([table, 0]);
    }
  });
});

describe('what is still needed stays past its window', () => {
  let f: RetentionFixture;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    f = await fixture();
    // A backfill that started 120 days ago and still runs.
    ids.running = await f.operation({
      ageDays: 120,
      status: 'in_progress',
      metadata: { objects: ['deals'], backfill: true, progress: { objectName: 'deals' } },
    });
    await f.logs(ids.running, 120, 2);
    await f.checkpoint(ids.running, 120);
    await f.storedPages(ids.running, 120, 2);
    // A read that started 60 days ago and failed 5 days ago: retryable from its checkpoint, pages kept.
    ids.failed = await f.operation({ ageDays: 60, endedDaysAgo: 5, status: 'failure' });
    await f.checkpoint(ids.failed, 60);
    await f.storedPages(ids.failed, 60, 1);
    // The newest backfill of contacts, 200 days old, then newer non-backfill operations.
    ids.lastBackfill = await f.operation({
      ageDays: 200,
      metadata: { objects: ['contacts'], backfill: true, progress: { objectName: 'contacts' } },
    });
    ids.write = await f.operation({ ageDays: 150, actionType: 'write' });
    // Another installation whose only (so newest) operation is 300 days old.
    const other = f.installationId.replace(/^.{8}/, 'ffffffff');
    ids.lonely = await f.operation({ ageDays: 300, installationId: other });
    // An unrouted event (the relay was down), and a change event whose delivery still runs.
    ids.unrouted = await f.event(60, false);
    ids.delivering = await f.operation({ ageDays: 10, status: 'in_progress', actionType: 'subscribe' });
    ids.change = await f.subscriptionEvent(10, ids.delivering);
    // A notification's attempt outlives the attempts window while its event is kept (events: 45 days).
    await f.attempts(null, 40, { kind: 'notification' });
    await f.attempts(null, 50, { kind: 'notification', count: 2 });
    await runRetentionPass({ retention: windows() });
  });

  it('keeps the logs, checkpoint and stored pages of a read in progress', async () => {
    expect(await f.count('operations', 'id = $2', [ids.running])).toBe(1);
    expect(await f.count('operation_logs', 'operation_id = $2', [ids.running])).toBe(2);
    expect(await f.count('read_checkpoints', 'operation_id = $2', [ids.running])).toBe(1);
    expect(await f.count('stored_pages', 'operation_id = $2', [ids.running])).toBe(2);
  });

  it('keeps the checkpoint and pages of a read that failed within the window, so it can be retried', async () => {
    expect(await f.count('read_checkpoints', 'operation_id = $2', [ids.failed])).toBe(1);
    expect(await f.count('stored_pages', 'operation_id = $2', [ids.failed])).toBe(1);
  });

  it("keeps an installation's newest operation and each object's newest backfill", async () => {
    expect(await f.count('operations', 'id = $2', [ids.lonely])).toBe(1);
    expect(await f.count('operations', 'id = $2', [ids.lastBackfill])).toBe(1);
    expect(await f.count('operations', 'id = $2', [ids.write])).toBe(0);
  });

  it('keeps unrouted events and change events being delivered', async () => {
    expect(await f.count('events', 'id = $2', [ids.unrouted])).toBe(1);
    expect(await f.count('subscription_events', 'id = $2', [ids.change])).toBe(1);
  });

  it("keeps a notification's delivery attempts as long as its event", async () => {
    expect(await f.count('delivery_attempts', "kind = 'notification'")).toBe(1);
  });
});

describe('batches', () => {
  it('deletes more rows than one batch holds, one short batch after another', async () => {
    const f = await fixture();
    const old = await f.operation({ ageDays: 40, status: 'in_progress' });
    const done = await f.operation({ ageDays: 40 });
    await f.operation({ ageDays: 1 });
    // Kept rows (of the running read) interleaved with doomed ones: batches step over them.
    for (let i = 0; i < 5; i++) {
      await f.logs(done, 40, 50);
      await f.logs(old, 40, 3);
    }
    const progress = await runRetentionTask('operation-logs', { retention: windows({ batchSize: 20 }) });
    expect(await f.count('operation_logs', 'operation_id = $2', [done])).toBe(0);
    expect(await f.count('operation_logs', 'operation_id = $2', [old])).toBe(15);
    expect(progress.done).toBe(true);
    expect(progress.deleted).toBeGreaterThanOrEqual(250);
    expect(progress.batches).toBeGreaterThanOrEqual(13);
  });

  it('stops when its time budget is spent and finishes when called again', async () => {
    const f = await fixture();
    const done = await f.operation({ ageDays: 40 });
    await f.operation({ ageDays: 1 });
    await f.attempts(done, 40, { count: 100 });
    const first = await runRetentionTask('delivery-attempts', {
      budgetMs: 0,
      retention: windows({ batchSize: 10 }),
    });
    expect(first).toMatchObject({ done: false, batches: 0 });
    expect(await f.count('delivery_attempts', 'operation_id = $2', [done])).toBe(100);
    const batches: number[] = [];
    const second = await runRetentionTask('delivery-attempts', {
      retention: windows({ batchSize: 10 }),
      onBatch: (progress) => batches.push(progress.batches),
    });
    expect(second.done).toBe(true);
    expect(await f.count('delivery_attempts', 'operation_id = $2', [done])).toBe(0);
    expect(batches.length).toBe(second.batches);
    expect(second.longestBatchMs).toBeGreaterThanOrEqual(0);
  });

  it('steps over rows another transaction holds, and deletes them on a later pass', async () => {
    const f = await fixture();
    const done = await f.operation({ ageDays: 40 });
    await f.operation({ ageDays: 1 });
    await f.storedPages(done, 40, 3);
    const holder = new pg.Client({ connectionString: config().databaseUrl });
    await holder.connect();
    try {
      // A receiver's drain holds the oldest stored page while it sends it.
      await holder.query('begin');
      await holder.query(
        'select id from stored_pages where operation_id = $1 order by id limit 1 for update',
        [done],
      );
      const progress = await runRetentionTask('stored-pages', { retention: windows() });
      expect(progress.done).toBe(true);
      expect(await f.count('stored_pages', 'operation_id = $2', [done])).toBe(1);
      await holder.query('commit');
      await runRetentionTask('stored-pages', { retention: windows() });
      expect(await f.count('stored_pages', 'operation_id = $2', [done])).toBe(0);
    } finally {
      await holder.end();
    }
  });

  it('gives up on a table it cannot lock within its lock timeout instead of queueing behind it', async () => {
    const f = await fixture();
    const done = await f.operation({ ageDays: 40 });
    await f.operation({ ageDays: 1 });
    await f.attempts(done, 40, { count: 2 });
    const holder = new pg.Client({ connectionString: config().databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table delivery_attempts in exclusive mode');
      const started = Date.now();
      await expect(runRetentionTask('delivery-attempts', { retention: windows() })).rejects.toThrow(
        /lock timeout/,
      );
      expect(Date.now() - started).toBeLessThan(10_000);
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    expect(await f.count('delivery_attempts', 'operation_id = $2', [done])).toBe(2);
  });
});

describe('a failed read retried after its checkpoint was deleted', () => {
  it('starts over, and its log says the checkpoint is no longer kept', async () => {
    const f = await fixture();
    const failed = await f.operation({
      ageDays: 50,
      status: 'failure',
      metadata: { objects: ['contacts'], readType: 'backfill', progress: { recordsProcessed: 1500 } },
    });
    await f.checkpoint(failed, 50);
    await f.operation({ ageDays: 1 });
    await runRetentionTask('read-checkpoints', { retention: windows() });
    expect(await f.count('read_checkpoints', 'operation_id = $2', [failed])).toBe(0);
    const retry = randomUUID();
    await prepareReadRetry(failed, retry);
    const { rows } = await f.db.query<{ msg: string }>(
      'select msg from operation_logs where operation_id = $1 order by id',
      [retry],
    );
    expect(rows.map((row) => row.msg)).toEqual([
      `Retries operation ${failed} from the start: its checkpoint is no longer kept (retention).`,
    ]);
    expect(await f.count('read_checkpoints', 'operation_id = $2', [retry])).toBe(0);
  });
});
