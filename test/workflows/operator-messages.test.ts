import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import {
  describeQuery,
  pauseReadsUpdate,
  requestBackfillUpdate,
  requestReadUpdate,
  resumeReadsUpdate,
  retryOperationUpdate,
  triggerReadSignal,
} from '../../src/temporal/contracts/installation.js';
import type { installationWorkflow } from '../../workflows/installation.js';
import { backfillWindow, triggerWindowProblem } from '../../workflows/operator-requests.js';
import { InstallationHarness } from './support/installation-harness.js';

const MINUTE = 60_000;

let harness: InstallationHarness;
let handle: WorkflowHandle<typeof installationWorkflow> | undefined;

beforeAll(async () => {
  harness = await InstallationHarness.start();
}, 120_000);

afterEach(async () => {
  if (handle) await harness.stop(handle);
  handle = undefined;
  harness.reset();
});

afterAll(async () => harness?.close());

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  return String((error as WorkflowUpdateFailedError).cause?.message);
}

async function start() {
  harness.needsBackfill = () => [];
  handle = await harness.startInstallation([
    { objectName: 'contacts', schedule: '0 0 1 1 *', backfill: true },
    { objectName: 'deals', schedule: '0 0 1 1 *', backfill: false },
  ]);
  await harness.advance(MINUTE);
  return handle;
}

describe('backfill windows', () => {
  const now = new Date('2026-06-01T00:00:00Z');

  it('takes days, the full history, or a since/until window, else the manifest’s period', () => {
    expect(backfillWindow({ objectName: 'x', days: 7 }, false, now)).toEqual({
      sinceTimestamp: '2026-05-25T00:00:00.000Z',
      requestedWindow: true,
    });
    expect(backfillWindow({ objectName: 'x', fullHistory: true }, false, now)).toEqual({
      requestedWindow: true,
    });
    expect(
      backfillWindow(
        { objectName: 'x', sinceTimestamp: '2026-01-01T00:00:00Z', untilTimestamp: '2026-02-01T00:00:00Z' },
        false,
        now,
      ),
    ).toEqual({
      sinceTimestamp: '2026-01-01T00:00:00Z',
      untilTimestamp: '2026-02-01T00:00:00Z',
      requestedWindow: true,
    });
    expect(backfillWindow({ objectName: 'x' }, true, now)).toEqual({ requestedWindow: false });
  });

  it.each([
    [{ days: 0 }, 'days must be a whole number'],
    [{ days: 2.5 }, 'days must be a whole number'],
    [{ days: 3, fullHistory: true }, 'give one of days, fullHistory or sinceTimestamp'],
    [{ sinceTimestamp: 'yesterday' }, 'sinceTimestamp must be an ISO 8601 time'],
    [
      { sinceTimestamp: '2026-02-01T00:00:00Z', untilTimestamp: '2026-01-01T00:00:00Z' },
      'untilTimestamp must be after',
    ],
    [{ days: 3, untilTimestamp: '2026-01-01T00:00:00Z' }, 'not with days'],
    [{}, 'manifest has no backfill'],
  ])('refuses %j: %s', (window, problem) => {
    const result = backfillWindow({ objectName: 'x', ...window }, false, now);
    expect('problem' in result && result.problem).toContain(problem);
  });

  it('checks a triggered read’s window', () => {
    expect(triggerWindowProblem({ objectName: 'x', sinceTimestamp: '2026-01-01T00:00:00Z' })).toBeUndefined();
    expect(triggerWindowProblem({ objectName: 'x', untilTimestamp: 'soon' })).toContain('untilTimestamp');
  });
});

describe('operator Updates', () => {
  it('runs a read asked for, answering with the operation it recorded', async () => {
    await start();
    const run = await handle!.executeUpdate(requestReadUpdate, {
      args: [{ objectName: 'deals', sinceTimestamp: '2026-01-01T00:00:00Z' }],
    });
    expect(run).toMatchObject({ objectName: 'deals', readType: 'triggered' });
    await harness.advance(MINUTE);
    expect(harness.readsOf('deals', 'triggered').map((read) => read.operationId)).toEqual([run.operationId]);
    expect(harness.requested).toEqual([
      expect.objectContaining({ operationId: run.operationId, sinceTimestamp: '2026-01-01T00:00:00Z' }),
    ]);
  });

  it('refuses, with the reason, a read of an unknown object, of a paused one, or with a malformed window', async () => {
    await start();
    expect(
      await refusal(handle!.executeUpdate(requestReadUpdate, { args: [{ objectName: 'tickets' }] })),
    ).toContain('"tickets" is not read by this installation');
    await handle!.executeUpdate(pauseReadsUpdate, { args: [{ objects: ['deals'] }] });
    expect(
      await refusal(handle!.executeUpdate(requestReadUpdate, { args: [{ objectName: 'deals' }] })),
    ).toContain('paused; resume it first');
    expect(
      await refusal(
        handle!.executeUpdate(requestReadUpdate, {
          args: [
            {
              objectName: 'contacts',
              sinceTimestamp: '2026-02-01T00:00:00Z',
              untilTimestamp: '2026-01-01T00:00:00Z',
            },
          ],
        }),
      ),
    ).toContain('untilTimestamp must be after sinceTimestamp');
    expect(harness.requested).toEqual([]);
  });

  it('backfills with a window, or the manifest’s period, and refuses an object without either', async () => {
    await start();
    expect(
      await refusal(handle!.executeUpdate(requestBackfillUpdate, { args: [{ objectName: 'deals' }] })),
    ).toContain('manifest has no backfill');
    const windowed = await handle!.executeUpdate(requestBackfillUpdate, {
      args: [{ objectName: 'deals', days: 3 }],
    });
    const manifest = await handle!.executeUpdate(requestBackfillUpdate, {
      args: [{ objectName: 'contacts' }],
    });
    await harness.advance(MINUTE);
    expect(harness.readsOf('deals', 'backfill')).toEqual([
      expect.objectContaining({ operationId: windowed.operationId, sinceTimestamp: expect.any(String) }),
    ]);
    expect(harness.readsOf('contacts', 'backfill')).toEqual([
      expect.not.objectContaining({ sinceTimestamp: expect.anything() }),
    ]);
    expect(harness.requested).toEqual([
      expect.objectContaining({ operationId: windowed.operationId, requestedWindow: true }),
      expect.objectContaining({ operationId: manifest.operationId, requestedWindow: false }),
    ]);
  });

  it('retries a failed read in turn with its object’s reads, and a failed write at once', async () => {
    await start();
    const failedRead = randomUUID();
    const failedWrite = randomUUID();
    harness.failedOperations = {
      [failedRead]: { actionType: 'read', objectName: 'deals', readType: 'scheduled' },
      [failedWrite]: { actionType: 'write', objectName: 'deals' },
    };
    const read = await handle!.executeUpdate(retryOperationUpdate, { args: [{ operationId: failedRead }] });
    expect(read).toMatchObject({ retryOf: failedRead, actionType: 'read' });
    await harness.advance(MINUTE);
    expect(harness.readsOf('deals', 'scheduled').map((run) => run.operationId)).toEqual([read.operationId]);
    const write = await handle!.executeUpdate(retryOperationUpdate, { args: [{ operationId: failedWrite }] });
    expect(harness.retries).toEqual([
      { operationId: failedRead, newOperationId: read.operationId, actionType: 'read' },
      { operationId: failedWrite, newOperationId: write.operationId, actionType: 'write' },
    ]);
    expect(
      await refusal(handle!.executeUpdate(retryOperationUpdate, { args: [{ operationId: randomUUID() }] })),
    ).toContain('was not found');
  });

  it('pauses and resumes named objects, refusing names it does not read', async () => {
    await start();
    expect(await handle!.executeUpdate(pauseReadsUpdate, { args: [{ objects: ['deals'] }] })).toEqual({
      paused: ['deals'],
    });
    expect((await handle!.query(describeQuery)).paused).toEqual(['deals']);
    expect(
      await refusal(handle!.executeUpdate(pauseReadsUpdate, { args: [{ objects: ['tickets'] }] })),
    ).toContain('tickets');
    expect(await handle!.executeUpdate(resumeReadsUpdate, { args: [{}] })).toEqual({ resumed: ['deals'] });
  });

  it('says why a triggerRead signal for an unknown object did nothing', async () => {
    await start();
    await handle!.signal(triggerReadSignal, { objectName: 'tickets' });
    await harness.advance(MINUTE);
    expect(harness.ignored).toEqual([
      expect.objectContaining({
        message: 'triggerRead',
        objectName: 'tickets',
        reason: expect.stringContaining('not read'),
      }),
    ]);
  });

  it('lists queued reads with their operation ids', async () => {
    await start();
    harness.readBehaviour = () => ({ durationMs: 10 * MINUTE, status: 'success' });
    const first = await handle!.executeUpdate(requestReadUpdate, { args: [{ objectName: 'deals' }] });
    await harness.advance(MINUTE);
    const second = await handle!.executeUpdate(requestReadUpdate, { args: [{ objectName: 'deals' }] });
    const deals = (await handle!.query(describeQuery)).objects.find(
      (object) => object.objectName === 'deals',
    )!;
    expect(deals.running?.operationId).toBe(first.operationId);
    expect(deals.queued).toEqual([
      expect.objectContaining({ operationId: second.operationId, readType: 'triggered' }),
    ]);
  });
});
