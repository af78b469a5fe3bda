import { describe, expect, it } from '@jest/globals';
import {
  alreadyDelivered,
  contentHash,
  scheduledWindow,
  undelivered,
  versionsToRemember,
} from '../../src/domain/reads/change-window.js';
import type { ProviderRecord } from '../../src/providers/connector.js';

const tracking = {
  overlapMs: 61_000,
  deletions: 'marked' as const,
  deletionsOverlapMs: 0,
  resumable: true,
  precisionMs: 1000,
  deletionsPrecisionMs: 1000,
};
const at = (iso: string, id = 'a', deleted = false): ProviderRecord => ({
  id,
  updatedAt: iso,
  raw: {},
  ...(deleted && { deleted }),
});

describe('where a scheduled read starts', () => {
  it('from the newest change the provider returned less the overlap, never from the end of the last window', () => {
    const watermark = Date.parse('2026-03-01T10:00:00Z');
    const window = scheduledWindow({ watermark }, tracking, new Date('2026-01-01T00:00:00Z'));
    expect(window.since).toEqual(new Date(watermark - 61_000));
    expect(window.deletedSince).toEqual(new Date(watermark));
    expect(window.resumeFrom).toBeUndefined();
  });

  it("from the provider's own cursor when the listing keeps one", () => {
    const window = scheduledWindow({ resumeCursor: 'c9' }, tracking, new Date('2026-01-01T00:00:00Z'));
    expect(window.resumeFrom).toBe('c9');
    expect(window.since).toEqual(new Date(Date.parse('2026-01-01T00:00:00Z') - 61_000));
  });
});

describe('what an overlap shows again', () => {
  const hash = contentHash(at('2026-03-01T10:00:00Z'));

  it('is recognised by id and time: the same version or an older one is left out, a newer one is delivered', () => {
    const seen = { at: Date.parse('2026-03-01T10:00:00Z'), deleted: false, hash };
    expect(alreadyDelivered(at('2026-03-01T10:00:00Z'), seen)).toBe(true);
    expect(alreadyDelivered(at('2026-03-01T09:59:59Z'), seen)).toBe(true);
    expect(alreadyDelivered(at('2026-03-01T10:00:01Z'), seen)).toBe(false);
    expect(alreadyDelivered(at('2026-03-01T10:00:00Z'), undefined)).toBe(false);
  });

  it('still delivers a second change stamped in the same second, told apart by its content', () => {
    const seen = { at: Date.parse('2026-03-01T10:00:00Z'), deleted: false, hash };
    const edited: ProviderRecord = { ...at('2026-03-01T10:00:00Z'), raw: { name: 'edited again' } };
    expect(alreadyDelivered(edited, seen)).toBe(false);
  });

  it('still delivers a deletion stamped in the same second as the edit delivered before it', () => {
    const seen = { at: Date.parse('2026-03-01T10:00:00Z'), deleted: false, hash };
    expect(alreadyDelivered(at('2026-03-01T10:00:00Z', 'a', true), seen)).toBe(false);
    expect(alreadyDelivered(at('2026-03-01T10:00:00Z'), { ...seen, deleted: true })).toBe(true);
  });

  it('never recognises a record that carries no time', () => {
    const timeless: ProviderRecord = { id: 'a', raw: {} };
    expect(undelivered([timeless], new Map([['a', { at: 0, deleted: false, hash }]]))).toEqual([timeless]);
  });

  it('is remembered only within the overlap of the newest change', () => {
    const records = [
      at('2026-03-01T09:00:00Z', 'old'),
      at('2026-03-01T09:59:30Z', 'near'),
      at('2026-03-01T10:00:00Z', 'new'),
    ];
    const newest = Date.parse('2026-03-01T10:00:00Z');
    expect(versionsToRemember(records, newest, 61_000).map((version) => version.id)).toEqual(['near', 'new']);
  });
});
