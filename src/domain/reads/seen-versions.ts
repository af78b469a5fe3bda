import type { EntityManager } from '@mikro-orm/postgresql';
import type { SeenVersion } from './change-window.js';

/**
 * The versions of an object's records delivered lately (`read_seen`), so that what a scheduled
 * read's overlap shows again is recognised. Rows are written with the checkpoint of the page that
 * delivered them (checkpoint-writer.ts) and pruned when a read finishes: only versions within the
 * overlap of the newest change are kept, a handful per object.
 */

export interface SeenObject {
  installationId: string;
  objectName: string;
}

/** The versions delivered lately of these records, by record id. */
export async function seenVersions(
  em: EntityManager,
  object: SeenObject,
  recordIds: readonly string[],
): Promise<Map<string, SeenVersion>> {
  const seen = new Map<string, SeenVersion>();
  if (!recordIds.length) return seen;
  const rows = await em.execute<
    { record_id: string; updated_at: Date | string; deleted: boolean; content_hash: string }[]
  >(
    `select record_id, updated_at, deleted, content_hash from read_seen
      where installation_id = ? and object_name = ? and record_id = any(?::text[])`,
    [object.installationId, object.objectName, textArray(recordIds)],
  );
  for (const row of rows) {
    seen.set(row.record_id, {
      at: new Date(row.updated_at).getTime(),
      deleted: row.deleted,
      hash: row.content_hash,
    });
  }
  return seen;
}

/**
 * A PostgreSQL text array literal, for `= any(?::text[])`: the planner sees the values and probes
 * the key's index for each (an array built in SQL from JSON hides them, and a scan follows).
 */
export function textArray(items: readonly string[]): string {
  return `{${items.map((text) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

/**
 * Forgets versions no later read can see again: older than the overlap before the object's
 * newest change (and, for deletions from a listing of their own, before its newest deletion).
 */
export async function forgetOldVersions(
  em: EntityManager,
  object: SeenObject,
  overlaps: { overlapMs: number; deletionsOverlapMs: number },
): Promise<void> {
  await em.execute(
    `delete from read_seen s using read_watermarks w
      where s.installation_id = ? and s.object_name = ?
        and w.installation_id = s.installation_id and w.object_name = s.object_name
        and s.updated_at < least(
              coalesce(w.watermark - make_interval(secs => ?::double precision / 1000), '-infinity'),
              coalesce(w.deleted_watermark - make_interval(secs => ?::double precision / 1000), w.watermark - make_interval(secs => ?::double precision / 1000), '-infinity'))`,
    [
      object.installationId,
      object.objectName,
      overlaps.overlapMs,
      overlaps.deletionsOverlapMs,
      overlaps.overlapMs,
    ],
    'run',
  );
}
