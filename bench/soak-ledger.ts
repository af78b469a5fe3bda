/**
 * The soak's bookkeeping, pure: every version the bench wrote to the sandbox, every entry the
 * destination received, every read Ferry ran; and the verdict (`fidelity`). `bench/soak.ts` has the
 * definitions in its header comment; in short:
 * - a version is the state a write left a record in (a create, an update or a deletion), marked by a
 *   value of its own (`soak-<seq>`) or, for a deletion, by being one;
 * - a version is required when it stood, listed by the provider, through the whole of at least one
 *   successful read of its object: committed (its write answered, plus the commit lag) before the read
 *   began (its window's end, the instant it was planned at, or its operation's start if earlier),
 *   stamped before the end of the read's window, and not yet replaced (the next write to the
 *   record not begun) when the read ended. Such a version was in plain view of a read: missing it is
 *   a loss. A version replaced before any read
 *   could see it whole need not arrive (a read delivers what the provider shows, not its history);
 * - a record's last version (its final state, or its deletion) is required once one read ran after it
 *   committed, and it must be the last the destination received of that record;
 * - a duplicate is a version received again; under the message id of its first delivery it is a
 *   redelivery a receiver drops by that id, under another id it is a version delivered twice.
 */

import { percentile } from './support/measure.js';

export type WriteKind = 'create' | 'update' | 'delete';

/** One write to the sandbox, as the bench made it. Times in ms since the epoch, this machine's clock. */
export interface WrittenVersion {
  object: string;
  id: string;
  kind: WriteKind;
  /** `soak-<seq>` for creates and updates; `deleted` for a deletion. */
  marker: string;
  /** When the bench sent the write, and when the sandbox answered it. */
  sentAt: number;
  answeredAt: number;
  /** The modification time the sandbox stamped (ISO). */
  stamp: string;
}

/** A read of one object, from the operation's start to its end. */
export interface ReadSpan {
  object: string;
  operationId: string;
  readType: string;
  status: 'success' | 'failure' | 'in_progress';
  startedAt: number;
  endedAt: number;
  /** The end of its window (exclusive): what the provider stamped from then on is the next read's. */
  until: number;
}

/** One entry of a delivered message. */
export interface DeliveredEntry {
  object: string;
  id: string;
  /** The marker of the version delivered (`deleted` for a deletion). */
  marker: string;
  messageId: string;
  operationId: string;
  receivedAt: number;
}

export interface LostVersion {
  object: string;
  id: string;
  marker: string;
  kind: WriteKind;
  stamp: string;
  /** The reads it stood through. */
  readsThrough: string[];
}

export interface Fidelity {
  changesMade: number;
  creates: number;
  updates: number;
  deletionsMade: number;
  records: number;
  /** Versions that stood through a whole read (and every record's last version). */
  versionsRequired: number;
  /** Distinct versions received (required or not). */
  versionsDelivered: number;
  /** Required versions never received. */
  lost: number;
  lostVersions: LostVersion[];
  /** Records whose last version received is not their last version. */
  finalStatesWrong: number;
  finalStatesWrongRecords: string[];
  deletionsDelivered: number;
  /** Entries received in all. */
  entriesReceived: number;
  /** Versions received again under the message id of their first delivery. */
  duplicates: number;
  /** Versions received again under another message id. */
  duplicatesNewMessageId: number;
  duplicatesNewMessageIdExamples: string[];
  /** Received entries that match no version the bench wrote. */
  unknownEntries: number;
  /** From a required version's write answered to its first delivery (ms). */
  deliveryLatencyP50Ms: number;
  deliveryLatencyP99Ms: number;
  deliveryLatencyMaxMs: number;
}

const recordKey = (object: string, id: string) => `${object}/${id}`;

/**
 * The earliest a read may have listed: its window's end (the time it was planned at, before any page
 * is fetched), or its operation's start, whichever is earlier. A scheduled read fetches its first
 * page before it records its operation, so the operation's start alone may come after the listing.
 */
const listedFrom = (read: ReadSpan) => Math.min(read.startedAt, read.until);

/**
 * The verdict. `commitLagMs` is the longest a write may take to show in listings after its answer;
 * `versions` in the order each record received them (a record's writes are never concurrent).
 */
export function fidelity(
  versions: readonly WrittenVersion[],
  reads: readonly ReadSpan[],
  delivered: readonly DeliveredEntry[],
  commitLagMs: number,
): Fidelity {
  const byRecord = new Map<string, WrittenVersion[]>();
  for (const version of versions) {
    const key = recordKey(version.object, version.id);
    const list = byRecord.get(key) ?? [];
    list.push(version);
    byRecord.set(key, list);
  }
  const readsOf = new Map<string, ReadSpan[]>();
  for (const read of reads) {
    if (read.status !== 'success') continue;
    const list = readsOf.get(read.object) ?? [];
    list.push(read);
    readsOf.set(read.object, list);
  }

  // What arrived: first delivery of each version, duplicates, and each record's last version received.
  const firstDelivery = new Map<string, DeliveredEntry>();
  const lastReceived = new Map<string, string>();
  let duplicates = 0;
  let duplicatesNewMessageId = 0;
  const duplicateExamples: string[] = [];
  for (const entry of delivered) {
    const key = `${recordKey(entry.object, entry.id)}#${entry.marker}`;
    lastReceived.set(recordKey(entry.object, entry.id), entry.marker);
    const first = firstDelivery.get(key);
    if (!first) {
      firstDelivery.set(key, entry);
    } else if (first.messageId === entry.messageId) {
      duplicates++;
    } else {
      duplicatesNewMessageId++;
      if (duplicateExamples.length < 10)
        duplicateExamples.push(
          `${key}: ${first.messageId} (${first.operationId}) then ${entry.messageId} (${entry.operationId})`,
        );
    }
  }

  const known = new Set<string>();
  let required = 0;
  const lostVersions: LostVersion[] = [];
  const latencies: number[] = [];
  const finalStatesWrongRecords: string[] = [];
  let deletionsDelivered = 0;
  for (const [key, list] of byRecord) {
    list.forEach((version, index) => {
      const versionKey = `${key}#${version.marker}`;
      known.add(versionKey);
      const next = list[index + 1];
      const visibleFrom = version.answeredAt + commitLagMs;
      const replacedAt = next ? next.sentAt : Infinity;
      const stampedAt = Date.parse(version.stamp);
      const through = (readsOf.get(version.object) ?? []).filter(
        (read) => listedFrom(read) >= visibleFrom && stampedAt < read.until && read.endedAt <= replacedAt,
      );
      const arrived = firstDelivery.get(versionKey);
      if (version.kind === 'delete' && arrived) deletionsDelivered++;
      if (!through.length) return;
      required++;
      if (arrived) latencies.push(arrived.receivedAt - version.answeredAt);
      else
        lostVersions.push({
          object: version.object,
          id: version.id,
          marker: version.marker,
          kind: version.kind,
          stamp: version.stamp,
          readsThrough: through.map((read) => read.operationId),
        });
    });
    const last = list[list.length - 1];
    const lastReads = (readsOf.get(last.object) ?? []).some(
      (read) => listedFrom(read) >= last.answeredAt + commitLagMs && Date.parse(last.stamp) < read.until,
    );
    if (lastReads && lastReceived.get(key) !== last.marker) finalStatesWrongRecords.push(key);
  }
  const unknownEntries = delivered.filter(
    (entry) => !known.has(`${recordKey(entry.object, entry.id)}#${entry.marker}`),
  ).length;

  return {
    changesMade: versions.length,
    creates: versions.filter((version) => version.kind === 'create').length,
    updates: versions.filter((version) => version.kind === 'update').length,
    deletionsMade: versions.filter((version) => version.kind === 'delete').length,
    records: byRecord.size,
    versionsRequired: required,
    versionsDelivered: firstDelivery.size,
    lost: lostVersions.length,
    lostVersions: lostVersions.slice(0, 20),
    finalStatesWrong: finalStatesWrongRecords.length,
    finalStatesWrongRecords: finalStatesWrongRecords.slice(0, 20),
    deletionsDelivered,
    entriesReceived: delivered.length,
    duplicates,
    duplicatesNewMessageId,
    duplicatesNewMessageIdExamples: duplicateExamples,
    unknownEntries,
    deliveryLatencyP50Ms: Math.round(percentile(latencies, 50)),
    deliveryLatencyP99Ms: Math.round(percentile(latencies, 99)),
    deliveryLatencyMaxMs: Math.round(Math.max(0, ...latencies)),
  };
}

/** Whether every read of `objects` has run after `since`: the reads have caught up with the writes. */
export function caughtUp(reads: readonly ReadSpan[], objects: readonly string[], since: number): boolean {
  return objects.every((object) =>
    reads.some(
      (read) =>
        read.object === object && read.status === 'success' && read.startedAt >= since && read.until >= since,
    ),
  );
}
