import { describe, expect, it } from '@jest/globals';
import type { InstallationConfigMessage, ReadObjectPlan } from '../../src/temporal/contracts/installation.js';
import type { InstallationRunInput } from '../../workflows/installation-snapshot.js';
import { InstallationState } from '../../workflows/installation-state.js';
import { spreadFraction } from '../../workflows/schedule.js';

const MINUTE = 60_000;
const t0 = new Date('2026-03-02T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const installationId = '00000000-0000-4000-8000-000000000001';
const contactsHook = { objectName: 'contacts', destination: 'hooks' };

function config(
  configId: string,
  reads: ReadObjectPlan[],
  subscribe?: InstallationConfigMessage['content']['subscribe'],
): InstallationConfigMessage {
  return {
    configId,
    revisionId: 'revision',
    content: { provider: 'sandboxApiKey', ...(subscribe && { subscribe }) },
    reads,
  };
}

const input: InstallationRunInput = {
  installationId,
  projectId: 'project',
  config: config('first', [{ objectName: 'contacts', schedule: '0 * * * *', backfill: true }]),
  scheduleSpreadSeconds: 60,
};

describe('InstallationState', () => {
  it('is ready once the first config is applied, and wakes the main loop for it', () => {
    const state = new InstallationState(input);
    expect(state.ready).toBe(false);
    expect(state.describe()).toMatchObject({ ready: false, configId: 'first', objects: [] });
    const result = state.applyConfig(input.config, ['contacts'], t0);
    expect(result).toEqual({ configId: 'first', added: ['contacts'], changed: [], removed: [] });
    expect(state.ready).toBe(true);
    expect(state.woken).toBe(true);
    expect(state.takeWoken()).toBe(true);
    expect(state.woken).toBe(false);
    expect(state.takeWoken()).toBe(false);
  });

  it('answers a config version with what changed and the subscription change it starts', () => {
    const state = new InstallationState(input);
    state.applyConfig(input.config, [], t0);
    const next = config(
      'second',
      [
        { objectName: 'contacts', schedule: '*/30 * * * *', backfill: true },
        { objectName: 'deals', schedule: '0 * * * *', backfill: false },
      ],
      { objects: { contacts: contactsHook } },
    );
    expect(state.applyConfig(next, [], at(MINUTE))).toEqual({
      configId: 'second',
      added: ['deals'],
      changed: ['contacts'],
      removed: [],
      subscriptionChange: 'create',
    });
    expect(state.config).toBe(next);
    expect(state.subscriptions.hasPendingChange()).toBe(true);
  });

  it('describes the installation for the query', () => {
    const state = new InstallationState(input);
    state.applyConfig(input.config, [], t0);
    state.reads.pause({ note: 'maintenance' });
    expect(state.describe()).toEqual({
      ready: true,
      installationId,
      projectId: 'project',
      configId: 'first',
      revisionId: 'revision',
      objects: [
        {
          objectName: 'contacts',
          schedule: '0 * * * *',
          paused: true,
          pauseNote: 'maintenance',
          needsBackfill: false,
          queuedTriggers: 0,
          queued: [],
          consecutiveAuthFailures: 0,
        },
      ],
      running: [],
      paused: ['contacts'],
      subscription: { objects: {} },
      recentFires: [],
      generation: 0,
      spread: { maxSeconds: 60, fraction: spreadFraction(installationId) },
      ignoredMessages: [],
    });
  });

  it('hands the next run a snapshot of the same shape, and carries on from it', () => {
    const state = new InstallationState({
      ...input,
      config: config('first', input.config.reads, { objects: { contacts: contactsHook } }),
    });
    state.applyConfig(state.config, ['contacts'], t0);
    const [read] = state.reads.takeDueReads(t0, () => 'op-1');
    state.reads.finishRead(read, at(MINUTE), { succeeded: true, authFailure: false });
    state.reads.trigger({ objectName: 'gone', operationId: 'op-2' }, at(MINUTE));
    const change = state.subscriptions.pendingChange(() => 'sub-1')!;
    state.subscriptions.finished(change, at(MINUTE), { result: { subscriptionIds: { contacts: 'sub-1' } } });

    const snapshot = state.snapshot();
    // Running workflows continue as new with this JSON: its keys and their order stay as they are.
    expect(Object.keys(snapshot)).toEqual([
      'schedules',
      'pauseNotes',
      'authFailures',
      'subscription',
      'recentFires',
      'seenOperationIds',
      'abandonedOperationIds',
      'generation',
    ]);
    expect(snapshot).toMatchObject({
      pauseNotes: {},
      authFailures: {},
      subscription: {
        objects: { contacts: { subscriptionId: 'sub-1' } },
        lastChange: { action: 'create', succeeded: true },
      },
      recentFires: [{ objectName: 'contacts', operationId: 'op-1', readType: 'backfill' }],
      seenOperationIds: ['op-1', 'op-2'],
      abandonedOperationIds: ['op-2'],
      generation: 0,
    });

    const next = new InstallationState({
      ...input,
      config: state.config,
      carried: JSON.parse(JSON.stringify(snapshot)) as typeof snapshot,
    });
    expect(next.ready).toBe(true);
    expect(next.generation).toBe(1);
    expect(next.snapshot()).toEqual({ ...snapshot, generation: 1 });
    expect(next.describe()).toEqual({ ...state.describe(), generation: 1 });
    expect(next.subscriptions.hasPendingChange()).toBe(false);
  });
});
