import { CancellationScope, sleep } from '@temporalio/workflow';

/**
 * The one timer to the earliest due read. It is re-armed only when that time changes, so a read
 * finishing or a message arriving does not cancel and restart an identical timer (two history
 * events and a server timer task each time, for every installation).
 */
export class WakeTimer {
  fired = false;
  #at?: number;
  #scope?: CancellationScope;

  arm(at: number | undefined, now: number): void {
    if (at === this.#at && !this.fired) return;
    this.#scope?.cancel();
    this.#scope = undefined;
    this.#at = at;
    this.fired = false;
    if (at === undefined) return;
    const scope = new CancellationScope();
    this.#scope = scope;
    scope
      .run(() => sleep(Math.max(at - now, 1)))
      .then(
        () => {
          if (this.#scope === scope) this.fired = true;
        },
        () => undefined, // cancelled: re-armed, or the workflow is ending
      );
  }
}
