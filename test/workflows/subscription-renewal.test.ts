import { describe, expect, it } from '@jest/globals';
import type { SubscribeConfig } from '../../src/schemas/installations.js';
import { Subscriptions } from '../../workflows/subscriptions.js';

/** The workflow's side of renewals: when it wakes for one, and what it plans after each outcome. */

const t0 = new Date('2026-11-28T00:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);
const contacts: SubscribeConfig = { objectName: 'contacts', destination: 'hooks' };

function subscribed(result: { renewAt?: string; renewalPlanned?: boolean }) {
  const subscriptions = new Subscriptions(undefined, { contacts }, () => undefined);
  const change = subscriptions.pendingChange(() => 'sub-1')!;
  subscriptions.started(change.action);
  subscriptions.finished(change, t0, { result: { subscriptionIds: { contacts: 'sub-1' }, ...result } });
  return subscriptions;
}

describe('Subscriptions renewals', () => {
  it('plans the renewal the change answered, and is due only once it has come', () => {
    const subscriptions = subscribed({ renewAt: later(60_000).toISOString(), renewalPlanned: true });
    expect(subscriptions.renewalAt()).toEqual(later(60_000));
    expect(subscriptions.renewalDue(later(59_999))).toBeUndefined();
    expect(subscriptions.renewalDue(later(60_000))).toBe('renew');
    expect(subscriptions.describe().renewAt).toBe(later(60_000).toISOString());
    expect(subscriptions.toJSON()).toMatchObject({
      renewAt: later(60_000).toISOString(),
      renewalKnown: true,
    });
  });

  it('plans nothing for subscriptions that last', () => {
    const subscriptions = subscribed({ renewalPlanned: true });
    expect(subscriptions.renewalAt()).toBeUndefined();
    expect(subscriptions.renewalDue(later(10 ** 12))).toBeUndefined();
  });

  it('looks at the expiries once when a change from before renewals planned none', () => {
    const subscriptions = subscribed({});
    expect(subscriptions.renewalDue(t0)).toBe('lookUp');
    subscriptions.renewalFinished(t0, { renewAt: later(5_000).toISOString(), retryInMs: 300_000 });
    expect(subscriptions.renewalDue(t0)).toBeUndefined();
    expect(subscriptions.renewalDue(later(5_000))).toBe('renew');
    // Carried across continue-as-new: the next run does not look again.
    const next = new Subscriptions(subscriptions.toJSON(), { contacts }, () => undefined);
    expect(next.renewalAt()).toEqual(later(5_000));
    const lasting = subscribed({});
    lasting.renewalFinished(t0, { retryInMs: 300_000 });
    expect(lasting.renewalDue(later(10 ** 12))).toBeUndefined();
  });

  it('plans the next renewal after one, and a retry after a failure, at the interval the activity gave', () => {
    const subscriptions = subscribed({ renewAt: t0.toISOString(), renewalPlanned: true });
    let woken = 0;
    const watched = new Subscriptions(subscriptions.toJSON(), { contacts }, () => woken++);
    watched.renewalFinished(t0, { renewAt: later(86_400_000).toISOString(), retryInMs: 60_000 });
    expect(watched.renewalAt()).toEqual(later(86_400_000));
    watched.renewalFinished(later(86_400_000), { error: 'Graph answered 503' });
    expect(watched.renewalAt()).toEqual(later(86_400_000 + 60_000));
    expect(woken).toBe(2);
  });

  it('renews every subscription at once when the provider asks, once', () => {
    const subscriptions = subscribed({ renewAt: later(86_400_000).toISOString(), renewalPlanned: true });
    subscriptions.renewNow(later(1000));
    expect(subscriptions.renewalDue(later(1000))).toBe('renew');
    expect(subscriptions.takeRenewAll()).toBe(true);
    expect(subscriptions.takeRenewAll()).toBe(false);
    const none = new Subscriptions(undefined, {}, () => undefined);
    none.renewNow(t0);
    expect(none.renewalAt()).toBeUndefined();
  });

  it('drops the renewal when the subscriptions are gone', () => {
    const subscriptions = subscribed({ renewAt: later(1000).toISOString(), renewalPlanned: true });
    subscriptions.want({});
    const removal = subscriptions.pendingChange(() => 'unused')!;
    subscriptions.started(removal.action);
    subscriptions.finished(removal, t0, { result: { subscriptionIds: {}, renewalPlanned: true } });
    expect(subscriptions.renewalAt()).toBeUndefined();
    expect(subscriptions.renewalDue(later(10 ** 12))).toBeUndefined();
  });
});
