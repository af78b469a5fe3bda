import type { EntityManager } from '@mikro-orm/postgresql';
import type { RetentionConfig } from '../config.js';
import { em as newEntityManager } from '../db/orm.js';
import {
  RETENTION_TASKS,
  type RetentionProgress,
  type RetentionTask,
} from '../temporal/contracts/retention.js';

export { RETENTION_TASKS, type RetentionProgress, type RetentionTask };

/**
 * Retention: deleting what runs leave behind once its window (FERRY_RETENTION_*) has passed, in
 * small batches so the hot tables never wait on the cleanup. Each batch is one short transaction
 * with a `lock_timeout` and a `statement_timeout`, and takes its rows `for update skip locked`, so
 * a row another transaction holds is left for the next pass instead of waited for.
 *
 * What is kept past its window, because something still needs it:
 * - logs, checkpoints and stored pages of an operation still in progress (a read resumes from its
 *   checkpoint; its pages wait for the receiver);
 * - a read's checkpoint and stored pages for the window counted from when the read ended, so a
 *   failed read can be retried from its last delivered page within it;
 * - notification events not yet routed, and the delivery attempts of a notification for as long as
 *   the event itself (a redelivery skips destinations whose attempt succeeded);
 * - change events whose delivery is in progress (their row holds the message being sent);
 * - an installation's newest operation (its `lastOperationStatus`), and each object's newest
 *   backfill (`backfill-progress`).
 *
 * Each table is walked oldest first along an index on (time written, key), every batch resuming
 * after the last row the one before took, so rows kept past their window are stepped over once per
 * pass, not once per batch.
 */

export interface RetentionOptions {
  /** Stop starting batches after this long and report `done: false` (the caller calls again). */
  budgetMs?: number;
  /** Called after every batch (activities heartbeat here). */
  onBatch?: (progress: RetentionProgress) => void;
  /** The windows and batch size (FERRY_RETENTION_*), handed in by the activity. */
  retention: RetentionConfig;
}

const LOCK_TIMEOUT = '2s';
const STATEMENT_TIMEOUT = '60s';

type Batch = (tx: EntityManager) => Promise<{ deleted: number; more: boolean }>;

class Run {
  readonly progress: RetentionProgress;
  readonly #deadline: number;

  constructor(
    task: RetentionTask,
    private readonly options: RetentionOptions,
  ) {
    this.progress = { task, deleted: 0, batches: 0, longestBatchMs: 0, done: false };
    this.#deadline = Date.now() + (options.budgetMs ?? Number.POSITIVE_INFINITY);
  }

  get outOfTime(): boolean {
    return Date.now() >= this.#deadline;
  }

  /** Runs batches until one says there is no more or the budget is spent. Returns false when out of time. */
  async repeat(batch: Batch): Promise<boolean> {
    for (;;) {
      if (this.outOfTime) return false;
      const more = await this.once(batch);
      if (!more) return true;
    }
  }

  /** One batch in a transaction of its own. */
  async once(batch: Batch): Promise<boolean> {
    const started = performance.now();
    const { deleted, more } = await bounded(batch);
    const ms = performance.now() - started;
    this.progress.deleted += deleted;
    this.progress.batches++;
    this.progress.longestBatchMs = Math.max(this.progress.longestBatchMs, Math.round(ms));
    this.options.onBatch?.({ ...this.progress });
    return more;
  }
}

/**
 * Runs `work` in a transaction of its own that gives up rather than waits: on a lock after
 * LOCK_TIMEOUT, on any statement after STATEMENT_TIMEOUT. JIT is off: these statements are small,
 * and compiling them would take longer than running them.
 */
async function bounded<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
  const em = await newEntityManager();
  return em.transactional(async (tx) => {
    await tx.execute(
      `set local lock_timeout = '${LOCK_TIMEOUT}'; set local statement_timeout = '${STATEMENT_TIMEOUT}'; set local jit = off`,
      [],
      'run',
    );
    return work(tx);
  });
}

async function cutoffOf(days: number): Promise<Date> {
  const em = await newEntityManager();
  const [row] = await em.execute<{ cutoff: Date }[]>('select now() - make_interval(days => ?) as cutoff', [
    days,
  ]);
  return new Date(row.cutoff);
}

interface AgedTable {
  table: string;
  key: string;
  /** When the row was written; never updated (see the retention migration's indexes). */
  time: string;
}

interface Cursor {
  time: string;
  key: string;
}

/**
 * Deletes rows of `table` written before `cutoff`, oldest first, in batches, skipping rows `keep`
 * (an SQL condition on alias `t`, with `keepParams`) holds on to.
 */
async function deleteByAge(
  run: Run,
  spec: AgedTable & { where?: string; keep?: string; params?: unknown[] },
  cutoff: Date,
  batchSize: number,
): Promise<boolean> {
  const { table, key, time } = spec;
  let cursor: Cursor | undefined;
  return run.repeat(async (tx) => {
    const [row] = await tx.execute<{ deleted: number; at: string | null; k: string | null }[]>(
      `with doomed as (
         select t.ctid as row, t.${key} as k, t.${time} as at from ${table} t
          where t.${time} < ?
            ${cursor ? `and (t.${time}, t.${key}) > (?::timestamptz, ?)` : ''}
            ${spec.where ? `and ${spec.where}` : ''}
            ${spec.keep ? `and not (${spec.keep})` : ''}
          order by t.${time}, t.${key} limit ?
          for update of t skip locked
       ), gone as (
         delete from ${table} t where t.ctid = any(array(select row from doomed)) returning 1
       ), last as (select at, k from doomed order by at desc, k desc limit 1)
       select (select count(*)::int from gone) as deleted, last.at::text as at, last.k::text as k
         from (select 1) one left join last on true`,
      [cutoff, ...(cursor ? [cursor.time, cursor.key] : []), ...(spec.params ?? []), batchSize],
    );
    if (row.at !== null && row.k !== null) cursor = { time: row.at, key: row.k };
    return { deleted: row.deleted, more: row.deleted >= batchSize };
  });
}

const operationInProgress = `exists (select 1 from operations o where o.id = t.operation_id and o.status = 'in_progress')`;

async function operationLogs(run: Run, retention: RetentionConfig): Promise<boolean> {
  return deleteByAge(
    run,
    { table: 'operation_logs', key: 'id', time: 'timestamp', keep: operationInProgress },
    await cutoffOf(retention.operationLogsDays),
    retention.batchSize,
  );
}

async function deliveryAttempts(run: Run, retention: RetentionConfig): Promise<boolean> {
  const records = await cutoffOf(retention.deliveryAttemptsDays);
  const notifications = await cutoffOf(Math.max(retention.deliveryAttemptsDays, retention.eventsDays));
  return deleteByAge(
    run,
    {
      table: 'delivery_attempts',
      key: 'id',
      time: 'create_time',
      where: `(t.kind <> 'notification' or t.create_time < ?)`,
      params: [notifications],
    },
    records,
    retention.batchSize,
  );
}

/** A read's pages and checkpoint stay while it runs, and for the window after it ended (a failed read resumes from them). */
const readRunningOrEndedSince = `exists (select 1 from operations o where o.id = t.operation_id
                      and (o.status = 'in_progress' or o.update_time >= ?))`;

async function storedPages(run: Run, retention: RetentionConfig): Promise<boolean> {
  const cutoff = await cutoffOf(retention.storedPagesDays);
  return deleteByAge(
    run,
    {
      table: 'stored_pages',
      key: 'id',
      time: 'create_time',
      keep: readRunningOrEndedSince,
      params: [cutoff],
    },
    cutoff,
    retention.batchSize,
  );
}

async function readCheckpoints(run: Run, retention: RetentionConfig): Promise<boolean> {
  const cutoff = await cutoffOf(retention.readCheckpointsDays);
  return deleteByAge(
    run,
    {
      table: 'read_checkpoints',
      key: 'operation_id',
      time: 'create_time',
      keep: readRunningOrEndedSince,
      params: [cutoff],
    },
    cutoff,
    retention.batchSize,
  );
}

/**
 * Fingerprints of full reads (read_fingerprints) whose object left its installation's config: they
 * describe records no read will compare again. The objects holding fingerprints are found by a skip
 * scan of the key (one probe per object, however many records), then emptied in batches. Those of a
 * deleted installation went with it (cascade).
 */
async function readFingerprints(run: Run, retention: RetentionConfig): Promise<boolean> {
  const objects = await (
    await newEntityManager()
  ).execute<{ installation_id: string; object_name: string }[]>(
    `with recursive held as (
       (select installation_id, object_name from read_fingerprints order by installation_id, object_name limit 1)
       union all
       select next.installation_id, next.object_name from held, lateral (
         select f.installation_id, f.object_name from read_fingerprints f
          where (f.installation_id, f.object_name) > (held.installation_id, held.object_name)
          order by f.installation_id, f.object_name limit 1) next
     )
     select held.installation_id, held.object_name from held
       join installations i on i.id = held.installation_id
       join installation_configs c on c.id = i.config_id
      where c.content->'read'->'objects'->held.object_name is null`,
  );
  for (const object of objects) {
    const finished = await run.repeat(async (tx) => {
      const [row] = await tx.execute<{ deleted: number }[]>(
        `with doomed as (
           select f.ctid as row from read_fingerprints f
            where f.installation_id = ? and f.object_name = ? limit ? for update of f skip locked
         ), gone as (
           delete from read_fingerprints f where f.ctid = any(array(select row from doomed)) returning 1
         )
         select count(*)::int as deleted from gone`,
        [object.installation_id, object.object_name, retention.batchSize],
      );
      return { deleted: row.deleted, more: row.deleted >= retention.batchSize };
    });
    if (!finished) return false;
  }
  return true;
}

async function subscriptionEvents(run: Run, retention: RetentionConfig): Promise<boolean> {
  return deleteByAge(
    run,
    { table: 'subscription_events', key: 'id', time: 'create_time', keep: operationInProgress },
    await cutoffOf(retention.subscriptionEventsDays),
    retention.batchSize,
  );
}

/** Routed notification events, project by project along the index the events listing uses. */
async function events(run: Run, retention: RetentionConfig): Promise<boolean> {
  const cutoff = await cutoffOf(retention.eventsDays);
  const projects = await (
    await newEntityManager()
  ).execute<{ id: string }[]>('select id from projects order by id');
  for (const project of projects) {
    const finished = await run.repeat(async (tx) => {
      const [row] = await tx.execute<{ deleted: number }[]>(
        `with doomed as (
           select t.id from events t
            where t.project_id = ? and t.create_time < ? and t.routed_time is not null
            order by t.create_time limit ?
            for update of t skip locked
         ), gone as (delete from events t using doomed where t.id = doomed.id returning t.id)
         select count(*)::int as deleted from gone`,
        [project.id, cutoff, retention.batchSize],
      );
      return { deleted: row.deleted, more: row.deleted >= retention.batchSize };
    });
    if (!finished) return false;
  }
  return true;
}

/** What names an operation, deleted before it (each has an index leading with `operation_id`). */
const OPERATION_CHILDREN = [
  { table: 'operation_logs' },
  { table: 'delivery_attempts' },
  { table: 'stored_pages' },
  { table: 'schema_watch_messages' },
  { table: 'read_checkpoints' },
  { table: 'write_record_sends' },
] as const;

/**
 * Finished operations past the window, oldest first (by `seq`), with everything that names them:
 * their children go first, in batches, so deleting the operation cascades to nothing.
 */
async function operations(run: Run, retention: RetentionConfig): Promise<boolean> {
  const cutoff = await cutoffOf(retention.operationsDays);
  // By now their own windows (shorter by default) have taken most children: half a batch at once.
  const operationBatch = Math.max(1, Math.floor(retention.batchSize / 2));
  let cursor: Cursor | undefined;
  for (;;) {
    if (run.outOfTime) return false;
    const candidates = await bounded((tx) =>
      tx.execute<{ id: string; time: string }[]>(
        `select o.id, o.create_time::text as time from operations o
        where o.create_time < ? ${cursor ? 'and (o.create_time, o.id) > (?::timestamptz, ?)' : ''}
          and o.status <> 'in_progress' and o.update_time < ?
          and exists (select 1 from operations n where n.installation_id = o.installation_id and n.seq > o.seq)
          and not (o.action_type = 'read' and o.metadata @> '{"backfill": true}' and not exists (
                select 1 from operations n
                 where n.installation_id = o.installation_id and n.seq > o.seq and n.action_type = 'read'
                   and n.metadata @> '{"backfill": true}'
                   and n.metadata->'progress'->>'objectName' = o.metadata->'progress'->>'objectName'))
        order by o.create_time, o.id limit ?`,
        [cutoff, ...(cursor ? [cursor.time, cursor.key] : []), cutoff, operationBatch],
      ),
    );
    if (!candidates.length) return true;
    const last = candidates[candidates.length - 1];
    cursor = { time: last.time, key: last.id };
    const ids = `{${candidates.map((candidate) => candidate.id).join(',')}}`;
    // Every child table in one transaction, each at most a batch, until none has any left.
    const childrenGone = await run.repeat(async (tx) => {
      let deleted = 0;
      let more = false;
      for (const child of OPERATION_CHILDREN) {
        const [row] = await tx.execute<{ deleted: number }[]>(
          `with doomed as (
             select t.ctid as row from ${child.table} t where t.operation_id = any(?::uuid[])
              limit ? for update of t skip locked
           ), gone as (
             delete from ${child.table} t where t.ctid = any(array(select row from doomed)) returning 1
           )
           select count(*)::int as deleted from gone`,
          [ids, retention.batchSize],
        );
        deleted += row.deleted;
        more ||= row.deleted >= retention.batchSize;
      }
      return { deleted, more };
    });
    if (!childrenGone) return false;
    await run.once(async (tx) => {
      const [row] = await tx.execute<{ deleted: number }[]>(
        `with doomed as (
           select o.ctid as row from operations o where o.id = any(?::uuid[]) and o.status <> 'in_progress'
           for update of o skip locked
         ), gone as (delete from operations o where o.ctid = any(array(select row from doomed)) returning 1)
         select count(*)::int as deleted from gone`,
        [ids],
      );
      return { deleted: row.deleted, more: false };
    });
    if (candidates.length < operationBatch) return true;
  }
}

const STEPS: Record<RetentionTask, (run: Run, retention: RetentionConfig) => Promise<boolean>> = {
  'operation-logs': operationLogs,
  'delivery-attempts': deliveryAttempts,
  'stored-pages': storedPages,
  'read-checkpoints': readCheckpoints,
  'read-fingerprints': readFingerprints,
  'subscription-events': subscriptionEvents,
  events,
  operations,
};

/** One task of a cleanup pass: deletes its table's expired rows until none are left or the budget is spent. */
export async function runRetentionTask(
  task: RetentionTask,
  options: RetentionOptions,
): Promise<RetentionProgress> {
  const run = new Run(task, options);
  run.progress.done = await STEPS[task](run, options.retention);
  return run.progress;
}

/** A whole pass, every task in order (the bench and `ferry` tooling; the workflow calls tasks one by one). */
export async function runRetentionPass(options: RetentionOptions): Promise<RetentionProgress[]> {
  const results: RetentionProgress[] = [];
  for (const task of RETENTION_TASKS) {
    let progress = await runRetentionTask(task, options);
    while (!progress.done) {
      const next = await runRetentionTask(task, options);
      progress = {
        ...next,
        deleted: progress.deleted + next.deleted,
        batches: progress.batches + next.batches,
        longestBatchMs: Math.max(progress.longestBatchMs, next.longestBatchMs),
      };
    }
    results.push(progress);
  }
  return results;
}
