import { createHash } from 'node:crypto';
import type { ChangeTracking, ProviderRecord } from '../../providers/connector.js';

/**
 * How scheduled reads follow an object's changes without losing one or delivering one twice. Pure:
 * the read pipeline keeps the position and the recently delivered records in PostgreSQL, the
 * conformance kit in memory, and both apply these rules.
 *
 * - A read's next start comes from what the provider returned, never from Ferry's clock: the
 *   provider's own cursor where its listing resumes from one, otherwise the newest modification
 *   time delivered, less the object's overlap (its lag and one unit of its precision). A change the
 *   provider shows late, or stamped in the second a read ended, is inside the next read's window.
 * - What the overlap shows again is recognised by id, modification time and content, and left out:
 *   a second change within the same whole second (same time, new content) is still delivered.
 * - Deletions from a listing of their own follow their own newest time.
 */

/** Where an object's reads stand, from what the provider returned. Times in ms since the epoch. */
export interface ChangePosition {
  /** The newest modification time delivered. */
  watermark?: number;
  /** The newest deletion delivered from a listing of deletions. */
  deletedWatermark?: number;
  /** The provider's own cursor, where the object's listing resumes from one. */
  resumeCursor?: string;
}

/** A record delivered lately: when the provider stamped the version delivered, whether it was a deletion, and its content. */
export interface SeenVersion {
  at: number;
  deleted: boolean;
  /** `contentHash` of the version delivered. */
  hash: string;
}

/** A short fingerprint of a record as the provider sent it: two versions stamped alike but different tell apart. */
export function contentHash(record: ProviderRecord): string {
  return createHash('sha1').update(JSON.stringify(record.raw)).digest('base64url').slice(0, 16);
}

export interface ScheduledWindow {
  since: Date;
  deletedSince: Date;
  resumeFrom?: string;
}

/**
 * The start of a scheduled read. `start` stands in for a watermark no read has set yet (the
 * installation's creation): the overlap applies to it too.
 */
export function scheduledWindow(
  position: ChangePosition,
  tracking: ChangeTracking,
  start: Date,
): ScheduledWindow {
  const changesFrom = position.watermark ?? start.getTime();
  const deletionsFrom = position.deletedWatermark ?? changesFrom;
  return {
    since: new Date(changesFrom - tracking.overlapMs),
    deletedSince: new Date(deletionsFrom - tracking.deletionsOverlapMs),
    ...(tracking.resumable && position.resumeCursor !== undefined && { resumeFrom: position.resumeCursor }),
  };
}

function timeOf(record: ProviderRecord): number | undefined {
  if (!record.updatedAt) return undefined;
  const time = Date.parse(record.updatedAt);
  return Number.isNaN(time) ? undefined : time;
}

/**
 * Whether this version of the record was delivered already: a version seen at a later time, or one
 * stamped at the same time with the same content. At the same time, a deletion after an edit is
 * delivered (an edit and a delete in one second are two changes), and an edit after a deletion is
 * not. Records without a time are never recognised.
 */
export function alreadyDelivered(record: ProviderRecord, seen: SeenVersion | undefined): boolean {
  const time = timeOf(record);
  if (seen === undefined || time === undefined) return false;
  if (seen.at !== time) return seen.at > time;
  if (seen.deleted !== (record.deleted === true)) return seen.deleted;
  return seen.hash === contentHash(record);
}

/**
 * How far before the newest change (and the newest deletion) delivered versions are remembered:
 * the overlap, and one unit of precision more, since a provider asked from a time it rounds down
 * lists up to that much earlier.
 */
export function memoryOf(tracking: ChangeTracking): { overlapMs: number; deletionsOverlapMs: number } {
  return {
    overlapMs: tracking.overlapMs + tracking.precisionMs,
    deletionsOverlapMs: tracking.deletionsOverlapMs + tracking.deletionsPrecisionMs,
  };
}

/** The records of a page not delivered before. */
export function undelivered(
  records: readonly ProviderRecord[],
  seen: ReadonlyMap<string, SeenVersion>,
): ProviderRecord[] {
  return records.filter((record) => !alreadyDelivered(record, seen.get(record.id)));
}

/** The newest time among the records (ms), or undefined when none says. */
export function newestTime(records: readonly ProviderRecord[]): number | undefined {
  let newest: number | undefined;
  for (const record of records) {
    const time = timeOf(record);
    if (time !== undefined && (newest === undefined || time > newest)) newest = time;
  }
  return newest;
}

/**
 * The delivered versions a later read may see again: those within `overlapMs` of the newest time
 * delivered so far (`newest`, this page's included). Older ones are below every later window.
 */
export function versionsToRemember(
  records: readonly ProviderRecord[],
  newest: number | undefined,
  overlapMs: number,
): ({ id: string } & SeenVersion)[] {
  if (newest === undefined) return [];
  const from = newest - overlapMs;
  const kept: ({ id: string } & SeenVersion)[] = [];
  for (const record of records) {
    const time = timeOf(record);
    if (time !== undefined && time >= from)
      kept.push({ id: record.id, at: time, deleted: record.deleted === true, hash: contentHash(record) });
  }
  return kept;
}
