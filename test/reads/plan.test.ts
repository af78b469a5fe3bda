import { describe, expect, it } from '@jest/globals';
import { providerFields, readPlanOf, readSelection, readWindow } from '../../src/domain/reads/plan.js';
import { ReadSetupError } from '../../src/domain/reads/failures.js';
import { readSummary } from '../../src/domain/reads/finish.js';

const now = new Date('2026-06-15T12:00:00.000Z');
const created = new Date('2026-06-01T00:00:00.000Z');
const day = 24 * 3600 * 1000;

describe('readWindow', () => {
  const tracking = {
    overlapMs: 61_000,
    deletions: 'listing' as const,
    deletionsOverlapMs: 1_000,
    resumable: false,
    precisionMs: 1,
    deletionsPrecisionMs: 1,
  };

  it('reads a scheduled window from the overlap before the newest change delivered until now', () => {
    const watermark = Date.parse('2026-06-15T11:00:00.000Z');
    const deletedWatermark = Date.parse('2026-06-15T10:00:00.000Z');
    expect(
      readWindow({
        readType: 'scheduled',
        now,
        position: { watermark, deletedWatermark },
        tracking,
        installationCreateTime: created,
      }),
    ).toEqual({
      since: new Date(watermark - 61_000),
      until: now,
      advancesWatermark: true,
      deletedSince: new Date(deletedWatermark - 1_000),
    });
  });

  it('starts a first scheduled read at the installation’s creation, less the overlap', () => {
    expect(readWindow({ readType: 'scheduled', now, tracking, installationCreateTime: created })).toEqual({
      since: new Date(created.getTime() - 61_000),
      until: now,
      advancesWatermark: true,
      deletedSince: new Date(created.getTime() - 1_000),
    });
  });

  it('resumes a scheduled read from the provider’s cursor where the listing keeps one', () => {
    const window = readWindow({
      readType: 'scheduled',
      now,
      position: { watermark: Date.parse('2026-06-15T11:00:00.000Z'), resumeCursor: 'after-42' },
      tracking: { ...tracking, resumable: true },
      installationCreateTime: created,
    });
    expect(window.resumeFrom).toBe('after-42');
    // A cursor the listing cannot use is ignored: the window starts from the watermark.
    expect(
      readWindow({
        readType: 'scheduled',
        now,
        position: { resumeCursor: 'after-42' },
        tracking,
        installationCreateTime: created,
      }).resumeFrom,
    ).toBeUndefined();
  });

  it('backfills the configured number of days, or the whole history', () => {
    const days = readWindow({
      readType: 'backfill',
      now,
      installationCreateTime: created,
      backfill: { defaultPeriod: { days: 30 } },
    });
    expect(days).toEqual({ since: new Date(now.getTime() - 30 * day), until: now, advancesWatermark: true });
    const full = readWindow({
      readType: 'backfill',
      now,
      installationCreateTime: created,
      backfill: { defaultPeriod: { fullHistory: true } },
    });
    expect(full).toEqual({ until: now, advancesWatermark: true });
    expect(readWindow({ readType: 'backfill', now, installationCreateTime: created })).toEqual({
      until: now,
      advancesWatermark: true,
    });
  });

  it('reads a triggered window as asked; no since means the whole history', () => {
    const since = '2026-06-10T00:00:00.000Z';
    const until = '2026-06-12T00:00:00.000Z';
    expect(
      readWindow({
        readType: 'triggered',
        now,
        installationCreateTime: created,
        sinceTimestamp: since,
        untilTimestamp: until,
      }),
    ).toEqual({ since: new Date(since), until: new Date(until), advancesWatermark: false });
    expect(readWindow({ readType: 'triggered', now, installationCreateTime: created })).toEqual({
      until: now,
      advancesWatermark: true,
    });
  });

  it('never reads past now, even when asked to', () => {
    const window = readWindow({
      readType: 'triggered',
      now,
      installationCreateTime: created,
      untilTimestamp: '2030-01-01T00:00:00Z',
    });
    expect(window.until).toEqual(now);
  });

  it('lets a triggered read move the watermark only when it leaves no gap behind it', () => {
    const watermark = Date.parse('2026-06-11T00:00:00.000Z');
    const overlapping = readWindow({
      readType: 'triggered',
      now,
      position: { watermark },
      installationCreateTime: created,
      sinceTimestamp: '2026-06-10T00:00:00.000Z',
    });
    expect(overlapping.advancesWatermark).toBe(true);
    const gap = readWindow({
      readType: 'triggered',
      now,
      position: { watermark },
      installationCreateTime: created,
      sinceTimestamp: '2026-06-14T00:00:00.000Z',
    });
    expect(gap.advancesWatermark).toBe(false);
  });
});

describe('field selection', () => {
  const declared = {
    objectName: 'contacts',
    destination: 'hook',
    schedule: '* * * * *',
    requiredFields: [{ fieldName: 'email' }, { mapToName: 'tier', prompt: 'Which field holds the tier?' }],
    optionalFields: [{ fieldName: 'lastName', mapToName: 'surname' }, { fieldName: 'phone' }],
  };

  it('asks the provider for required, selected and mapped fields only', () => {
    const selection = readSelection(declared, {
      objectName: 'contacts',
      schedule: '* * * * *',
      destination: 'hook',
      selectedFields: { lastName: true, phone: false, 'address.city': true },
      selectedFieldMappings: { tier: 'customTier' },
    });
    expect(providerFields(selection)?.sort()).toEqual(['address', 'customTier', 'email', 'lastName']);
  });

  it('asks for every field with selectedFieldsAuto all, or optionalFieldsAuto all and nothing picked', () => {
    const auto = readSelection(declared, {
      objectName: 'contacts',
      schedule: '* * * * *',
      destination: 'hook',
      selectedFields: {},
      selectedFieldsAuto: 'all',
    });
    expect(providerFields(auto)).toBeUndefined();
    const offered = readSelection({ ...declared, optionalFieldsAuto: 'all' }, undefined);
    expect(providerFields(offered)).toBeUndefined();
    const picked = readSelection(
      { ...declared, optionalFieldsAuto: 'all' },
      { objectName: 'contacts', schedule: '* * * * *', destination: 'hook', selectedFields: { phone: true } },
    );
    expect(providerFields(picked)?.sort()).toEqual(['email', 'phone']);
  });
});

describe('readSummary', () => {
  it('says what the read did, in words', () => {
    expect(readSummary('contacts', 1234, 3, 'success')).toBe('Read 1,234 contacts in 3 pages.');
    expect(readSummary('deals', 0, 1, 'success')).toBe('Read 0 deals in 1 page.');
    expect(readSummary('contacts', 500, 2, 'failure', 'the destination answered 500')).toBe(
      'Reading contacts failed after 500 contacts in 2 pages: the destination answered 500',
    );
    expect(readSummary('contacts', 0, 0, 'failure', 'no destination')).toBe(
      'Reading contacts failed: no destination',
    );
  });
});

describe('a stored plan', () => {
  it('is read back through its schema: one that does not fit fails the read, saying what is wrong', () => {
    expect(() => readPlanOf({ projectId: 'p', until: 'not a time' })).toThrow(ReadSetupError);
    expect(() => readPlanOf({ projectId: 'p' })).toThrow(/plan\.\w+/);
  });
});
