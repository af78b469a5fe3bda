import pg from 'pg';
import { benchEnvironment } from './support/database.js';
import { options } from '../src/cli/options.js';

/**
 * `npm run bench:retention -- [--records 1000000] [--installations 100] [--days 120] [--batch-size 1000]`
 *
 * Fills a fresh database with the rows N delivered records leave behind, spread evenly over the last
 * `days` days, then runs one cleanup pass with the default windows and reports table sizes and row
 * counts before and after, the pass's time and its slowest batch. A writer beside the pass inserts
 * log rows, records an attempt and moves a checkpoint every 20 ms, as a running read does, alone
 * for 5 s and then during the pass: its transaction times show what the cleanup costs the hot tables. The last line printed is one JSON object.
 *
 * The rows are generated in SQL, shaped as the read pipeline writes them (src/domain/reads): per read
 * an operation (metadata with window and progress) and its checkpoint (the plan), a start log, one
 * DEBUG request log per provider page and a summary log; per delivered message one delivery attempt;
 * for installations whose objects deliver on request (one in ten), every message stored as a page
 * (a body of random text of the message's size, so TOAST cannot compress it away) and never asked
 * for. Half the records come from one backfill per installation (500-record pages), half from
 * scheduled reads of 20 records (one page each); each backfill raises `read.backfill.done`,
 * delivered to one destination (a notification attempt).
 */

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

const TABLES = [
  'operations',
  'operation_logs',
  'read_checkpoints',
  'delivery_attempts',
  'stored_pages',
  'events',
] as const;

/** A JSON record as a read delivers it, about this many bytes (fields, mappedFields and raw). */
const RECORD_BYTES = 400;

async function tableFigures(db: pg.Client): Promise<Record<string, { rows: number; mb: number }>> {
  const figures: Record<string, { rows: number; mb: number }> = {};
  for (const table of TABLES) {
    const { rows } = await db.query<{ rows: string; bytes: string }>(
      `select (select count(*) from ${table}) as rows, pg_total_relation_size('${table}') as bytes`,
    );
    figures[table] = {
      rows: Number(rows[0].rows),
      mb: Number((Number(rows[0].bytes) / 1024 ** 2).toFixed(1)),
    };
  }
  return figures;
}

export async function fill(
  db: pg.Client,
  options: { records: number; installations: number; days: number },
): Promise<void> {
  const { records, installations, days } = options;
  const backfillRecords = Math.floor(records / 2 / installations);
  const scheduledReads = Math.floor(records / 2 / 20);
  await db.query(`
    insert into orgs (id, name) values ('00000000-0000-4000-8000-000000000001', 'bench');
    insert into projects (id, org_id, name, app_name)
      values ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'bench', 'bench');
    insert into integrations (id, project_id, name, provider, latest_revision_id)
      values ('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000002', 'crm', 'sandbox',
              '00000000-0000-4000-8000-000000000003');
    insert into destinations (id, project_id, name, type, url, secrets_encrypted)
      values ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000002', 'hooks', 'webhook',
              'https://hooks.example.com/ferry', 'sealed');
    create temporary table bench_installations as
      select gen_random_uuid() as id, gen_random_uuid() as group_id, gen_random_uuid() as consumer_id,
             gen_random_uuid() as connection_id, g as n, g % 10 = 0 as on_request
        from generate_series(1, ${installations}) g;
    insert into groups (id, project_id, group_ref, group_name)
      select group_id, '00000000-0000-4000-8000-000000000002', 'group-' || n, 'Group ' || n from bench_installations;
    insert into consumers (id, project_id, consumer_ref, consumer_name)
      select consumer_id, '00000000-0000-4000-8000-000000000002', 'user-' || n, 'User ' || n from bench_installations;
    insert into connections (id, project_id, provider, group_id, consumer_id, auth_scheme, status, credentials_encrypted)
      select connection_id, '00000000-0000-4000-8000-000000000002', 'sandbox', group_id, consumer_id, 'apiKey',
             'operational', 'sealed' from bench_installations;
    insert into installations (id, project_id, integration_id, group_id, connection_id, config_id, created_by)
      select id, '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003', group_id,
             connection_id, id, 'bench' from bench_installations;
  `);
  // Every read, oldest first (so keys grow with time, as they do when reads really run).
  await db.query(`
    create temporary table bench_reads as
      select gen_random_uuid() as id, i.id as installation_id, i.on_request, r.backfill, r.records,
             ceil(r.records / (case when r.backfill then 500.0 else 20.0 end))::int as pages,
             now() - make_interval(secs => r.age * ${days} * 86400) as started
        from (
          select (g - 1) % ${installations} + 1 as n, true as backfill, ${backfillRecords} as records, random() as age
            from generate_series(1, ${installations}) g
          union all
          select (g - 1) % ${installations} + 1, false, 20, random() from generate_series(1, ${scheduledReads}) g
        ) r
        join bench_installations i on i.n = r.n
       order by r.age desc;
    insert into operations (id, project_id, integration_id, installation_id, config_id, action_type, status, result, metadata, create_time, update_time)
      select id, '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003', installation_id,
             installation_id, 'read', 'success', 'Read ' || records || ' contacts in ' || pages || ' pages.',
             jsonb_build_object('objects', jsonb_build_array('contacts'), 'readType', case when backfill then 'backfill' else 'scheduled' end,
               'backfill', backfill, 'window', jsonb_build_object('since', started - interval '1 hour', 'until', started),
               'destination', 'hooks', 'progress', jsonb_build_object('installationId', installation_id,
               'objectName', 'contacts', 'operationId', id, 'recordsProcessed', records)),
             started, started + make_interval(secs => pages * 0.5)
        from bench_reads order by started;
    insert into read_checkpoints (operation_id, project_id, installation_id, object_name, plan, page_index, records_processed, max_updated_at, done, create_time, update_time)
      select id, '00000000-0000-4000-8000-000000000002', installation_id, 'contacts',
             jsonb_build_object('projectId', '00000000-0000-4000-8000-000000000002', 'installationId', installation_id,
               'objectName', 'contacts', 'readType', case when backfill then 'backfill' else 'scheduled' end,
               'until', started, 'advancesWatermark', true, 'pageSize', 500, 'deliveryMode', case when on_request then 'onRequest' else 'auto' end,
               'destinationId', '00000000-0000-4000-8000-000000000004', 'destinationName', 'hooks',
               'selection', jsonb_build_object('fields', jsonb_build_array('email', 'firstname', 'lastname', 'company', 'phone')),
               'context', jsonb_build_object('action', 'read', 'provider', 'sandbox', 'groupRef', 'group', 'groupName', 'Group',
                 'consumerRef', 'user', 'consumerName', 'User', 'installationId', installation_id, 'objectName', 'contacts',
                 'rawObjectName', 'contacts', 'operationId', id, 'operationTime', started),
               'eventBase', jsonb_build_object('installationId', installation_id, 'objectName', 'contacts')),
             pages, records, started, true, started, started + make_interval(secs => pages * 0.5)
        from bench_reads order by started;
    insert into operation_logs (project_id, operation_id, timestamp, severity, msg, details)
      select '00000000-0000-4000-8000-000000000002', id, at, severity, msg, details from (
        select r.id, r.started as at, 'INFO' as severity, 'Started ' || case when r.backfill then 'backfill' else 'scheduled' end
                 || ' read of contacts until ' || r.started || ', delivering to destination "hooks".' as msg,
               jsonb_build_object('deliveryMode', 'auto', 'pageSize', 500) as details, 0 as o
          from bench_reads r
        union all
        select r.id, r.started + make_interval(secs => p * 0.5), 'DEBUG',
               'GET /api/v1/contacts?page_size=500&cursor=… → 200 (84 ms)',
               jsonb_build_object('request', jsonb_build_object('method', 'GET', 'url', '/api/v1/contacts'),
                 'response', jsonb_build_object('status', 200), 'durationMs', 84, 'attempt', 1), p
          from bench_reads r, generate_series(1, r.pages) p
        union all
        select r.id, r.started + make_interval(secs => r.pages * 0.5 + 0.1), 'INFO',
               'Read ' || r.records || ' contacts in ' || r.pages || ' pages.',
               jsonb_build_object('recordsProcessed', r.records, 'pages', r.pages), r.pages + 1
          from bench_reads r
      ) l order by at, o;
    insert into delivery_attempts (project_id, destination_id, message_id, attempt, kind, operation_id, delivered, status, duration_ms, create_time)
      select '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000004',
             'msg_' || md5(r.id::text || p), 1, 'record', r.id, true, 200, 35, r.started + make_interval(secs => p * 0.5)
        from bench_reads r, generate_series(1, r.pages) p
       where not r.on_request
       order by 10;
    insert into stored_pages (project_id, installation_id, object_name, operation_id, page_index, part_index, message_id, num_records, body, create_time)
      select '00000000-0000-4000-8000-000000000002', r.installation_id, 'contacts', r.id, p - 1, 0,
             'msg_' || md5(r.id::text || p), least(500, r.records),
             (select string_agg(md5(random()::text || r.id || p || k), '')
                from generate_series(1, (least(500, r.records) * ${RECORD_BYTES} / 32)::int) k),
             r.started + make_interval(secs => p * 0.5)
        from bench_reads r, generate_series(1, r.pages) p
       where r.on_request
       order by 10;
    insert into events (id, project_id, type, data, create_time, routed_time)
      select gen_random_uuid(), '00000000-0000-4000-8000-000000000002', 'read.backfill.done',
             jsonb_build_object('installationId', installation_id, 'objectName', 'contacts', 'operationId', id),
             started + make_interval(secs => pages * 0.5), started + make_interval(secs => pages * 0.5 + 1)
        from bench_reads where backfill order by started;
    insert into delivery_attempts (project_id, destination_id, message_id, attempt, kind, delivered, status, duration_ms, create_time)
      select project_id, '00000000-0000-4000-8000-000000000004', 'msg_' || md5(id::text), 1, 'notification', true, 200, 20,
             routed_time from events order by routed_time;
  `);
  await db.query('vacuum analyze');
}

/** A running read's writes beside the cleanup: a log row and a checkpoint move every 20 ms. */
function startHotWriter(databaseUrl: string): {
  stop(): Promise<{ transactions: number; p50Ms: number; p99Ms: number; slowestMs: number }>;
} {
  const db = new pg.Client({ connectionString: databaseUrl });
  let stopped = false;
  const times: number[] = [];
  const loop = (async () => {
    await db.connect();
    const { rows } = await db.query<{ id: string }>(
      `insert into operations (id, project_id, integration_id, installation_id, config_id, action_type, status, metadata)
       select gen_random_uuid(), project_id, integration_id, id, id, 'read', 'in_progress', '{}' from installations limit 1
       returning id`,
    );
    const operationId = rows[0].id;
    await db.query(
      `insert into read_checkpoints (operation_id, project_id, installation_id, object_name, plan)
       select id, project_id, installation_id, 'contacts', '{}' from operations where id = $1`,
      [operationId],
    );
    for (let page = 1; !stopped; page++) {
      const started = performance.now();
      await db.query('begin');
      await db.query(
        `update read_checkpoints set page_index = $2, records_processed = records_processed + 500, update_time = now()
          where operation_id = $1`,
        [operationId, page],
      );
      await db.query(
        `insert into operation_logs (project_id, operation_id, severity, msg)
         select project_id, id, 'DEBUG', 'GET /api/v1/contacts → 200 (80 ms)' from operations where id = $1`,
        [operationId],
      );
      await db.query(
        `insert into delivery_attempts (project_id, destination_id, message_id, attempt, kind, operation_id, delivered, status, duration_ms)
         select project_id, '00000000-0000-4000-8000-000000000004', 'hot_' || $2, 1, 'record', id, true, 200, 30
           from operations where id = $1`,
        [operationId, page],
      );
      await db.query('commit');
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await db.end();
      times.sort((a, b) => a - b);
      const at = (q: number) =>
        Number((times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0).toFixed(1));
      return { transactions: times.length, p50Ms: at(0.5), p99Ms: at(0.99), slowestMs: at(1) };
    },
  };
}

export async function benchRetention(args: string[]): Promise<void> {
  const opts = options(args, {
    records: { type: 'string' },
    installations: { type: 'string' },
    days: { type: 'string' },
    'batch-size': { type: 'string' },
  });
  const records = Number(opts.records ?? 1_000_000);
  const installations = Number(opts.installations ?? 100);
  const days = Number(opts.days ?? 120);
  const batchSize = Number(opts['batch-size'] ?? 1000);
  for (const [name, value] of Object.entries({ records, installations, days, batchSize })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  }

  const bench = benchEnvironment('ferry_bench_retention', { FERRY_RETENTION_BATCH_SIZE: String(batchSize) });
  const databaseUrl = bench.databaseUrl;

  // The database is all this bench creates; it goes however the bench ends, a signal included.
  let dropped = false;
  const dropDatabase = async () => {
    if (dropped) return;
    dropped = true;
    await bench.drop();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    say(`${signal}: dropping the bench database`);
    dropDatabase()
      .catch((error) => say(`cleanup: ${String(error)}`))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const db = new pg.Client({ connectionString: databaseUrl });
  try {
    const { resetConfig, config } = await import('../src/config.js');
    resetConfig();
    const { migrate } = await import('../src/db/orm.js');
    await migrate(databaseUrl);
    await db.connect();

    say(`generating the rows of ${records.toLocaleString('en-US')} delivered records over ${days} days`);
    const fillStarted = Date.now();
    await fill(db, { records, installations, days });
    say(`generated in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s`);
    const before = await tableFigures(db);

    const { RETENTION_TASKS, runRetentionTask } = await import('../src/domain/retention.js');
    // The writer alone first, for as long as the pass will roughly take: its figures without a cleanup.
    say('a running read writing alone for 5 s');
    const alone = startHotWriter(databaseUrl);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const hotAlone = await alone.stop();
    const writer = startHotWriter(databaseUrl);
    await new Promise((resolve) => setTimeout(resolve, 200));
    say('running one cleanup pass with the default windows');
    const started = performance.now();
    // The pass the workflow runs: every task in order, each until done (no time budget here).
    const tasks = [];
    const taskSeconds: Record<string, number> = {};
    for (const task of RETENTION_TASKS) {
      const taskStarted = performance.now();
      tasks.push(await runRetentionTask(task, { retention: config().retention }));
      taskSeconds[task] = Number(((performance.now() - taskStarted) / 1000).toFixed(2));
    }
    const passSeconds = (performance.now() - started) / 1000;
    const hot = await writer.stop();
    const after = await tableFigures(db);
    // Plain VACUUM (autovacuum's) makes the space reusable: the tables stop growing. VACUUM FULL
    // (locking; only here, to measure) shows what the kept rows take once the files are rewritten.
    await db.query('vacuum');
    const afterVacuum = await tableFigures(db);
    await db.query('vacuum full');
    const afterVacuumFull = await tableFigures(db);

    const summary = {
      records,
      installations,
      days,
      windows: config().retention,
      passSeconds: Number(passSeconds.toFixed(2)),
      longestBatchMs: Math.max(...tasks.map((task) => task.longestBatchMs)),
      batches: tasks.reduce((sum, task) => sum + task.batches, 0),
      deleted: Object.fromEntries(tasks.map((task) => [task.task, task.deleted])),
      taskSeconds,
      longestBatchMsByTask: Object.fromEntries(tasks.map((task) => [task.task, task.longestBatchMs])),
      hotWriter: { alone: hotAlone, duringPass: hot },
      tables: Object.fromEntries(
        TABLES.map((table) => [
          table,
          {
            rowsBefore: before[table].rows,
            rowsAfter: after[table].rows,
            mbBefore: before[table].mb,
            mbAfter: after[table].mb,
            mbAfterVacuum: afterVacuum[table].mb,
            mbAfterVacuumFull: afterVacuumFull[table].mb,
          },
        ]),
      ),
      totalMbBefore: Number(TABLES.reduce((sum, table) => sum + before[table].mb, 0).toFixed(1)),
      totalMbAfterVacuum: Number(TABLES.reduce((sum, table) => sum + afterVacuum[table].mb, 0).toFixed(1)),
      totalMbAfterVacuumFull: Number(
        TABLES.reduce((sum, table) => sum + afterVacuumFull[table].mb, 0).toFixed(1),
      ),
    };
    await db.end();
    await dropDatabase();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    await db.end().catch(() => undefined);
    await dropDatabase().catch((cleanup) => say(`cleanup: ${String(cleanup)}`));
    throw error;
  }
}
