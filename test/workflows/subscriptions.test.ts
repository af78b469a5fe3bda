import { describe, expect, it } from '@jest/globals';
import type { SubscribeConfig } from '../../src/schemas/installations.js';
import { Subscriptions, fingerprint } from '../../workflows/subscriptions.js';

const t0 = new Date('2026-03-02T00:00:00.000Z');
const contacts: SubscribeConfig = { objectName: 'contacts', destination: 'hooks' };
const deals: SubscribeConfig = { objectName: 'deals', destination: 'hooks' };

/** Subscription ids 'sub-1', 'sub-2', … in call order. */
function ids() {
  let next = 0;
  return () => `sub-${++next}`;
}

/** Carries out the pending change as the provider would, answering with the proposed ids. */
function changeSucceeds(subscriptions: Subscriptions, newId: () => string) {
  const change = subscriptions.pendingChange(newId)!;
  subscriptions.started(change.action);
  const subscriptionIds = Object.fromEntries(
    change.upserts.map((upsert) => [upsert.objectName, upsert.subscriptionId]),
  );
  subscriptions.finished(change, t0, { result: { subscriptionIds } });
  return change;
}

describe('fingerprint', () => {
  it('is the same for the same config whatever the key order', () => {
    expect(fingerprint({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: 3 } })).toBe(
      fingerprint({ a: { c: 3, d: [2, { e: 0, f: 1 }] }, b: 1 }),
    );
    expect(fingerprint({ a: [1, 2] })).not.toBe(fingerprint({ a: [2, 1] }));
  });
});

describe('Subscriptions', () => {
  it('creates, updates and deletes as the wanted objects change, and is in step after each change', () => {
    const subscriptions = new Subscriptions(undefined, {}, () => undefined);
    const newId = ids();
    expect(subscriptions.hasPendingChange()).toBe(false);

    expect(subscriptions.want({ contacts })).toBe('create');
    expect(changeSucceeds(subscriptions, newId)).toEqual({
      action: 'create',
      upserts: [{ objectName: 'contacts', subscriptionId: 'sub-1', config: contacts }],
      removals: [],
      fingerprint: fingerprint({ contacts }),
    });
    expect(subscriptions.hasPendingChange()).toBe(false);

    // Only the changed object is upserted; an existing object keeps its id.
    const changedContacts = { ...contacts, destination: 'other' };
    expect(subscriptions.want({ contacts: changedContacts, deals })).toBe('update');
    expect(changeSucceeds(subscriptions, newId)).toMatchObject({
      upserts: [
        { objectName: 'contacts', subscriptionId: 'sub-1', config: changedContacts },
        { objectName: 'deals', subscriptionId: 'sub-2', config: deals },
      ],
      removals: [],
    });
    expect(subscriptions.want({ deals })).toBe('update');
    expect(changeSucceeds(subscriptions, newId)).toMatchObject({
      upserts: [],
      removals: [{ objectName: 'contacts', subscriptionId: 'sub-1' }],
    });

    expect(subscriptions.want({})).toBe('delete');
    changeSucceeds(subscriptions, newId);
    expect(subscriptions.hasPendingChange()).toBe(false);
    expect(subscriptions.describe()).toEqual({
      objects: {},
      lastChange: { action: 'delete', succeeded: true, at: t0.toISOString() },
    });
  });

  it("keeps the provider's id for an upserted object over the proposed one", () => {
    const subscriptions = new Subscriptions(undefined, { contacts }, () => undefined);
    const change = subscriptions.pendingChange(ids())!;
    subscriptions.finished(change, t0, { result: { subscriptionIds: { contacts: 'existing' } } });
    expect(subscriptions.describe().objects).toEqual({ contacts: 'existing' });
    expect(subscriptions.removalOfAll()).toEqual({
      action: 'delete',
      upserts: [],
      removals: [{ objectName: 'contacts', subscriptionId: 'existing' }],
      fingerprint: fingerprint({}),
    });
  });

  it('does not retry a change that failed for good until the wanted objects change again', () => {
    const changes = { count: 0 };
    const subscriptions = new Subscriptions(undefined, { contacts }, () => changes.count++);
    const change = subscriptions.pendingChange(ids())!;
    subscriptions.started(change.action);
    expect(subscriptions.describe().changing).toBe('create');
    subscriptions.finished(change, t0, { error: 'provider says no' });
    expect(changes.count).toBe(1);
    expect(subscriptions.hasPendingChange()).toBe(false);
    expect(subscriptions.describe()).toEqual({
      objects: {},
      lastChange: { action: 'create', succeeded: false, at: t0.toISOString(), error: 'provider says no' },
    });
    expect(subscriptions.want({ contacts })).toBeUndefined();
    expect(subscriptions.want({ contacts, deals })).toBe('create');
  });

  it('has nothing to remove when nothing is subscribed', () => {
    expect(new Subscriptions(undefined, { contacts }, () => undefined).removalOfAll()).toBeUndefined();
  });

  it('carries what the provider reflects through plain JSON for continue-as-new', () => {
    const subscriptions = new Subscriptions(undefined, { contacts }, () => undefined);
    changeSucceeds(subscriptions, ids());
    const state = JSON.parse(JSON.stringify(subscriptions.toJSON())) as ReturnType<Subscriptions['toJSON']>;
    const carried = new Subscriptions(state, { contacts }, () => undefined);
    expect(carried.toJSON()).toEqual(subscriptions.toJSON());
    expect(carried.hasPendingChange()).toBe(false);
    expect(carried.describe()).toEqual(subscriptions.describe());
  });
});
