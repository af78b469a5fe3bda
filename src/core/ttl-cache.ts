/**
 * A small in-process cache whose entries expire: what a process found lately (a verified API key,
 * a project, a subscription, a connection's credentials), answered again for a few seconds instead
 * of asked of the database each time. Bounded: when full, the entries set longest ago go first.
 * Per process, so another process sees a change once the entry expires.
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The value, unless it is missing or expired (an expired one is dropped). */
  get(key: K, now = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: K, value: V, now = Date.now()): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, until: now + this.ttlMs });
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
