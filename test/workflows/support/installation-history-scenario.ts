import { randomUUID } from 'node:crypto';
import type { temporal } from '@temporalio/proto';
import {
  applyConfigUpdate,
  backfillSignal,
  describeQuery,
  pauseSignal,
  resumeSignal,
  triggerReadSignal,
} from '../../../src/temporal/contracts/installation.js';
import { InstallationHarness, configMessage } from './installation-harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Runs the installation workflow through every kind of message on the time-skipping server and
 * returns its history: a backfill, scheduled reads, a slow read that makes a trigger wait, pause and
 * resume, a requested backfill, a config update that re-plans and adds a subscription, and queries.
 * `test/fixtures/installation-history.json` is this history; replaying it proves a code change is
 * deterministic.
 */
export async function recordInstallationHistory(): Promise<temporal.api.history.v1.IHistory> {
  const harness = await InstallationHarness.start();
  try {
    harness.readBehaviour = (input) =>
      input.objectName === 'deals' && input.readType === 'scheduled'
        ? { durationMs: 40 * MINUTE, status: 'success' }
        : { durationMs: 0, status: 'success' };
    const handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: true },
      { objectName: 'deals', schedule: '0 * * * *', backfill: false },
    ]);
    await harness.advance(90 * MINUTE);
    await handle.signal(triggerReadSignal, { objectName: 'deals', operationId: randomUUID() });
    await harness.advance(HOUR);
    await handle.signal(pauseSignal, { objects: ['contacts'], note: 'recorded pause' });
    await harness.advance(2 * HOUR);
    await handle.query(describeQuery);
    await handle.signal(resumeSignal, {});
    await handle.signal(backfillSignal, { objectName: 'deals' });
    await harness.advance(HOUR);
    await handle.executeUpdate(applyConfigUpdate, {
      args: [
        configMessage([{ objectName: 'contacts', schedule: '0 * * * *', backfill: true }], {
          subscribe: { objects: { contacts: { objectName: 'contacts', destination: 'hooks' } } },
        }),
      ],
    });
    await harness.advance(3 * HOUR);
    await handle.query(describeQuery);
    const history = await handle.fetchHistory();
    await handle.terminate('history recorded');
    return history;
  } finally {
    await harness.close();
  }
}
