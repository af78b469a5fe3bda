import { idOf, indexOf, type Generator, type SandboxRecord } from './data.js';
import { objectNames, type ObjectName, type ObjectSchemas } from './schema.js';

/** What a deleted record leaves in listings that ask for deletions. */
export interface Tombstone {
  id: string;
  updatedAt: string;
  deleted: true;
}

/** Position in the (updatedAt, id) order; listings resume strictly after it. */
export interface ListKey {
  updatedAtMs: number;
  id: string;
}

export interface ListQuery {
  after?: ListKey;
  /** Inclusive lower bound on updatedAt (ms). */
  since?: number;
  /** Exclusive upper bound on updatedAt (ms). */
  until?: number;
  limit: number;
  includeDeleted?: boolean;
  /** Only records whose fields equal these values (deletions never match). */
  where?: FieldEquals[];
}

/** A field and the value it must equal. */
export interface FieldEquals {
  field: string;
  value: unknown;
}

function matches(record: Record<string, unknown>, where: FieldEquals[] | undefined): boolean {
  return (where ?? []).every(({ field, value }) => (record[field] ?? null) === value);
}

export interface ListItem {
  key: ListKey;
  value: SandboxRecord | Tombstone;
}

/** A record changed through the API; `record` is absent once deleted. */
interface OverlayEntry {
  id: string;
  updatedAtMs: number;
  record?: SandboxRecord;
  /** Listings show the change from then on (a commit later than its stamp); gets show it at once. */
  visibleFromMs?: number;
}

/**
 * How true to real providers the sandbox's timestamps are: stamped in whole seconds (as Salesforce,
 * Zendesk and Pipedrive write them), and committed up to `commitLagMs` after the time they carry
 * (as a transaction stamped when it began). Off by default; the soak benchmark turns them on.
 */
export interface StampRealism {
  precision: 'millisecond' | 'second';
  commitLagMs: number;
}

function isAfter(key: ListKey, after: ListKey | undefined): boolean {
  if (!after) return true;
  return key.updatedAtMs > after.updatedAtMs || (key.updatedAtMs === after.updatedAtMs && key.id > after.id);
}

function inWindow(ms: number, query: ListQuery): boolean {
  return (query.since === undefined || ms >= query.since) && (query.until === undefined || ms < query.until);
}

/**
 * The generated dataset plus an in-memory overlay of API changes. An overlay entry hides the
 * generated record with the same id, and every write is stamped later than all generated records,
 * so listings are "generated range, minus overlaid ids, then overlay in write order".
 */
export class RecordStore {
  // Map iteration order is insertion order; writes re-insert, so each map stays sorted by updatedAt.
  private overlays = new Map<ObjectName, Map<string, OverlayEntry>>();
  private createdCount = new Map<ObjectName, number>();
  private lastWriteMs = 0;

  constructor(
    private readonly generator: Generator,
    private readonly schemas: ObjectSchemas,
    private readonly realism: StampRealism = { precision: 'millisecond', commitLagMs: 0 },
    private readonly random: () => number = Math.random,
  ) {
    this.reset();
  }

  reset(): void {
    for (const object of objectNames) {
      this.overlays.set(object, new Map());
      this.createdCount.set(object, 0);
    }
  }

  get(object: ObjectName, id: string): SandboxRecord | undefined {
    const entry = this.overlay(object).get(id);
    if (entry) return entry.record;
    const index = indexOf(object, id);
    return index !== undefined && index < this.generator.count(object)
      ? this.generator.record(object, index)
      : undefined;
  }

  create(object: ObjectName, values: Record<string, unknown>): SandboxRecord {
    const index = this.generator.count(object) + this.createdCount.get(object)!;
    this.createdCount.set(object, this.createdCount.get(object)! + 1);
    const now = this.nextWriteTime();
    const stamp = new Date(now).toISOString();
    const empty = Object.fromEntries(
      this.schemas
        .fields(object)
        .filter((f) => !f.custom && !f.readOnly)
        .map((f) => [f.name, null]),
    );
    const record = { id: idOf(object, index), ...empty, ...values, createdAt: stamp, updatedAt: stamp };
    this.write(object, { id: record.id, updatedAtMs: now, record });
    return record;
  }

  /** Applies the values; returns the new record and the fields whose value actually changed. */
  update(
    object: ObjectName,
    id: string,
    values: Record<string, unknown>,
  ): { record: SandboxRecord; changedFields: string[] } | undefined {
    const current = this.get(object, id);
    if (!current) return undefined;
    const changedFields = Object.keys(values).filter(
      (name) => JSON.stringify(current[name] ?? null) !== JSON.stringify(values[name]),
    );
    const now = this.nextWriteTime();
    const record = { ...current, ...values, updatedAt: new Date(now).toISOString() };
    this.write(object, { id, updatedAtMs: now, record });
    return { record, changedFields };
  }

  /** Returns whether the record existed. */
  delete(object: ObjectName, id: string): boolean {
    if (!this.get(object, id)) return false;
    this.write(object, { id, updatedAtMs: this.nextWriteTime() });
    return true;
  }

  /** Up to limit+1 items after query.after, so the caller knows whether another page exists. */
  list(object: ObjectName, query: ListQuery): ListItem[] {
    const want = query.limit + 1;
    const items: ListItem[] = [];
    const overlay = this.overlay(object);
    const count = this.generator.count(object);
    let index = query.since === undefined ? 0 : this.generator.firstIndexAtOrAfter(object, query.since);
    const end = query.until === undefined ? count : this.generator.firstIndexAtOrAfter(object, query.until);
    if (query.after) {
      index = Math.max(index, this.generator.firstIndexAtOrAfter(object, query.after.updatedAtMs));
    }
    for (; index < end && items.length < want; index++) {
      const id = idOf(object, index);
      if (overlay.has(id)) continue; // changed later: listed with the overlay
      const key = { updatedAtMs: this.generator.updatedAtOf(object, index), id };
      if (!isAfter(key, query.after)) continue;
      const record = this.generator.record(object, index);
      if (matches(record, query.where)) items.push({ key, value: record });
    }
    const now = Date.now();
    for (const entry of this.listedOverlay(overlay)) {
      if (items.length >= want) break;
      // A change not committed yet is listed nowhere: neither its new version nor its old one.
      if (entry.visibleFromMs !== undefined && entry.visibleFromMs > now) continue;
      const key = { updatedAtMs: entry.updatedAtMs, id: entry.id };
      if (!inWindow(entry.updatedAtMs, query) || !isAfter(key, query.after)) continue;
      if (entry.record) {
        if (matches(entry.record, query.where)) items.push({ key, value: entry.record });
      } else if (query.includeDeleted && !query.where?.length) {
        const updatedAt = new Date(entry.updatedAtMs).toISOString();
        items.push({ key, value: { id: entry.id, updatedAt, deleted: true } });
      }
    }
    return items;
  }

  /** Live records updated in [since, until): an index range, corrected by the overlay. */
  count(object: ObjectName, since?: number, until?: number): number {
    const start = since === undefined ? 0 : this.generator.firstIndexAtOrAfter(object, since);
    const end =
      until === undefined ? this.generator.count(object) : this.generator.firstIndexAtOrAfter(object, until);
    let total = Math.max(0, end - start);
    for (const entry of this.overlay(object).values()) {
      const index = indexOf(object, entry.id)!;
      if (index >= start && index < end) total--; // a generated record that moved or went away
      if (entry.record && inWindow(entry.updatedAtMs, { since, until, limit: 0 })) total++;
    }
    return total;
  }

  private overlay(object: ObjectName): Map<string, OverlayEntry> {
    return this.overlays.get(object)!;
  }

  private write(object: ObjectName, entry: OverlayEntry): void {
    const overlay = this.overlay(object);
    overlay.delete(entry.id);
    const lag = this.realism.commitLagMs;
    overlay.set(
      entry.id,
      lag > 0 ? { ...entry, visibleFromMs: Date.now() + Math.round(this.random() * lag) } : entry,
    );
  }

  /**
   * The overlay in (updatedAt, id) order. Writes stamped in strictly increasing milliseconds are in
   * that order already; whole-second stamps tie, and ties are listed by id so cursors hold.
   */
  private listedOverlay(overlay: Map<string, OverlayEntry>): Iterable<OverlayEntry> {
    if (this.realism.precision === 'millisecond') return overlay.values();
    return [...overlay.values()].sort(
      (a, b) => a.updatedAtMs - b.updatedAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
  }

  /**
   * After every generated record; strictly increasing milliseconds, so overlay order is updatedAt
   * order; or, with whole-second stamps, the second of the write (ties allowed).
   */
  private nextWriteTime(): number {
    if (this.realism.precision === 'second') {
      const second = Math.floor(Date.now() / 1000) * 1000;
      this.lastWriteMs = Math.max(second, Math.ceil(this.generator.anchorMs / 1000) * 1000, this.lastWriteMs);
      return this.lastWriteMs;
    }
    this.lastWriteMs = Math.max(Date.now(), this.generator.anchorMs, this.lastWriteMs + 1);
    return this.lastWriteMs;
  }
}
