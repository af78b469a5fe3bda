import { describe, expect, it } from '@jest/globals';
import { providerSince } from '../../src/providers/declarative/read.js';

/** The start a listing is asked from: its precision, its bound, and how far back the provider reaches. */
describe('providerSince', () => {
  const changes = { precision: 'second', since: 'inclusive', until: 'unbounded', lagSeconds: 0 } as const;
  const now = new Date('2026-11-28T12:00:00.000Z');

  it('floors to the precision, and a unit earlier for an exclusive bound', () => {
    const since = new Date('2026-11-20T10:00:00.700Z');
    expect(providerSince(since, changes, now)?.toISOString()).toBe('2026-11-20T10:00:00.000Z');
    expect(providerSince(since, { ...changes, since: 'exclusive' }, now)?.toISOString()).toBe(
      '2026-11-20T09:59:59.000Z',
    );
  });

  it('asks from the oldest start the provider allows (an hour inside it), never older', () => {
    const thirtyDays = { ...changes, historySeconds: 30 * 86_400 };
    expect(providerSince(new Date('2024-01-01T00:00:00Z'), thirtyDays, now)?.toISOString()).toBe(
      '2026-10-29T13:00:00.000Z',
    );
    // A start within reach is kept as it is.
    expect(providerSince(new Date('2026-11-20T10:00:00Z'), thirtyDays, now)?.toISOString()).toBe(
      '2026-11-20T10:00:00.000Z',
    );
    expect(providerSince(undefined, thirtyDays, now)).toBeUndefined();
  });
});
