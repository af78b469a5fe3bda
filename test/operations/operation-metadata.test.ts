import { describe, expect, it } from '@jest/globals';
import {
  amendMetadata,
  objectNameOf,
  readMetadataOf,
  subscribeMetadataOf,
  writeMetadataOf,
} from '../../src/domain/operation-metadata.js';
import type { Operation } from '../../src/db/entities/operation.js';

describe('operation metadata read through its action kind’s schema', () => {
  it('reads a row that fits as it is, keys of other versions kept', () => {
    const stored = {
      objects: ['contacts'],
      readType: 'scheduled',
      progress: { objectName: 'contacts', recordsProcessed: 12 },
      window: { until: '2026-01-01T00:00:00.000Z' },
      addedLater: { by: 'a newer version' },
    };
    expect(readMetadataOf(stored)).toEqual(stored);
  });

  it('reads an older row without readType as a triggered read, keeping what fits', () => {
    const metadata = readMetadataOf({ objects: ['deals'], progress: { recordsProcessed: 3 } });
    expect(metadata).toEqual({
      objects: ['deals'],
      readType: 'triggered',
      progress: { recordsProcessed: 3 },
    });
  });

  it('drops a value of the wrong shape rather than trusting it', () => {
    const metadata = readMetadataOf({
      objects: 'contacts',
      readType: 'backfill',
      progress: { objectName: 'contacts', recordsProcessed: '12' },
      inline: true,
    });
    expect(metadata).toEqual({ objects: [], readType: 'backfill', inline: true });
    expect(objectNameOf(metadata)).toBe('');
    expect(
      objectNameOf(readMetadataOf({ objects: [], readType: 'scheduled', progress: { objectName: 'notes' } })),
    ).toBe('notes');
  });

  it('reads JSON that is not an object as the kind’s fallback', () => {
    expect(writeMetadataOf(null)).toEqual({
      objects: [],
      writeType: 'create',
      mode: 'synchronous',
      records: 0,
    });
    expect(subscribeMetadataOf(['x']).destinationId).toBe('');
  });

  it('amends metadata only of the action kind it names', () => {
    const now = new Date();
    const operation: Operation = {
      ...{ id: 'op', projectId: 'p', integrationId: 'i', installationId: 'n', configId: 'c' },
      ...{ actionType: 'write', status: 'in_progress', metadata: { objects: ['contacts'] } },
      ...{ createTime: now, updateTime: now },
    };
    amendMetadata(operation, 'write', { successfulRecordIds: ['1'] });
    expect(operation.metadata).toEqual({ objects: ['contacts'], successfulRecordIds: ['1'] });
    expect(() => amendMetadata(operation, 'read', { inline: true })).toThrow('is a write, not a read');
  });
});
