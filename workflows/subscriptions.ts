import type { SubscribeConfig } from '../src/schemas/installations.js';
import type {
  SubscriptionAction,
  SubscriptionChange,
  SubscriptionChangeResult,
  SubscriptionDescription,
} from '../src/temporal/contracts/installation.js';
import type { SubscriptionState } from './installation-snapshot.js';

export interface PendingSubscriptionChange extends Omit<SubscriptionChange, 'installationId'> {
  /** Fingerprint of the wanted subscribe config as a whole. */
  fingerprint: string;
}

/** JSON with sorted keys: two configs are the same change exactly when their fingerprints match. */
export function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/**
 * An installation's provider subscriptions: what the provider reflects (carried across
 * continue-as-new), what the config wants, and the change that brings the two in step. Deterministic:
 * time and new ids come from the caller. `onChange` tells the workflow's main loop to look again.
 */
export class Subscriptions {
  #reflected: SubscriptionState;
  #wanted: Record<string, SubscribeConfig>;
  #changing?: SubscriptionAction;
  /** How long after a renewal that failed for good the next try comes (the activity tells; 5 minutes before it has). */
  #renewalRetryMs = 300_000;
  /** A renewal the provider asked for (not carried: a lost one waits for the planned renewal). */
  #renewAll = false;
  readonly #onChange: () => void;

  constructor(
    carried: SubscriptionState | undefined,
    wanted: Record<string, SubscribeConfig>,
    onChange: () => void,
  ) {
    this.#reflected = carried ?? { objects: {} };
    this.#wanted = wanted;
    this.#onChange = onChange;
  }

  /** Takes the subscribed objects of a new config version; returns the change it asks for, if any. */
  want(wanted: Record<string, SubscribeConfig>): SubscriptionAction | undefined {
    this.#wanted = wanted;
    return this.#action();
  }

  hasPendingChange(): boolean {
    return this.#action() !== undefined;
  }

  /** The change that brings the provider in step with the config; new subscriptions get ids from `newId`. */
  pendingChange(newId: () => string): PendingSubscriptionChange | undefined {
    const action = this.#action();
    if (!action) return undefined;
    const wanted = this.#wanted;
    const current = this.#reflected.objects;
    const upserts = Object.entries(wanted)
      .filter(([name, object]) => current[name]?.fingerprint !== fingerprint(object))
      .map(([name, object]) => ({
        objectName: name,
        subscriptionId: current[name]?.subscriptionId ?? newId(),
        config: object,
      }));
    const removals = Object.entries(current)
      .filter(([name]) => !Object.hasOwn(wanted, name))
      .map(([name, { subscriptionId }]) => ({ objectName: name, subscriptionId }));
    return { action, upserts, removals, fingerprint: fingerprint(wanted) };
  }

  /** Every subscription, for removal when the installation is deleted. */
  removalOfAll(): PendingSubscriptionChange | undefined {
    const removals = Object.entries(this.#reflected.objects).map(([name, { subscriptionId }]) => ({
      objectName: name,
      subscriptionId,
    }));
    return removals.length
      ? { action: 'delete', upserts: [], removals, fingerprint: fingerprint({}) }
      : undefined;
  }

  started(action: SubscriptionAction): void {
    this.#changing = action;
  }

  finished(
    change: PendingSubscriptionChange,
    now: Date,
    outcome: { result: SubscriptionChangeResult } | { error: string },
  ): void {
    this.#changing = undefined;
    const failed = 'error' in outcome;
    const lastChange = {
      action: change.action,
      succeeded: !failed,
      at: now.toISOString(),
      ...(failed && { error: outcome.error }),
    };
    if (failed) {
      this.#reflected = { ...this.#reflected, failedFingerprint: change.fingerprint, lastChange };
    } else {
      const objects = { ...this.#reflected.objects };
      for (const removal of change.removals) delete objects[removal.objectName];
      for (const upsert of change.upserts) {
        objects[upsert.objectName] = {
          subscriptionId: outcome.result.subscriptionIds[upsert.objectName] ?? upsert.subscriptionId,
          fingerprint: fingerprint(upsert.config),
        };
      }
      // A result without `renewAt` (nothing expires, or a history from before renewals) plans none.
      const { renewAt, renewalPlanned } = outcome.result;
      this.#reflected = {
        objects,
        lastChange,
        ...(renewAt && { renewAt }),
        ...((renewalPlanned || this.#reflected.renewalKnown) && { renewalKnown: true }),
      };
    }
    this.#onChange();
  }

  /** The provider asked for a renewal now: every subscription that expires is renewed at the next turn. */
  renewNow(now: Date): void {
    if (!Object.keys(this.#reflected.objects).length) return;
    this.#renewAll = true;
    this.#reflected = { ...this.#reflected, renewAt: now.toISOString() };
    this.#onChange();
  }

  /** Whether the renewal due is one the provider asked for (all renewed, due or not); taken once. */
  takeRenewAll(): boolean {
    const all = this.#renewAll;
    this.#renewAll = false;
    return all;
  }

  /** When the main loop must wake to renew, if any subscription expires. */
  renewalAt(): Date | undefined {
    const { renewAt } = this.#reflected;
    return renewAt ? new Date(renewAt) : undefined;
  }

  /** A renewal is due: its time has come, or the expiries were never looked at (`lookUp`). */
  renewalDue(now: Date): 'renew' | 'lookUp' | undefined {
    const at = this.renewalAt();
    if (at && at.getTime() <= now.getTime()) return 'renew';
    const { objects, renewalKnown } = this.#reflected;
    return !at && !renewalKnown && Object.keys(objects).length ? 'lookUp' : undefined;
  }

  /** A renewal (or look) ended: the next one as the activity planned it, or a retry after a failure. */
  renewalFinished(now: Date, outcome: { renewAt?: string; retryInMs: number } | { error: string }): void {
    if ('error' in outcome) {
      const retryAt = new Date(now.getTime() + this.#renewalRetryMs).toISOString();
      this.#reflected = { ...this.#reflected, renewAt: retryAt, renewalKnown: true };
    } else {
      this.#renewalRetryMs = outcome.retryInMs;
      const { renewAt: _previous, ...rest } = this.#reflected;
      this.#reflected = { ...rest, ...(outcome.renewAt && { renewAt: outcome.renewAt }), renewalKnown: true };
    }
    this.#onChange();
  }

  describe(): SubscriptionDescription {
    const reflected = this.#reflected;
    return {
      objects: Object.fromEntries(
        Object.entries(reflected.objects).map(([name, { subscriptionId }]) => [name, subscriptionId]),
      ),
      ...(this.#changing && { changing: this.#changing }),
      ...(reflected.lastChange && { lastChange: reflected.lastChange }),
      ...(reflected.renewAt && { renewAt: reflected.renewAt }),
    };
  }

  toJSON(): SubscriptionState {
    return this.#reflected;
  }

  /** create (none yet), delete (none wanted any more), update (anything else), or undefined when in step. */
  #action(): SubscriptionAction | undefined {
    const wanted = this.#wanted;
    const print = fingerprint(wanted);
    const current = this.#reflected;
    if (print === current.failedFingerprint) return undefined;
    const currentNames = Object.keys(current.objects);
    const inStep =
      currentNames.length === Object.keys(wanted).length &&
      currentNames.every(
        (name) => wanted[name] && fingerprint(wanted[name]) === current.objects[name].fingerprint,
      );
    if (inStep) return undefined;
    if (!currentNames.length) return 'create';
    return Object.keys(wanted).length ? 'update' : 'delete';
  }
}
