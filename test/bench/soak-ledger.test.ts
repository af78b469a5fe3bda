import { describe, expect, it } from '@jest/globals';
import {
  caughtUp,
  fidelity,
  type DeliveredEntry,
  type ReadSpan,
  type WrittenVersion,
} from '../../bench/soak-ledger.js';

/** The soak's verdict: which versions had to arrive, what was lost, what arrived twice. */

const T = Date.parse('2026-11-27T10:00:00.000Z');
const LAG = 1500;

function version(
  id: string,
  marker: string,
  at: number,
  kind: WrittenVersion['kind'] = 'update',
): WrittenVersion {
  return {
    object: 'contacts',
    id,
    kind,
    marker,
    sentAt: at,
    answeredAt: at + 10,
    stamp: new Date(Math.floor(at / 1000) * 1000).toISOString(),
  };
}

function read(operationId: string, startedAt: number, endedAt: number): ReadSpan {
  return {
    object: 'contacts',
    operationId,
    readType: 'scheduled',
    status: 'success',
    startedAt,
    endedAt,
    until: startedAt,
  };
}

function entry(id: string, marker: string, messageId: string, receivedAt = T + 100_000): DeliveredEntry {
  return { object: 'contacts', id, marker, messageId, operationId: 'op', receivedAt };
}

describe('the soak ledger', () => {
  it('requires the versions that stood through a whole read, and every last version', () => {
    const versions = [
      version('c1', 'soak-1', T, 'create'),
      // Replaced within the same second: never in view of a read, need not arrive.
      version('c1', 'soak-2', T + 200),
      version('c1', 'soak-3', T + 400),
      // Stood through read r2 (from T+60s to T+61s), then replaced.
      version('c1', 'soak-4', T + 62_000),
      version('c2', 'soak-5', T + 1000, 'create'),
      version('c2', 'deleted', T + 61_500, 'delete'),
    ];
    const reads = [
      read('r1', T + 1000, T + 1500),
      read('r2', T + 60_000, T + 61_000),
      read('r3', T + 120_000, T + 121_000),
    ];
    const all = fidelity(
      versions,
      reads,
      [
        entry('c1', 'soak-3', 'm1'),
        entry('c2', 'soak-5', 'm1'),
        entry('c1', 'soak-4', 'm2'),
        entry('c2', 'deleted', 'm2'),
      ],
      LAG,
    );
    // c1: soak-3 (through r2) and soak-4 (last); c2: soak-5 (through r2) and its deletion.
    expect(all).toMatchObject({
      versionsRequired: 4,
      lost: 0,
      finalStatesWrong: 0,
      deletionsMade: 1,
      deletionsDelivered: 1,
    });

    const missing = fidelity(
      versions,
      reads,
      [entry('c1', 'soak-4', 'm2'), entry('c2', 'deleted', 'm2')],
      LAG,
    );
    expect(missing.lost).toBe(2);
    expect(
      missing.lostVersions.map((lost) => `${lost.id} ${lost.marker} ${lost.readsThrough.join()}`),
    ).toEqual(['c1 soak-3 r2', 'c2 soak-5 r2']);
  });

  it('does not require a version committed after the read began, or stamped past its window', () => {
    const versions = [version('c1', 'soak-1', T, 'create'), version('c1', 'soak-2', T + 60_000)];
    // The first read began before soak-1 committed (answer + lag); the second lists until before its stamp.
    const reads = [
      read('r1', T + 1000, T + 59_000),
      { ...read('r2', T + 59_500, T + 59_900), until: T - 1000 },
    ];
    expect(fidelity(versions, reads, [], LAG)).toMatchObject({ versionsRequired: 0, lost: 0 });
  });

  it('takes a read to have listed from its window’s end when its operation was recorded later', () => {
    // A scheduled read fetches its first page, then records its operation: committed after the
    // window's end, soak-2 was not in view, though committed before the operation's start.
    const versions = [version('c1', 'soak-1', T, 'create'), version('c1', 'soak-2', T + 10_000)];
    const late = { ...read('r1', T + 12_000, T + 12_500), until: T + 11_000 };
    const verdict = fidelity(versions, [late], [entry('c1', 'soak-1', 'm1')], LAG);
    expect(verdict).toMatchObject({ versionsRequired: 0, lost: 0, finalStatesWrong: 0 });
  });

  it('counts redeliveries under the first message id apart from changes delivered twice', () => {
    const versions = [version('c1', 'soak-1', T, 'create')];
    const reads = [read('r1', T + 5000, T + 6000)];
    const verdict = fidelity(
      versions,
      reads,
      [entry('c1', 'soak-1', 'm1'), entry('c1', 'soak-1', 'm1'), entry('c1', 'soak-1', 'm9')],
      LAG,
    );
    expect(verdict).toMatchObject({ lost: 0, duplicates: 1, duplicatesNewMessageId: 1, entriesReceived: 3 });
  });

  it('finds a final state that an older version overwrote at the destination', () => {
    const versions = [version('c1', 'soak-1', T, 'create'), version('c1', 'soak-2', T + 10_000)];
    const reads = [read('r1', T + 5000, T + 6000), read('r2', T + 20_000, T + 21_000)];
    const verdict = fidelity(
      versions,
      reads,
      [entry('c1', 'soak-1', 'm1'), entry('c1', 'soak-2', 'm2'), entry('c1', 'soak-1', 'm1')],
      LAG,
    );
    expect(verdict).toMatchObject({ lost: 0, finalStatesWrong: 1, finalStatesWrongRecords: ['contacts/c1'] });
  });

  it('has caught up when every object was read after the given time', () => {
    const reads = [read('r1', T + 5000, T + 6000), { ...read('r2', T + 5000, T + 6000), object: 'deals' }];
    expect(caughtUp(reads, ['contacts', 'deals'], T + 4000)).toBe(true);
    expect(caughtUp(reads, ['contacts', 'deals', 'companies'], T + 4000)).toBe(false);
    expect(caughtUp(reads, ['contacts'], T + 5500)).toBe(false);
  });
});
