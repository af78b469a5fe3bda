import { describe, expect, it } from '@jest/globals';
import type { ReadObjectPlan } from '../../src/temporal/contracts/installation.js';
import { AUTH_FAILURES_BEFORE_PAUSE, ReadSchedule } from '../../workflows/read-schedule.js';
import { NO_SPREAD } from '../../workflows/schedule.js';

const MINUTE = 60_000;
const t0 = new Date('2026-03-02T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

const hourly = (objectName: string, backfill = false): ReadObjectPlan => ({
  objectName,
  schedule: '0 * * * *',
  backfill,
});

/** A schedule configured with `reads` at t0, counting the times it asks the main loop to look again. */
function schedule(reads: ReadObjectPlan[]) {
  const changes = { count: 0 };
  const created = new ReadSchedule(undefined, NO_SPREAD, () => changes.count++);
  created.configure(reads, [], t0);
  return { reads: created, changes };
}

/** Operation ids 'op-1', 'op-2', … in call order. */
function ids() {
  let next = 0;
  return () => `op-${++next}`;
}

describe('ReadSchedule', () => {
  it('asks the database only about new objects configured with a backfill', () => {
    const { reads } = schedule([hourly('contacts', true)]);
    expect(
      reads.newBackfillObjects([hourly('contacts', true), hourly('deals', true), hourly('notes')]),
    ).toEqual(['deals']);
  });

  it('starts a backfill only for the new objects the database says still need one', () => {
    const reads = new ReadSchedule(undefined, NO_SPREAD, () => undefined);
    const result = reads.configure([hourly('contacts', true), hourly('deals', true)], ['deals'], t0);
    expect(result).toEqual({ added: ['contacts', 'deals'], changed: [], removed: [] });
    expect(reads.takeDueReads(t0, ids()).map((read) => [read.objectName, read.readType])).toEqual([
      ['deals', 'backfill'],
    ]);
  });

  it('gives each due read an operation id, a triggered read keeping the one it came with', () => {
    const { reads } = schedule([hourly('contacts'), hourly('deals')]);
    expect(
      reads.trigger({ objectName: 'deals', operationId: 'given', sinceTimestamp: 'since' }, at(MINUTE)),
    ).toBe('queued');
    const started = reads.takeDueReads(at(60 * MINUTE), ids());
    expect(started).toEqual([
      {
        objectName: 'deals',
        operationId: 'given',
        readType: 'triggered',
        plannedAt: at(MINUTE).toISOString(),
        startedAt: at(60 * MINUTE).toISOString(),
        sinceTimestamp: 'since',
      },
      {
        objectName: 'contacts',
        operationId: 'op-1',
        readType: 'scheduled',
        plannedAt: at(60 * MINUTE).toISOString(),
        startedAt: at(60 * MINUTE).toISOString(),
      },
    ]);
    // Running reads and recent fires leave out the read window.
    expect(reads.runningReads().map((read) => Object.keys(read).sort())).toEqual([
      ['objectName', 'operationId', 'plannedAt', 'readType', 'startedAt'],
      ['objectName', 'operationId', 'plannedAt', 'readType', 'startedAt'],
    ]);
    expect(reads.recentFires()).toEqual(reads.runningReads());
  });

  it('ignores a re-delivered trigger and gives up a trigger of an unknown object, once', () => {
    const { reads, changes } = schedule([hourly('contacts')]);
    const before = changes.count;
    expect(reads.trigger({ objectName: 'contacts', operationId: 'a' }, t0)).toBe('queued');
    expect(reads.trigger({ objectName: 'contacts', operationId: 'a' }, t0)).toBe('duplicate');
    expect(reads.trigger({ objectName: 'tickets', operationId: 'b' }, t0)).toBe('unknown');
    expect(reads.trigger({ objectName: 'tickets', operationId: 'b' }, t0)).toBe('duplicate');
    expect(changes.count).toBe(before + 2);
    expect(reads.takeAbandonedTriggers()).toEqual(['b']);
    expect(reads.takeAbandonedTriggers()).toEqual([]);
    expect(reads.describe()[0].queuedTriggers).toBe(1);
  });

  it('gives up the queued triggers of an object the config drops, and forgets its pause', () => {
    const { reads } = schedule([hourly('contacts'), hourly('deals')]);
    reads.trigger({ objectName: 'deals', operationId: 'queued-1' }, t0);
    reads.trigger({ objectName: 'deals' }, t0);
    reads.pause({ objects: ['deals'], note: 'maintenance' });
    const result = reads.configure([hourly('contacts')], [], at(MINUTE));
    expect(result).toEqual({ added: [], changed: [], removed: ['deals'] });
    expect(reads.takeAbandonedTriggers()).toEqual(['queued-1']);
    expect(reads.pauseNote('deals')).toBeUndefined();
    expect(reads.describe().map((object) => object.objectName)).toEqual(['contacts']);
  });

  it('gives up every queued trigger when the installation is deleted', () => {
    const { reads } = schedule([hourly('contacts'), hourly('deals')]);
    reads.trigger({ objectName: 'contacts', operationId: 'a' }, t0);
    reads.trigger({ objectName: 'deals', operationId: 'b' }, t0);
    reads.abandonQueuedTriggers();
    expect(reads.takeAbandonedTriggers()).toEqual(['a', 'b']);
  });

  it('pauses known objects with a note, ignores unknown ones, and forgets the note on resume', () => {
    const { reads } = schedule([hourly('contacts'), hourly('deals')]);
    expect(reads.pause({ objects: ['tickets'], note: 'ignored' })).toEqual([]);
    expect(reads.pause({ objects: ['contacts', 'tickets'], note: 'maintenance' })).toEqual(['contacts']);
    expect(reads.describe()).toMatchObject([
      { objectName: 'contacts', paused: true, pauseNote: 'maintenance' },
      { objectName: 'deals', paused: false },
    ]);
    expect(reads.describe()[0].nextFireAt).toBeUndefined();
    expect(reads.pause({ note: 'everything' })).toEqual(['deals']);
    expect(reads.pauseNote('contacts')).toBe('everything');
    expect(reads.resume(['tickets'], at(MINUTE))).toEqual([]);
    expect(reads.resume(undefined, at(MINUTE))).toEqual(['contacts', 'deals']);
    expect(reads.pauseNote('contacts')).toBeUndefined();
    expect(reads.nextWakeAt(at(MINUTE))).toEqual(at(60 * MINUTE));
  });

  it('runs a requested backfill of a known object next', () => {
    const { reads } = schedule([hourly('contacts')]);
    expect(reads.requestBackfill('tickets', t0)).toBe(false);
    expect(reads.requestBackfill('contacts', at(MINUTE))).toBe(true);
    expect(reads.nextWakeAt(at(MINUTE))).toEqual(at(MINUTE));
    expect(reads.takeDueReads(at(MINUTE), ids()).map((read) => read.readType)).toEqual(['backfill']);
  });

  it(`pauses an object after ${AUTH_FAILURES_BEFORE_PAUSE} authentication failures in a row, once`, () => {
    const { reads } = schedule([hourly('contacts')]);
    const newId = ids();
    const failAt = (hour: number, authFailure: boolean) => {
      const [read] = reads.takeDueReads(at(hour * 60 * MINUTE), newId);
      return reads.finishRead(read, at(hour * 60 * MINUTE + MINUTE), { succeeded: false, authFailure });
    };
    expect([failAt(1, true), failAt(2, true), failAt(3, false)]).toEqual([false, false, false]);
    expect(reads.describe()[0].consecutiveAuthFailures).toBe(0);
    expect([failAt(4, true), failAt(5, true), failAt(6, true)]).toEqual([false, false, true]);
    expect(reads.describe()[0]).toMatchObject({ paused: true, consecutiveAuthFailures: 3 });
    expect(reads.pauseNote('contacts')).toMatch(/after 3 consecutive authentication failures/);
    expect(reads.takeDueReads(at(24 * 60 * MINUTE), newId)).toEqual([]);
  });

  it('ignores the end of a read that is not the running one', () => {
    const { reads, changes } = schedule([hourly('contacts')]);
    const [read] = reads.takeDueReads(at(60 * MINUTE), ids());
    const before = changes.count;
    const stale = { ...read, operationId: 'another' };
    expect(reads.finishRead(stale, at(61 * MINUTE), { succeeded: true, authFailure: false })).toBe(false);
    expect(reads.runningReads()).toHaveLength(1);
    expect(changes.count).toBe(before);
    reads.finishRead(read, at(61 * MINUTE), { succeeded: true, authFailure: false });
    expect(reads.runningReads()).toEqual([]);
    expect(reads.describe()[0].lastRun).toEqual({
      readType: 'scheduled',
      startedAt: at(60 * MINUTE).toISOString(),
      finishedAt: at(61 * MINUTE).toISOString(),
      succeeded: true,
    });
  });

  it('keeps the latest 30 fires and the latest 200 operation ids', () => {
    const reads = new ReadSchedule(undefined, NO_SPREAD, () => undefined);
    reads.configure([{ objectName: 'contacts', schedule: '* * * * *', backfill: false }], [], t0);
    const newId = ids();
    for (let minute = 1; minute <= 210; minute++) {
      const [read] = reads.takeDueReads(at(minute * MINUTE), newId);
      reads.finishRead(read, at(minute * MINUTE), { succeeded: true, authFailure: false });
    }
    expect(reads.recentFires().map((fire) => fire.operationId)).toEqual(
      Array.from({ length: 30 }, (_, index) => `op-${181 + index}`),
    );
    const { seenOperationIds } = reads.toJSON();
    expect(seenOperationIds).toHaveLength(200);
    expect(seenOperationIds[0]).toBe('op-11');
    // A remembered operation id is a re-delivery; a forgotten one is not.
    expect(reads.trigger({ objectName: 'contacts', operationId: 'op-11' }, at(211 * MINUTE))).toBe(
      'duplicate',
    );
    expect(reads.trigger({ objectName: 'contacts', operationId: 'op-10' }, at(211 * MINUTE))).toBe('queued');
  });

  it('carries everything through plain JSON for continue-as-new', () => {
    const { reads } = schedule([hourly('contacts'), hourly('deals')]);
    reads.trigger({ objectName: 'tickets', operationId: 'gone' }, t0);
    reads.trigger({ objectName: 'deals', operationId: 'queued' }, t0);
    reads.pause({ objects: ['contacts'], note: 'maintenance' });
    const [read] = reads.takeDueReads(at(MINUTE), ids());
    reads.finishRead(read, at(2 * MINUTE), { succeeded: false, authFailure: true });
    const state = JSON.parse(JSON.stringify(reads.toJSON())) as ReturnType<ReadSchedule['toJSON']>;
    const carried = new ReadSchedule(state, NO_SPREAD, () => undefined);
    expect(carried.toJSON()).toEqual(reads.toJSON());
    expect(carried.describe()).toEqual(reads.describe());
    expect(carried.takeAbandonedTriggers()).toEqual(['gone']);
    expect(carried.trigger({ objectName: 'deals', operationId: 'queued' }, t0)).toBe('duplicate');
  });
});
