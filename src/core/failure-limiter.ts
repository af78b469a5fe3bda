/**
 * Counts failures per key in a sliding window and says when a key has failed too often: a flood of
 * badly signed webhooks is answered 429 before any lookup or signature check, so it cannot slow the
 * API. Pure and in memory (one per process); time is passed in.
 */
export class FailureLimiter {
  readonly #failures = new Map<string, number[]>();

  constructor(
    readonly maxFailures: number,
    readonly windowMs: number,
    readonly maxKeys = 10_000,
  ) {}

  /** Milliseconds until the key may try again; 0 when it may now. */
  blockedFor(key: string, now: number): number {
    const times = this.#recent(key, now);
    return times.length >= this.maxFailures ? times[0] + this.windowMs - now : 0;
  }

  fail(key: string, now: number): void {
    if (!this.#failures.has(key) && this.#failures.size >= this.maxKeys) {
      // Forget the oldest key rather than grow without bound under an attack on many keys.
      this.#failures.delete(this.#failures.keys().next().value!);
    }
    const times = this.#recent(key, now);
    times.push(now);
    if (times.length > this.maxFailures) times.shift();
    this.#failures.set(key, times);
  }

  #recent(key: string, now: number): number[] {
    const times = (this.#failures.get(key) ?? []).filter((time) => time > now - this.windowMs);
    if (times.length) this.#failures.set(key, times);
    else this.#failures.delete(key);
    return times;
  }
}
