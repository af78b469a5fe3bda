/**
 * The installation workflow's background work: reads, reports of given-up triggers and provider
 * subscription changes. All of it ends before continue-as-new, so nothing is lost, and before the
 * cleanup when the installation is deleted.
 */
export class InFlight {
  readonly #work = new Set<Promise<void>>();
  #subscriptionChange?: Promise<void>;

  get idle(): boolean {
    return this.#work.size === 0 && !this.#subscriptionChange;
  }

  track(work: Promise<void>): void {
    const running = work.finally(() => this.#work.delete(running));
    this.#work.add(running);
  }

  /** Subscription changes run one at a time. */
  get changingSubscriptions(): boolean {
    return this.#subscriptionChange !== undefined;
  }

  trackSubscriptionChange(work: Promise<void>, onEnd: () => void): void {
    this.#subscriptionChange = work.finally(() => {
      this.#subscriptionChange = undefined;
      onEnd();
    });
  }

  /** Settles when everything running now has ended, however it ended. */
  allSettled(): Promise<unknown> {
    const subscriptionChange = this.#subscriptionChange;
    return Promise.allSettled([...this.#work, ...(subscriptionChange ? [subscriptionChange] : [])]);
  }
}
