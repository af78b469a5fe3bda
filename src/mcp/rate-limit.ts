/**
 * Tool calls one session may make: a bucket of `perMinute` calls that refills continuously, so an
 * agent in a loop is slowed to the limit rather than cut off for a whole minute.
 */
export class CallLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly perMinute: number,
    now = Date.now(),
  ) {
    this.tokens = perMinute;
    this.last = now;
  }

  /** Takes one call; false (and how long until the next is allowed) when the bucket is empty. */
  take(now = Date.now()): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    this.tokens = Math.min(this.perMinute, this.tokens + ((now - this.last) * this.perMinute) / 60_000);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: Math.ceil(((1 - this.tokens) * 60) / this.perMinute) };
  }
}
