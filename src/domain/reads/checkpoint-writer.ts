import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReadCheckpoint } from '../../db/entities/read-checkpoint.js';
import { em as newEntityManager } from '../../db/orm.js';
import { recordsRead } from '../../metrics.js';
import {
  completedAnswers,
  countAttempts,
  recordAttempts,
  type AttemptRecord,
} from '../destination-delivery.js';
import type { SeenVersion } from './change-window.js';
import type { ShapedPage } from './page-feed.js';
import type { ReadPlan } from './plan.js';
import { storeMessages } from './stored-pages.js';
import { fingerprintStatement } from './full-read.js';

/** The versions the pages remember, the latest of each record (one row each in `read_seen`). */
function latestVersions(
  pages: readonly ShapedPage[],
): { id: string; at: string; deleted: boolean; hash: string }[] {
  const latest = new Map<string, SeenVersion>();
  for (const page of pages) {
    for (const { id, ...version } of page.remember ?? []) {
      const known = latest.get(id);
      // A later page of the same read lists what it saw later: at one time, the later listing wins.
      if (!known || version.at >= known.at) latest.set(id, version);
    }
  }
  return [...latest].map(([id, { at, deleted, hash }]) => ({
    id,
    at: new Date(at).toISOString(),
    deleted,
    hash,
  }));
}

/**
 * Moves a read's checkpoint past pages as they are delivered (or, on request, stored), in page
 * order, without holding up the next delivery: writes run beside delivery, and pages delivered
 * while a write is in flight go together in the next one. Each write is one statement, so one
 * transaction, with everything the pages changed: checkpoint, watermark, the operation's progress,
 * the answers of their delivery attempts (recorded pending before each page was sent) and logs;
 * stored messages (on request) join it in one transaction.
 *
 * The checkpoint only moves from the page this writer expects, so a second run of the same read
 * (a retried activity whose first attempt is still alive) can never skip or double-count a page:
 * whichever writes second finds the checkpoint moved and stops (`lost`).
 */
export class CheckpointWriter {
  /** Where the checkpoint stands in the database. */
  pageIndex: number;
  /** The provider's token (or a full read's) of the page at `pageIndex`. */
  pageToken: string | undefined;
  recordsProcessed: number;
  done = false;
  /** Another run of this read moved the checkpoint: this one must stop. */
  lost = false;
  #pages: ShapedPage[] = [];
  #attempts: AttemptRecord[] = [];
  #writing: Promise<void> | undefined;
  #error: unknown;
  #clearFailures: boolean;
  /** The read's own entity manager: its writes run one after the other. */
  #em: EntityManager | undefined;

  constructor(
    private readonly checkpoint: ReadCheckpoint,
    private readonly plan: ReadPlan,
    options: { destinationHadFailures?: boolean } = {},
  ) {
    this.pageIndex = checkpoint.pageIndex;
    this.pageToken = checkpoint.pageToken ?? undefined;
    this.recordsProcessed = checkpoint.recordsProcessed;
    this.#clearFailures = options.destinationHadFailures ?? false;
  }

  /** A successful delivery, completed in the ledger with the next write. */
  attempt(record: AttemptRecord): void {
    this.#attempts.push(record);
  }

  /** Attempts of a page that will not be checkpointed now (its delivery failed part-way). */
  takeAttempts(): AttemptRecord[] {
    const attempts = this.#attempts;
    this.#attempts = [];
    return attempts;
  }

  /** The page is delivered (or is to be stored): checkpoint past it. */
  advance(page: ShapedPage): void {
    this.#pages.push(page);
    this.#kick();
  }

  /** A write failed: nothing more is written, and `flush` rethrows it. */
  get failed(): boolean {
    return this.#error !== undefined;
  }

  /** Waits until every page handed over is written; rethrows a failed write. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#error) throw this.#error;
  }

  #kick(): void {
    if (this.#writing || this.#error || this.lost) return;
    this.#writing = (async () => {
      try {
        while (this.#pages.length && !this.lost) {
          const pages = this.#pages;
          const attempts = this.#attempts;
          this.#pages = [];
          this.#attempts = [];
          await this.#write(pages, attempts);
        }
      } catch (error) {
        this.#error = error;
      } finally {
        this.#writing = undefined;
      }
    })();
  }

  async #write(pages: ShapedPage[], attempts: AttemptRecord[]): Promise<void> {
    const { plan, checkpoint } = this;
    const last = pages[pages.length - 1];
    const records = pages.reduce((sum, page) => sum + page.records, 0);
    // What the provider returned, gathered in the checkpoint: its newest change, its newest deletion
    // from a listing of deletions, its cursor at the end of the listing. The object's position takes
    // them when the read succeeds (finish.ts): a read that fails part-way through a listing not in
    // time order must not leave the pages it did not reach behind the position.
    let newest: Date | undefined;
    let newestDeleted: Date | undefined;
    for (const page of pages) {
      if (!page.newest) continue;
      if (page.deletions) {
        if (!newestDeleted || page.newest > newestDeleted) newestDeleted = page.newest;
      } else if (!newest || page.newest > newest) newest = page.newest;
    }
    const resumeCursor = last.done ? last.resumeCursor : undefined;
    const remembered = latestVersions(pages);
    const logs = pages.flatMap((page) => page.logs);
    const logTime = new Date();
    const begun = attempts.filter((attempt) => attempt.ledgerId !== undefined);
    const whole = attempts.filter((attempt) => attempt.ledgerId === undefined);
    const answers = begun.length ? completedAnswers(begun) : undefined;
    const clearFailures = this.#clearFailures && attempts.length > 0;
    const fingerprints =
      plan.fingerprints &&
      fingerprintStatement(
        plan,
        pages.flatMap((page) => page.fingerprints ?? []),
        pages.flatMap((page) => page.forget ?? []),
      );
    // One statement: the checkpoint moves from the page expected (or nothing does), and only then
    // the versions delivered, the operation's progress, the pages' logs, the answers of the pages'
    // delivery attempts and the destination's health follow it.
    const statement = `with cp as (
         update read_checkpoints
            set page_index = ?, page_token = ?, parts_delivered = 0,
                records_processed = records_processed + ?, max_updated_at = greatest(max_updated_at, ?),
                max_deleted_at = greatest(max_deleted_at, ?), resume_cursor = coalesce(?, resume_cursor),
                done = ?, update_time = now()
          where operation_id = ? and page_index = ?
         returning operation_id, records_processed
       ), seen as (
         insert into read_seen (installation_id, object_name, record_id, project_id, updated_at, deleted, content_hash)
         select ?, ?, v.id, ?, v.at, v.deleted, v.hash
           from cp, jsonb_to_recordset(?::jsonb) as v(id text, at timestamptz, deleted boolean, hash text)
         on conflict (installation_id, object_name, record_id)
         do update set updated_at = excluded.updated_at, deleted = excluded.deleted, content_hash = excluded.content_hash
          where excluded.updated_at >= read_seen.updated_at
       ), progress as (
         update operations o
            set metadata = jsonb_set(o.metadata, '{progress,recordsProcessed}', to_jsonb(cp.records_processed), true),
                update_time = now()
           from cp where o.id = cp.operation_id
       ), logs as (
         insert into operation_logs (project_id, operation_id, "timestamp", severity, msg, error, details)
         select ?, cp.operation_id, (l.entry->>'at')::timestamptz, l.entry->>'severity', l.entry->>'msg',
                l.entry->>'error', l.entry->'details'
           from cp, jsonb_array_elements(?::jsonb) with ordinality as l(entry, n)
          order by l.n
       )${fingerprints ? fingerprints.sql : ''}${
         answers
           ? `, answered as (
         update delivery_attempts a ${answers.set} from ${answers.from}, cp where a.id = v.id
       )`
           : ''
       }${
         clearFailures
           ? `, healthy as (
         update destinations d set first_failure_time = null
           from cp where d.id = ? and d.first_failure_time is not null
       )`
           : ''
       }
       select records_processed from cp`;
    const params = [
      last.pageIndex + 1,
      last.nextPageToken ?? null,
      records,
      newest ?? null,
      newestDeleted ?? null,
      resumeCursor ?? null,
      last.done,
      checkpoint.operationId,
      this.pageIndex,
      plan.installationId,
      plan.objectName,
      plan.projectId,
      JSON.stringify(remembered),
      plan.projectId,
      // As JSON, not arrays: the query builder would spread an array into a list of values.
      JSON.stringify(
        logs.map((entry) => ({
          at: entry.timestamp ?? logTime,
          severity: entry.severity,
          msg: entry.msg,
          error: entry.error ?? null,
          details: entry.details ?? {},
        })),
      ),
      ...(fingerprints?.params ?? []),
      ...(answers?.params ?? []),
      ...(clearFailures ? [plan.destinationId] : []),
    ];
    const apply = async (em: EntityManager) => {
      const rows = await em.execute<{ records_processed: number }[]>(statement, params);
      if (!rows.length) {
        this.lost = true;
        return;
      }
      if (plan.deliveryMode === 'onRequest') {
        const object = {
          projectId: plan.projectId,
          installationId: plan.installationId,
          objectName: plan.objectName,
        };
        for (const page of pages)
          await storeMessages(em, object, checkpoint.operationId, page.pageIndex, page.parts);
      }
      await recordAttempts(em, whole);
      if (clearFailures) this.#clearFailures = false;
      this.pageIndex = last.pageIndex + 1;
      this.pageToken = last.nextPageToken;
      this.recordsProcessed = rows[0].records_processed;
      this.done = last.done;
    };
    const em = (this.#em ??= await newEntityManager());
    // Stored pages, and attempts recorded whole, take statements of their own: then one transaction.
    if (plan.deliveryMode === 'onRequest' || whole.length) await em.transactional(apply);
    else await apply(em);
    // Counted once committed; a run that lost the checkpoint to another counted nothing.
    if (this.lost) return;
    countAttempts(begun);
    if (records) recordsRead.inc({ delivery_mode: plan.deliveryMode }, records);
  }
}
