import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import {
  applyConfigUpdate,
  describeQuery,
  pauseSignal,
  resumeSignal,
  triggerReadSignal,
  backfillSignal,
} from '../../src/temporal/contracts/installation.js';
import type { installationWorkflow } from '../../workflows/installation.js';
import { spreadFraction } from '../../workflows/schedule.js';
import { InstallationHarness, configMessage, type RecordedRead } from './support/installation-harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

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

const ms = (iso: string) => Date.parse(iso);

/**
 * Histories the tests made, replayed against the workflow code at the end: a replay worker run
 * in the middle of the suite stops the time-skipping server from skipping for the tests after it.
 */
const madeHistories: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>[] = [];

function expectNoOverlap(reads: RecordedRead[]): void {
  const sorted = [...reads].sort((a, b) => ms(a.startedAt) - ms(b.startedAt));
  for (let index = 1; index < sorted.length; index++) {
    const previous = sorted[index - 1];
    expect({ previousFinished: previous.finishedAt !== undefined }).toEqual({ previousFinished: true });
    expect(ms(sorted[index].startedAt)).toBeGreaterThanOrEqual(ms(previous.finishedAt!));
  }
}

describe('the installation workflow', () => {
  it('reads a */30 object 48 times in a simulated day, each read starting at its planned fire', async () => {
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: false },
    ]);
    await harness.advance(DAY);
    const reads = harness.readsOf('contacts');
    expect(reads).toHaveLength(48);
    expect(new Set(reads.map((read) => read.readType))).toEqual(new Set(['scheduled']));
    for (const read of reads) expect(new Date(read.startedAt).getUTCMinutes() % 30).toBe(0);
    const description = await handle.query(describeQuery);
    expect(description.recentFires.length).toBeGreaterThan(20);
    for (const fire of description.recentFires) {
      expect(ms(fire.startedAt) - ms(fire.plannedAt)).toBeLessThan(1000);
    }
    const [object] = description.objects;
    expect(object).toMatchObject({ objectName: 'contacts', paused: false, needsBackfill: false });
    expect(ms(object.nextFireAt!) - (await harness.env.currentTimeMs())).toBeLessThanOrEqual(30 * MINUTE);
  });

  it('runs scheduled reads inline, hands a long one to its child, and runs backfills as children', async () => {
    // The backfill and the second scheduled read take time: their inline part hands them over.
    let scheduled = 0;
    harness.readBehaviour = (input) =>
      input.readType === 'scheduled' && ++scheduled !== 2
        ? { durationMs: 0, status: 'success' }
        : { durationMs: 5 * MINUTE, status: 'success' };
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: true },
    ]);
    await harness.advance(2 * HOUR);
    const reads = harness.readsOf('contacts');
    const backfill = reads.filter((read) => read.readType === 'backfill');
    const scheduledReads = reads.filter((read) => read.readType === 'scheduled');
    expect(backfill).toHaveLength(1);
    expect(scheduledReads.length).toBeGreaterThanOrEqual(3);
    // Every scheduled read began inline; the backfill never did.
    expect(harness.inlineReads).toEqual(scheduledReads.map((read) => read.operationId));
    // The handed-over read ran on in its child for its 5 minutes; the others ended inline at once.
    const [, long] = scheduledReads;
    expect(ms(long.finishedAt!) - ms(long.startedAt)).toBeGreaterThanOrEqual(5 * MINUTE);
    expect(ms(long.finishedAt!) - ms(long.startedAt)).toBeLessThan(6 * MINUTE);
    expect(scheduledReads.filter((read) => read.finishedAt === read.startedAt)).toHaveLength(
      scheduledReads.length - 1,
    );
    const history = await handle.fetchHistory();
    const children = (history.events ?? [])
      .map((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
      .filter(Boolean);
    expect(children).toEqual([`read/${backfill[0].operationId}`, `read/${long.operationId}`]);
  });

  it('measures the next fire from when the read ended, not when its task began: a slow inline read makes no fire late', async () => {
    // The timer to the next fire is armed as the read starts, and sent to the server when it ends.
    harness.inlineReadMs = 1500;
    // Two objects 20 minutes apart: the timer to the next one is armed as each read starts. The test
    // ends at a quarter past, no read in flight (one would keep the test server from skipping time).
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: false },
      { objectName: 'deals', schedule: '20,50 * * * *', backfill: false },
    ]);
    await harness.advance(2 * HOUR);
    const { recentFires } = await handle.query(describeQuery);
    expect(recentFires.length).toBeGreaterThanOrEqual(6);
    for (const fire of recentFires) expect(ms(fire.startedAt) - ms(fire.plannedAt)).toBeLessThan(500);
    // The timer armed before the read ended was dropped unsent: one started per fire (and the first
    // task's early one), none cancelled.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((event) => event.timerCanceledEventAttributes)).toHaveLength(0);
    expect(events.filter((event) => event.timerStartedEventAttributes).length).toBeLessThanOrEqual(
      recentFires.length + 2,
    );
    madeHistories.push(await handle.fetchHistory());
  });

  it('arms the first timer of a run a minute early, then the rest from a quiet task, and fires on time', async () => {
    // The run's first task is the one that lags when many installations are created at once; the
    // minute's timer is armed from the early fire's task instead.
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: false },
    ]);
    await harness.advance(HOUR);
    const { recentFires } = await handle.query(describeQuery);
    expect(recentFires).toHaveLength(2);
    for (const fire of recentFires) expect(ms(fire.startedAt) - ms(fire.plannedAt)).toBeLessThan(1000);
    const timers = ((await handle.fetchHistory()).events ?? [])
      .map((event) => event.timerStartedEventAttributes?.startToFireTimeout)
      .filter((timeout) => timeout !== undefined && timeout !== null)
      .map((timeout) => Math.round(Number(timeout.seconds ?? 0) / 60));
    // 15 minutes to the first fire: 14, then 1; then 30 to the next, armed in a later task.
    expect(timers.slice(0, 3)).toEqual([14, 1, 30]);
  });

  it("spreads an installation's fires: each one its own fixed offset after the cron time", async () => {
    const installationId = randomUUID();
    const fraction = spreadFraction(installationId);
    // Hourly with a 10-minute spread: every read starts fraction × 10 minutes past the hour.
    const offsetMs = Math.floor(fraction * 10 * MINUTE);
    handle = await harness.startInstallation(
      [
        { objectName: 'contacts', schedule: '0 * * * *', backfill: false },
        { objectName: 'deals', schedule: '0 * * * *', backfill: false },
      ],
      { installationId, scheduleSpreadSeconds: 600 },
    );
    await harness.advance(6 * HOUR);
    for (const objectName of ['contacts', 'deals']) {
      const reads = harness.readsOf(objectName);
      expect(reads.length).toBeGreaterThanOrEqual(5);
      for (const read of reads) {
        const pastTheHour = ms(read.startedAt) % HOUR;
        expect(pastTheHour).toBeGreaterThanOrEqual(offsetMs);
        expect(pastTheHour).toBeLessThan(offsetMs + 1000);
      }
    }
    const description = await handle.query(describeQuery);
    expect(description.spread).toEqual({ maxSeconds: 600, fraction });
    for (const fire of description.recentFires) {
      expect(ms(fire.plannedAt) % HOUR).toBe(offsetMs);
      expect(ms(fire.startedAt) - ms(fire.plannedAt)).toBeLessThan(1000);
    }
    for (const object of description.objects) expect(ms(object.nextFireAt!) % HOUR).toBe(offsetMs);
  });

  it('runs one backfill first, then incremental scheduled reads', async () => {
    harness.readBehaviour = (input) =>
      input.readType === 'backfill'
        ? { durationMs: 90 * MINUTE, status: 'success' }
        : { durationMs: 0, status: 'success' };
    handle = await harness.startInstallation([
      { objectName: 'deals', schedule: '0 * * * *', backfill: true },
    ]);
    await harness.advance(5 * HOUR);
    const reads = harness.readsOf('deals');
    expect(reads[0].readType).toBe('backfill');
    expect(reads.slice(1).map((read) => read.readType)).toEqual(reads.slice(1).map(() => 'scheduled'));
    // The backfill took 90 minutes; hourly reads follow from the first full hour after it.
    expect(reads.length).toBeGreaterThanOrEqual(4);
    expect(ms(reads[1].startedAt)).toBeGreaterThanOrEqual(ms(reads[0].finishedAt!));
    expect((await handle.query(describeQuery)).objects[0].needsBackfill).toBe(false);
  });

  it('runs the fire it should have had when its first task ran late, rather than skipping a cycle', async () => {
    // Started at :15:50; the database answers only after about 26 s of retries, past the :16 fire.
    harness.backfillQueryFailures = 9;
    handle = await harness.startInstallation(
      [{ objectName: 'deals', schedule: '16 * * * *', backfill: false }],
      {
        startOffsetMs: 50_000,
      },
    );
    const started = ms((await handle.describe()).startTime.toISOString());
    await harness.advance(5 * MINUTE);
    const [first] = harness.readsOf('deals', 'scheduled');
    expect(first).toBeDefined();
    // Late (after the retries), but in this cycle, not an hour later.
    expect(ms(first.startedAt) - started).toBeGreaterThan(10_000);
    expect(ms(first.startedAt) - started).toBeLessThan(2 * MINUTE);
    const [fire] = (await handle.query(describeQuery)).recentFires;
    // Planned at the :16 cron time the run started just before.
    expect(new Date(fire.plannedAt).toISOString()).toMatch(/:16:00\.000Z$/);
    expect(ms(fire.plannedAt) - started).toBeLessThan(10_000);
  });

  it('runs the fire it should have had when its workflow started late, after the installation was created', async () => {
    // Created at :15:30, but its workflow only started at :16:20 (the repair loop retried the start),
    // after the :16 fire.
    handle = await harness.startInstallation(
      [{ objectName: 'deals', schedule: '16 * * * *', backfill: false }],
      { startOffsetMs: 80_000, createdBeforeStartMs: 50_000 },
    );
    const started = ms((await handle.describe()).startTime.toISOString());
    await harness.advance(5 * MINUTE);
    const [first] = harness.readsOf('deals', 'scheduled');
    expect(first).toBeDefined();
    // Run at once, in this cycle, not an hour later.
    expect(ms(first.startedAt) - started).toBeLessThan(MINUTE);
    const [fire] = (await handle.query(describeQuery)).recentFires;
    expect(new Date(fire.plannedAt).toISOString()).toMatch(/:16:00\.000Z$/);
    expect(ms(fire.plannedAt)).toBeLessThan(started);
  });

  it('skips the backfill when the database says it is done (a restarted workflow)', async () => {
    harness.needsBackfill = () => [];
    handle = await harness.startInstallation([
      { objectName: 'deals', schedule: '0 * * * *', backfill: true },
    ]);
    await harness.advance(3 * HOUR);
    expect(harness.readsOf('deals', 'backfill')).toEqual([]);
    expect(harness.readsOf('deals', 'scheduled')).toHaveLength(3);
  });

  it('never overlaps two reads of one object: a due read waits for the running one', async () => {
    harness.readBehaviour = (input) =>
      input.readType === 'scheduled'
        ? { durationMs: 2 * HOUR, status: 'success' }
        : { durationMs: 0, status: 'success' };
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: false },
      { objectName: 'deals', schedule: '*/30 * * * *', backfill: false },
    ]);
    await harness.advance(31 * MINUTE);
    const [first] = harness.readsOf('contacts');
    expect(first.finishedAt).toBeUndefined();
    const operationId = randomUUID();
    await handle.signal(triggerReadSignal, { objectName: 'contacts', operationId });
    await harness.advance(5 * HOUR);
    const reads = harness.readsOf('contacts');
    expectNoOverlap(reads);
    const triggered = reads.find((read) => read.operationId === operationId)!;
    expect(triggered.readType).toBe('triggered');
    expect(ms(triggered.startedAt) - ms(first.finishedAt!)).toBeLessThan(1000);
    // Objects do not wait for each other.
    expect(Math.abs(ms(harness.readsOf('deals')[0].startedAt) - ms(first.startedAt))).toBeLessThan(1000);
  });

  it('pauses and resumes objects by signal, keeping the note and not replaying missed fires', async () => {
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '0 * * * *', backfill: false },
      { objectName: 'deals', schedule: '0 * * * *', backfill: false },
    ]);
    await harness.advance(2 * HOUR);
    await handle.signal(pauseSignal, { objects: ['contacts'], note: 'maintenance' });
    const before = { contacts: harness.readsOf('contacts').length, deals: harness.readsOf('deals').length };
    await harness.advance(5 * HOUR);
    expect(harness.readsOf('contacts')).toHaveLength(before.contacts);
    expect(harness.readsOf('deals')).toHaveLength(before.deals + 5);
    const paused = await handle.query(describeQuery);
    expect(paused.paused).toEqual(['contacts']);
    const contacts = paused.objects.find((object) => object.objectName === 'contacts')!;
    expect(contacts).toMatchObject({ paused: true, pauseNote: 'maintenance' });
    expect(contacts.nextFireAt).toBeUndefined();

    await handle.signal(pauseSignal, {});
    await harness.advance(2 * HOUR);
    expect(harness.readsOf('deals')).toHaveLength(before.deals + 5);

    await handle.signal(resumeSignal, {});
    await harness.advance(3 * HOUR);
    expect(harness.readsOf('contacts')).toHaveLength(before.contacts + 3);
    expect(harness.readsOf('deals')).toHaveLength(before.deals + 8);
    expect((await handle.query(describeQuery)).paused).toEqual([]);
  });

  it('pauses an object after three consecutive authentication failures and reports it', async () => {
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '0 * * * *', backfill: false },
      { objectName: 'deals', schedule: '0 * * * *', backfill: false },
    ]);
    harness.readBehaviour = (input) =>
      input.objectName === 'contacts'
        ? { durationMs: 0, status: 'failure', authFailure: true }
        : { durationMs: 0, status: 'failure' };
    await harness.advance(6 * HOUR);
    expect(harness.readsOf('contacts')).toHaveLength(3);
    expect(harness.readsOf('deals')).toHaveLength(6);
    expect(harness.pausedEvents).toEqual([expect.objectContaining({ objectName: 'contacts' })]);
    const description = await handle.query(describeQuery);
    expect(description.paused).toEqual(['contacts']);
    expect(description.objects[0]).toMatchObject({ consecutiveAuthFailures: 3 });
    expect(description.objects[0].pauseNote).toMatch(/authentication/);
  });

  it('sleeps once its only object is paused in the task of a slow read: no timer left behind, no busy loop', async () => {
    // The failing read runs long enough that the timer to the next fire, armed as it started, is
    // behind when it ends; the pause then leaves nothing planned.
    harness.inlineReadMs = 300;
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '0 * * * *', backfill: false },
    ]);
    harness.readBehaviour = () => ({ durationMs: 0, status: 'failure', authFailure: true });
    const { runId } = await handle.describe();
    await harness.advance(6 * HOUR);
    expect(harness.readsOf('contacts')).toHaveLength(3);
    expect((await handle.query(describeQuery)).paused).toEqual(['contacts']);
    // Still its first run: a loop woken over and over would have continued as new.
    expect((await handle.describe()).runId).toBe(runId);
    const history = await handle.fetchHistory();
    expect(history.events?.length).toBeLessThan(80);
    madeHistories.push(history);
  });

  it('continues as new with pending triggers and schedules, losing nothing', async () => {
    harness.readBehaviour = (input) =>
      input.readType === 'triggered'
        ? { durationMs: 20 * MINUTE, status: 'success' }
        : { durationMs: 0, status: 'success' };
    handle = await harness.startInstallation(
      [
        { objectName: 'contacts', schedule: '0 * * * *', backfill: false },
        { objectName: 'deals', schedule: '*/30 * * * *', backfill: false },
      ],
      { maxIterations: 4 },
    );
    await harness.advance(MINUTE);
    const operationIds = Array.from({ length: 6 }, () => randomUUID());
    for (const operationId of operationIds) {
      await handle.signal(triggerReadSignal, {
        objectName: 'contacts',
        operationId,
        sinceTimestamp: '2026-01-01T00:00:00Z',
      });
    }
    // A re-delivered trigger runs once.
    await handle.signal(triggerReadSignal, { objectName: 'contacts', operationId: operationIds[0] });
    await harness.advance(DAY);
    const triggered = harness.readsOf('contacts', 'triggered');
    expect(triggered.map((read) => read.operationId).sort()).toEqual([...operationIds].sort());
    expect(triggered.every((read) => read.sinceTimestamp === '2026-01-01T00:00:00Z')).toBe(true);
    expectNoOverlap(harness.readsOf('contacts'));
    expect(harness.readsOf('deals', 'scheduled').length).toBeGreaterThanOrEqual(47);
    const description = await handle.query(describeQuery);
    expect(description.generation).toBeGreaterThan(3);
    expect(description.objects.map((object) => object.objectName)).toEqual(['contacts', 'deals']);
  });

  it('applies a config update at once: a changed schedule re-plans its timer', async () => {
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '0 0 * * *', backfill: false },
    ]);
    await harness.advance(MINUTE);
    const now = await harness.env.currentTimeMs();
    const before = await handle.query(describeQuery);
    expect(new Date(before.objects[0].nextFireAt!).getUTCHours()).toBe(0);

    const result = await handle.executeUpdate(applyConfigUpdate, {
      args: [
        configMessage([
          { objectName: 'contacts', schedule: '*/30 * * * *', backfill: false },
          { objectName: 'deals', schedule: '0 * * * *', backfill: true },
        ]),
      ],
    });
    expect(result).toMatchObject({ added: ['deals'], changed: ['contacts'], removed: [] });
    const after = await handle.query(describeQuery);
    const untilFire = ms(after.objects[0].nextFireAt!) - now;
    expect(untilFire).toBeLessThanOrEqual(30 * MINUTE);
    expect(after.configId).toBe(result.configId);
    await harness.advance(untilFire + MINUTE);
    expect(harness.readsOf('contacts', 'scheduled')).toHaveLength(1);
    expect(harness.readsOf('deals', 'backfill')).toHaveLength(1);

    await expect(
      handle.executeUpdate(applyConfigUpdate, {
        args: [configMessage([{ objectName: 'contacts', schedule: 'every day', backfill: false }])],
      }),
    ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/not a valid cron expression/) } });
    expect((await handle.query(describeQuery)).configId).toBe(result.configId);

    const removed = await handle.executeUpdate(applyConfigUpdate, {
      args: [configMessage([{ objectName: 'deals', schedule: '0 * * * *', backfill: true }])],
    });
    expect(removed).toMatchObject({ added: [], changed: [], removed: ['contacts'] });
  });

  it('fails triggered reads that can never run: unknown object, object removed, installation deleted', async () => {
    harness.readBehaviour = () => ({ durationMs: 2 * HOUR, status: 'success' });
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: false },
      { objectName: 'deals', schedule: '*/30 * * * *', backfill: false },
    ]);
    await harness.advance(31 * MINUTE);
    const [unknown, removed, deleted] = [randomUUID(), randomUUID(), randomUUID()];
    await handle.signal(triggerReadSignal, { objectName: 'tickets', operationId: unknown });
    await handle.signal(triggerReadSignal, { objectName: 'deals', operationId: removed });
    await handle.signal(triggerReadSignal, { objectName: 'contacts', operationId: deleted });
    await handle.executeUpdate(applyConfigUpdate, {
      args: [configMessage([{ objectName: 'contacts', schedule: '*/30 * * * *', backfill: false }])],
    });
    await harness.advance(MINUTE);
    expect(harness.abandoned.map((entry) => entry.operationId).sort()).toEqual([unknown, removed].sort());
    await handle.cancel();
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(harness.abandoned.map((entry) => entry.operationId)).toContain(deleted);
    expect(harness.readsOf('contacts').map((read) => read.operationId)).not.toContain(deleted);
    handle = undefined;
  });

  it('runs a requested backfill on signal before the next scheduled read', async () => {
    harness.needsBackfill = () => []; // the object's own backfill is done
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '0 * * * *', backfill: true },
    ]);
    await harness.advance(2 * HOUR);
    const before = harness.readsOf('contacts').length;
    await handle.signal(backfillSignal, { objectName: 'contacts' });
    await harness.advance(MINUTE);
    // The first read after the signal is the backfill, even when an hourly fire falls in this minute.
    expect(harness.readsOf('contacts')[before]?.readType).toBe('backfill');
    await harness.advance(2 * HOUR);
    expect(harness.readsOf('contacts', 'backfill')).toHaveLength(1);
  });

  it('refuses a backfill signal for an object whose manifest has none, saying why, and runs one with a window', async () => {
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '0 * * * *', backfill: false },
    ]);
    await harness.advance(MINUTE);
    await handle.signal(backfillSignal, { objectName: 'contacts' });
    await harness.advance(MINUTE);
    expect(harness.readsOf('contacts', 'backfill')).toHaveLength(0);
    expect(harness.ignored).toEqual([
      expect.objectContaining({
        message: 'backfill',
        objectName: 'contacts',
        reason: expect.stringContaining('no backfill'),
      }),
    ]);
    expect((await handle.query(describeQuery)).ignoredMessages).toEqual([
      expect.objectContaining({ message: 'backfill', objectName: 'contacts' }),
    ]);
    await handle.signal(backfillSignal, { objectName: 'contacts', days: 7 });
    await harness.advance(MINUTE);
    const [backfill] = harness.readsOf('contacts', 'backfill');
    expect(backfill.sinceTimestamp).toBeDefined();
    expect(harness.requested).toEqual([
      expect.objectContaining({
        objectName: 'contacts',
        readType: 'backfill',
        requestedWindow: true,
        operationId: backfill.operationId,
      }),
    ]);
  });

  it('creates, updates and deletes provider subscriptions as the subscribe config changes', async () => {
    const contacts = { objectName: 'contacts', destination: 'hooks' };
    handle = await harness.startInstallation([], { subscribe: { objects: { contacts } } });
    await harness.advance(MINUTE);
    expect(harness.subscriptionChanges).toEqual([
      expect.objectContaining({
        action: 'create',
        upserts: [expect.objectContaining({ objectName: 'contacts' })],
        removals: [],
      }),
    ]);
    const contactsId = harness.subscriptionChanges[0].upserts[0].subscriptionId;

    const update = await handle.executeUpdate(applyConfigUpdate, {
      args: [
        configMessage([], {
          subscribe: {
            objects: {
              contacts,
              deals: { objectName: 'deals', destination: 'hooks', createEvent: { enabled: 'always' } },
            },
          },
        }),
      ],
    });
    expect(update.subscriptionChange).toBe('update');
    await harness.advance(MINUTE);
    expect(harness.subscriptionChanges[1]).toMatchObject({
      action: 'update',
      upserts: [expect.objectContaining({ objectName: 'deals' })],
      removals: [],
    });

    const removal = await handle.executeUpdate(applyConfigUpdate, { args: [configMessage([])] });
    expect(removal.subscriptionChange).toBe('delete');
    await harness.advance(MINUTE);
    expect(harness.subscriptionChanges[2]).toMatchObject({ action: 'delete', upserts: [] });
    expect(harness.subscriptionChanges[2].removals).toEqual(
      expect.arrayContaining([{ objectName: 'contacts', subscriptionId: contactsId }]),
    );
    expect((await handle.query(describeQuery)).subscription.objects).toEqual({});
  });

  it('records a subscription error when the provider refuses for good', async () => {
    harness.subscriptionOutcome = () => {
      throw ApplicationFailure.nonRetryable('provider says no', 'ProviderError');
    };
    handle = await harness.startInstallation([], {
      subscribe: { objects: { contacts: { objectName: 'contacts', destination: 'hooks' } } },
    });
    await harness.advance(MINUTE);
    expect(harness.subscriptionFailures).toEqual([
      expect.objectContaining({ action: 'create', error: 'provider says no' }),
    ]);
    const { subscription } = await handle.query(describeQuery);
    expect(subscription.lastChange).toMatchObject({ action: 'create', succeeded: false });
  });

  it('on cancellation cancels running reads, removes subscriptions and ends', async () => {
    // Far longer than the test: waiting for the result lets the server skip time, and a read that
    // could finish in the skipped time would hide whether cancellation reached it.
    harness.readBehaviour = () => ({ durationMs: 365 * 24 * HOUR, status: 'success' });
    handle = await harness.startInstallation(
      [{ objectName: 'contacts', schedule: '*/30 * * * *', backfill: false }],
      {
        subscribe: { objects: { contacts: { objectName: 'contacts', destination: 'hooks' } } },
      },
    );
    await harness.advance(31 * MINUTE);
    expect(harness.readsOf('contacts')).toHaveLength(1);
    await handle.cancel();
    // Waited for without skipping time: awaiting the result lets the server skip, and a skip taken
    // before the cancellation reached the read would jump to the year-long read's end.
    while ((await handle.describe()).status.name === 'RUNNING') {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    const [read] = harness.readsOf('contacts');
    expect(read.finishedAt).toBeUndefined();
    // Cancelled by the workflow, not terminated by the parent close policy.
    const child = harness.env.client.workflow.getHandle(`read/${read.operationId}`);
    expect((await child.describe()).status.name).toBe('CANCELLED');
    expect(harness.subscriptionChanges.at(-1)).toMatchObject({
      action: 'delete',
      removals: [expect.objectContaining({ objectName: 'contacts' })],
    });
    handle = undefined;
  });

  it('ends quietly when its installation never reached the database', async () => {
    harness.installationMissing = true;
    handle = await harness.startInstallation([
      { objectName: 'contacts', schedule: '*/30 * * * *', backfill: false },
    ]);
    await expect(handle.result()).resolves.toBeUndefined();
    expect(harness.reads).toEqual([]);
    handle = undefined;
  });
});

/** Hours of skipped time with continue-as-new can be slow on a loaded CI machine. */
const SLOW_SKIPPING_MS = 180_000;

describe('the schema watch in the installation workflow', () => {
  it(
    'runs the watch activity on the manifest’s watchSchema schedule, beside the reads',
    async () => {
      handle = await harness.startInstallation(
        [{ objectName: 'contacts', schedule: '*/30 * * * *', backfill: false }],
        { watchSchema: { schedule: '0 */6 * * *' } },
      );
      await harness.advance(DAY);
      const runs = harness.schemaWatches;
      expect(runs).toHaveLength(4);
      for (const run of runs) expect(new Date(run.at).getUTCHours() % 6).toBe(0);
      expect(new Set(runs.map((run) => run.runId)).size).toBe(4);
      expect(harness.readsOf('contacts')).toHaveLength(48);
    },
    SLOW_SKIPPING_MS,
  );

  it(
    'stops watching when a config version comes without watchSchema, and never watches without one',
    async () => {
      handle = await harness.startInstallation(
        [{ objectName: 'contacts', schedule: '0 * * * *', backfill: false }],
        { watchSchema: { schedule: '0 * * * *' } },
      );
      await harness.advance(3 * HOUR + MINUTE);
      expect(harness.schemaWatches).toHaveLength(3);
      await handle.executeUpdate(applyConfigUpdate, {
        args: [configMessage([{ objectName: 'contacts', schedule: '0 * * * *', backfill: false }])],
      });
      await harness.advance(3 * HOUR);
      expect(harness.schemaWatches).toHaveLength(3);
    },
    SLOW_SKIPPING_MS,
  );

  it(
    'carries the watch across continue-as-new',
    async () => {
      handle = await harness.startInstallation([], {
        watchSchema: { schedule: '0 * * * *' },
        maxIterations: 3,
      });
      await harness.advance(10 * HOUR + MINUTE);
      expect(harness.schemaWatches).toHaveLength(10);
    },
    SLOW_SKIPPING_MS,
  );
});

describe('the wake timer', () => {
  const run = async <T>(workflowType: string, args: unknown[] = []): Promise<T> => {
    const probe = await harness.env.client.workflow.start(workflowType, {
      taskQueue: harness.taskQueue,
      workflowId: `wake-timer-${randomUUID()}`,
      args,
    });
    const result = (await probe.result()) as T;
    madeHistories.push(await probe.fetchHistory());
    return result;
  };

  it('stops asking to be re-armed once cleared in the task that armed it', async () => {
    // Left armed, the loop would wake on every pass until the run continued as new.
    await expect(run('wakeTimerClearedInArmingTask')).resolves.toEqual({
      behindArmed: true,
      behindCleared: false,
    });
  });

  it('fires a minute early when armed in the run’s first task, on time after it, and never early for two minutes or less', async () => {
    type Fired = { firstTaskMs: number; laterMs: number };
    // Workflow time also moves on by the fire's task pickup: a few milliseconds here.
    const expectAbout = (actual: number, expected: number) => {
      expect(actual).toBeGreaterThanOrEqual(expected);
      expect(actual).toBeLessThan(expected + 1000);
    };
    const fifteen = await run<Fired>('wakeTimerFires', [{ firstTaskMs: 15 * MINUTE, laterMs: 15 * MINUTE }]);
    expectAbout(fifteen.firstTaskMs, 14 * MINUTE);
    expectAbout(fifteen.laterMs, 15 * MINUTE);
    const two = await run<Fired>('wakeTimerFires', [{ firstTaskMs: 2 * MINUTE, laterMs: 2 * MINUTE }]);
    expectAbout(two.firstTaskMs, 2 * MINUTE);
    expectAbout(two.laterMs, 2 * MINUTE);
  });
});

describe('the histories these tests made', () => {
  it('replay against the workflow code (re-armed and early timers included)', async () => {
    for (const history of madeHistories) {
      await expect(
        Worker.runReplayHistory({ workflowBundle: { code: harness.workflowCode } }, history),
      ).resolves.toBeUndefined();
    }
  });
});
