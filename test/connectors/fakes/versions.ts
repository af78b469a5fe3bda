/**
 * Records as a provider's listings see them, for the fakes of Asana, Linear, monday.com, Notion and
 * Shopify: each record keeps its latest version and, while that version is not yet visible (a
 * change that commits late, an index that catches up late), the version before it, which listings
 * go on showing until then. Deleted records stay, marked, for fakes whose provider reveals them.
 */

export interface Version<T> {
  record: T;
  modifiedMs: number;
}

export interface Row<T> {
  id: string;
  /** Insertion order, a stable key for ties and for keyset cursors. */
  order: number;
  current: Version<T>;
  /** When listings start showing `current`. */
  visibleFromMs: number;
  /** The version listings show until `visibleFromMs`, when there was one. */
  previous?: Version<T>;
  deletedMs?: number;
}

export class VersionedStore<T> {
  readonly rows = new Map<string, Row<T>>();
  #order = 0;

  constructor(private readonly clone: (record: T) => T = (record) => structuredClone(record)) {}

  add(id: string, record: T, modifiedMs: number, visibleFromMs = modifiedMs): Row<T> {
    const row: Row<T> = { id, order: this.#order++, current: { record, modifiedMs }, visibleFromMs };
    this.rows.set(id, row);
    return row;
  }

  /** The live row (not deleted). */
  row(id: string): Row<T> | undefined {
    const row = this.rows.get(id);
    return row && row.deletedMs === undefined ? row : undefined;
  }

  get(id: string): T | undefined {
    return this.row(id)?.current.record;
  }

  /**
   * A new version stamped `modifiedMs`, made by `apply` on the record. When it becomes visible
   * only later than `now`, the version listings showed until now is kept for them.
   */
  change(
    id: string,
    modifiedMs: number,
    apply: (record: T) => void,
    options: { now: number; visibleFromMs?: number },
  ): Row<T> {
    const row = this.row(id);
    if (!row) throw new Error(`no record ${id}`);
    const visibleFromMs = options.visibleFromMs ?? modifiedMs;
    const shown = this.visible(row, options.now);
    if (visibleFromMs > options.now) {
      row.previous = shown && { record: this.clone(shown.record), modifiedMs: shown.modifiedMs };
    } else {
      row.previous = undefined;
    }
    apply(row.current.record);
    row.current.modifiedMs = modifiedMs;
    row.visibleFromMs = visibleFromMs;
    return row;
  }

  remove(id: string, atMs: number): Row<T> | undefined {
    const row = this.row(id);
    if (!row) return undefined;
    row.deletedMs = atMs;
    row.previous = undefined;
    return row;
  }

  /** The version a listing shows at `now`, if any. */
  visible(row: Row<T>, now: number): Version<T> | undefined {
    if (row.deletedMs !== undefined) return undefined;
    return now >= row.visibleFromMs ? row.current : row.previous;
  }

  /** Live rows, in insertion order. */
  live(): Row<T>[] {
    return [...this.rows.values()].filter((row) => row.deletedMs === undefined);
  }

  /** What listings show at `now`: each live record's visible version, in insertion order. */
  listed(now: number): (Version<T> & { row: Row<T> })[] {
    const listed: (Version<T> & { row: Row<T> })[] = [];
    for (const row of this.live()) {
      const version = this.visible(row, now);
      if (version) listed.push({ ...version, row });
    }
    return listed;
  }

  /** Deleted rows, in insertion order. */
  removed(): Row<T>[] {
    return [...this.rows.values()].filter((row) => row.deletedMs !== undefined);
  }
}
