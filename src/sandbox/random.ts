/**
 * Seeded, stateless randomness: everything the sandbox generates is a pure function of
 * (seed, salt, index), so record i can be rebuilt at any time without storing it.
 */

/** A 32-bit integer hash (murmur3's finalizer) with good avalanche, cheap enough to call per field. */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hashes a short string (an object name, a purpose) into a salt. */
export function saltOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** mulberry32: a tiny, fast PRNG; returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The random stream of one generated record. Index may exceed 2^32, hence the two-part mix. */
export function recordRandom(seed: number, salt: number, index: number): () => number {
  const low = index % 4294967296;
  const high = Math.floor(index / 4294967296);
  return prng(mix32(mix32(mix32(seed ^ salt) ^ low) + high));
}

/** Picks one element with the given stream. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

/** An integer in [min, max]. */
export function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
