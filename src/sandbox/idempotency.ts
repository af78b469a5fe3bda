import { isDeepStrictEqual } from 'node:util';
import { apiError } from './errors.js';

/**
 * Idempotent creates, as Stripe's `Idempotency-Key` works: the first create under a key runs and its
 * answer is kept; a create under the same key with the same parameters gets that answer again (the
 * same record, marked `Idempotent-Replayed: true`) without creating anything; the same key with other
 * parameters is refused with 400. Keys are at most 255 characters and kept for 24 hours. A create the
 * sandbox refused (invalid values) keeps nothing: it created nothing, and a retry is judged afresh.
 */

export const IDEMPOTENCY_KEY_MAX = 255;
const KEPT_MS = 24 * 60 * 60 * 1000;

interface KeptAnswer {
  object: string;
  params: unknown;
  status: number;
  body: unknown;
  location: string;
  time: number;
}

export interface IdempotentAnswer {
  status: number;
  body: unknown;
  location: string;
  replayed: boolean;
}

export class IdempotentCreates {
  readonly #kept = new Map<string, KeptAnswer>();

  /**
   * Runs `create` once per key: a replay answers what the first create answered. Without a key,
   * every call creates.
   */
  run(
    key: string | undefined,
    object: string,
    params: unknown,
    create: () => { status: number; body: unknown; location: string },
    now = Date.now(),
  ): IdempotentAnswer {
    if (key === undefined) return { ...create(), replayed: false };
    if (!key.length || key.length > IDEMPOTENCY_KEY_MAX) {
      throw apiError(
        400,
        'idempotency_error',
        `The Idempotency-Key header must be 1 to ${IDEMPOTENCY_KEY_MAX} characters.`,
      );
    }
    this.#forgetOld(now);
    const kept = this.#kept.get(key);
    if (kept) {
      if (kept.object !== object || !isDeepStrictEqual(kept.params, params)) {
        throw apiError(
          400,
          'idempotency_error',
          'Keys for idempotent requests can only be used with the same parameters they were first used with.',
        );
      }
      return { status: kept.status, body: kept.body, location: kept.location, replayed: true };
    }
    const answer = create();
    this.#kept.set(key, { object, params, ...answer, time: now });
    return { ...answer, replayed: false };
  }

  reset(): void {
    this.#kept.clear();
  }

  #forgetOld(now: number): void {
    // Map order is insertion order, so the oldest keys come first.
    for (const [key, kept] of this.#kept) {
      if (now - kept.time < KEPT_MS) break;
      this.#kept.delete(key);
    }
  }
}
