import { mix32 } from './random.js';

const dayMs = 86_400_000;
/** Generated records were "last updated" spread over roughly the two years before the anchor. */
export const timelineSpanMs = 730 * dayMs;

/**
 * The updatedAt of generated record i: start + i·step + jitter(i) with jitter in [0, step).
 * That keeps timestamps irregular yet strictly increasing with i, so "first record updated at or
 * after t" is one division instead of a scan, and a million records cost no memory.
 */
export class Timeline {
  readonly step: number;
  readonly start: number;

  constructor(
    readonly count: number,
    anchorMs: number,
    private readonly salt: number,
  ) {
    this.step = Math.max(1, Math.floor(timelineSpanMs / Math.max(count, 1)));
    this.start = anchorMs - count * this.step;
  }

  at(index: number): number {
    const jitter = this.step > 1 ? mix32(this.salt ^ mix32(index)) % this.step : 0;
    return this.start + index * this.step + jitter;
  }

  /** The first index whose timestamp is >= t (count when none): record i-1 < t <= record i. */
  firstAtOrAfter(t: number): number {
    if (t <= this.start) return 0;
    const index = Math.floor((t - this.start) / this.step);
    if (index >= this.count) return this.count;
    return this.at(index) >= t ? index : index + 1;
  }
}

/** Midnight UTC of the given instant: the default anchor, stable for a day so data repeats across restarts. */
export function startOfUtcDay(ms: number): number {
  return Math.floor(ms / dayMs) * dayMs;
}
