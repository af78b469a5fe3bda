import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReadPlan } from './plan.js';
import { textArray } from './seen-versions.js';

/**
 * Full reads with change detection, for objects whose provider cannot list what changed since a
 * time (`read.fullRead`). Every read walks the whole listing; `read_fingerprints` keeps, per record,
 * a hash of the entry last delivered for it and the read that last listed it (`seen_by`).
 *
 * - Each page is compared with the stored fingerprints of its own records, one query a page: a
 *   scheduled read delivers the records without one (new) or with another (changed). Nothing holds
 *   more than a page.
 * - Fingerprints move with the checkpoint, in its statement (checkpoint-writer.ts): a page is marked
 *   seen only once its messages are delivered, so a read that stops before that reads the page again,
 *   finds the same changes and sends them under the same message ids.
 * - After the listing's last page, and only once every page of it is checkpointed, the records this
 *   read did not list are found in SQL and delivered as deletions marked `inferred`, a page at a
 *   time, each page's fingerprints removed with its checkpoint. A walk that fails or stops part-way
 *   never gets there: it infers nothing.
 * - Backfills deliver everything and refresh the fingerprints; a record gone since the last read is
 *   left to the next scheduled read to report.
 *
 * What is hashed is the entry as the builder receives it (`{fields, mappedFields, raw}`, its exact
 * JSON), not the provider's whole record nor the chosen fields alone: a change the builder would see
 * anywhere in its message is delivered, one it would not see (a field Ferry did not ask for) is not,
 * and a change of the chosen fields or mappings delivers each record once in its new shape, so the
 * builder's copy takes the new fields without a backfill.
 */

/** A listed record's fingerprint: its id and the hash of its entry (hex). */
export interface Fingerprint {
  id: string;
  hash: string;
}

/** Inferred deletions per page. */
export const INFERRED_DELETIONS_PAGE = 1000;

const INFERRED = 'ferry-inferred-deletions:';

/** The page token of inferred deletions after `after` (a record id; '' for the first page). */
export function inferredDeletionsToken(after = ''): string {
  return `${INFERRED}${after}`;
}

/** Where a page token of inferred deletions continues (a record id), or undefined for a provider's token. */
export function inferredDeletionsAfter(token: string | undefined): string | undefined {
  return token?.startsWith(INFERRED) ? token.slice(INFERRED.length) : undefined;
}

/** The fingerprint of an entry as delivered: 128 bits of its SHA-256. */
export function fingerprintOf(entry: Buffer): string {
  return createHash('sha256').update(entry).digest().subarray(0, 16).toString('hex');
}

/** The stored fingerprints of these records, by record id (one query). */
async function storedFingerprints(
  em: EntityManager,
  plan: ReadPlan,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await em.execute<{ record_id: string; hash: string }[]>(
    `select record_id, encode(content_hash, 'hex') as hash from read_fingerprints
      where installation_id = ? and object_name = ?
        and record_id = any(?::text[])`,
    [plan.installationId, plan.objectName, textArray(ids)],
  );
  return new Map(rows.map((row) => [row.record_id, row.hash]));
}

/**
 * A listed page against its fingerprints: the entries to deliver (all of them, or with `changedOnly`
 * those new or changed) and every record's fingerprint, to mark once the page is delivered.
 */
export async function compareFingerprints(
  em: EntityManager,
  plan: ReadPlan,
  ids: readonly string[],
  encoded: readonly Buffer[],
): Promise<{ ids: string[]; encoded: Buffer[]; fingerprints: Fingerprint[] }> {
  const fingerprints = ids.map((id, index) => ({ id, hash: fingerprintOf(encoded[index]) }));
  if (!plan.fingerprints?.changedOnly) return { ids: [...ids], encoded: [...encoded], fingerprints };
  const stored = await storedFingerprints(em, plan, ids);
  const changed = fingerprints.flatMap(({ id, hash }, index) => (stored.get(id) === hash ? [] : [index]));
  return {
    ids: changed.map((index) => ids[index]),
    encoded: changed.map((index) => encoded[index]),
    fingerprints,
  };
}

/**
 * The next records this read did not list, after `after` in id order. Asked only once every listed
 * page is checkpointed (page-feed.ts pauses there), so each listed record is marked by then.
 */
export async function unlistedRecords(
  em: EntityManager,
  plan: ReadPlan,
  after: string,
  limit = INFERRED_DELETIONS_PAGE,
): Promise<string[]> {
  const rows = await em.execute<{ record_id: string }[]>(
    `select record_id from read_fingerprints
      where installation_id = ? and object_name = ? and record_id > ? and seen_by <> ?::uuid
      order by record_id limit ?`,
    [plan.installationId, plan.objectName, after, plan.context.operationId, limit],
  );
  return rows.map((row) => row.record_id);
}

/**
 * Ends a successful scheduled full read that delivers no deletions (`delivery.deletions: false`):
 * the fingerprints of records it did not list are dropped, so they are not kept for ever.
 */
export async function forgetUnlisted(em: EntityManager, plan: ReadPlan): Promise<void> {
  if (!plan.fingerprints?.changedOnly || plan.fingerprints.inferDeletions) return;
  await em.execute(
    `delete from read_fingerprints where installation_id = ? and object_name = ? and seen_by <> ?::uuid`,
    [plan.installationId, plan.objectName, plan.context.operationId],
    'run',
  );
}

/**
 * The checkpoint statement's part for full reads (see CheckpointWriter): marks the pages' records
 * seen by this read with their fingerprints, and forgets the records inferred deleted. `cp` is the
 * checkpoint's own CTE: nothing happens unless the checkpoint moved.
 */
export function fingerprintStatement(
  plan: ReadPlan,
  fingerprints: readonly Fingerprint[],
  forgotten: readonly string[],
): { sql: string; params: unknown[] } {
  // One row per record: a record listed twice in one write (changed mid-walk) keeps its last version.
  const latest = new Map(fingerprints.map(({ id, hash }) => [id, hash]));
  const sql: string[] = [];
  const params: unknown[] = [];
  if (latest.size) {
    sql.push(`, marked as (
         insert into read_fingerprints (installation_id, object_name, record_id, content_hash, seen_by)
         select ?, ?, f.id, decode(f.hash, 'hex'), ?::uuid
           from cp, jsonb_to_recordset(?::jsonb) as f(id text, hash text)
         on conflict (installation_id, object_name, record_id)
         do update set content_hash = excluded.content_hash, seen_by = excluded.seen_by
       )`);
    const rows = [...latest].map(([id, hash]) => ({ id, hash }));
    params.push(plan.installationId, plan.objectName, plan.context.operationId, JSON.stringify(rows));
  }
  if (forgotten.length) {
    sql.push(`, forgotten as (
         delete from read_fingerprints f using cp
          where f.installation_id = ? and f.object_name = ? and f.record_id = any(?::text[])
       )`);
    params.push(plan.installationId, plan.objectName, textArray(forgotten));
  }
  return { sql: sql.join(''), params };
}
