import { describe, expect, it } from '@jest/globals';
import type { Operation } from '../../src/db/entities/operation.js';
import { backfillProgressView } from '../../src/domain/reads/requests.js';

function backfill(status: Operation['status'], progress: Record<string, unknown>): Operation {
  const at = new Date('2026-11-24T12:00:00Z');
  return {
    id: '6c0d8f5e-5c39-4a53-9a8e-0f4a3f1b2c3d',
    status,
    metadata: { backfill: true, progress: { objectName: 'contacts', ...progress } },
    createTime: at,
    updateTime: at,
  } as unknown as Operation;
}

describe('backfill progress', () => {
  it('reports the provider’s count as the total while running and once done', () => {
    for (const status of ['in_progress', 'success'] as const) {
      expect(
        backfillProgressView(backfill(status, { recordsProcessed: 40, recordsEstimatedTotal: 100 })),
      ).toMatchObject({ recordsProcessed: 40, recordsEstimatedTotal: 100 });
    }
  });

  it('reports what a finished backfill read as the total when the provider offers no count', () => {
    expect(backfillProgressView(backfill('success', { recordsProcessed: 40 }))).toEqual({
      operationId: '6c0d8f5e-5c39-4a53-9a8e-0f4a3f1b2c3d',
      recordsProcessed: 40,
      recordsEstimatedTotal: 40,
      createTime: '2026-11-24T12:00:00.000Z',
      updateTime: '2026-11-24T12:00:00.000Z',
    });
  });

  it('leaves the total out while a backfill without a count runs, or after it failed', () => {
    for (const status of ['in_progress', 'failure'] as const) {
      const view = backfillProgressView(backfill(status, { recordsProcessed: 40 }));
      expect(view.recordsProcessed).toBe(40);
      expect(view).not.toHaveProperty('recordsEstimatedTotal');
    }
  });
});
