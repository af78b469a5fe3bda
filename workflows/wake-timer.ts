import { CancellationScope, patched, sleep, workflowInfo } from '@temporalio/workflow';

/** Workflows started before a timer was re-armed at its task's end let it fire late by the task. */
const TIMER_FROM_TASK_END = 'timer-from-task-end';
/** Closer than this to the task's end, a timer armed earlier in the task stays as it is. */
const REARM_AFTER_MS = 50;
/** A timer armed in the run's first task, and longer than twice this, fires this much early. */
const FIRST_TASK_LEAD_MS = 60_000;

/**
 * The one timer to the earliest due read. It is re-armed only when that time changes, so a read
 * finishing or a message arriving does not cancel and restart an identical timer (two history
 * events and a server timer task each time, for every installation).
 *
 * A timer's length is measured from workflow time when it is armed, but it starts only when its
 * task completes and the command reaches the server. A timer armed while the task's inline reads
 * (local activities) run, to another object's fire, fired late by their length (1.5 s in the
 * harness test with 1.5 s reads). Each local activity's result moves workflow time on to when it
 * completed; a timer armed earlier in the same task, now behind, is armed again from
 * there. Its first command was never sent, so dropping it costs nothing: the server sees one
 * timer, of the right length.
 *
 * The same lag, from workflow time to the task's completion, is long in a run's first task when
 * many installations are created at once: the worker and the server are busiest then, and every
 * first fire came late by it (p99 2.4 s at 10,000). A timer armed in that task therefore fires a
 * minute early, and the loop, finding nothing due, arms the rest from a task that has only that
 * timer to answer: one more timer per run, not per fire.
 */
export class WakeTimer {
  fired = false;
  #at?: number;
  #scope?: CancellationScope;
  /** While a timer is armed and has not fired: the workflow time it was armed at, and its task. */
  #armed?: { now: number; task: number };
  /** The run's first task (the history length then): the timer is constructed in it. */
  readonly #firstTask = workflowInfo().historyLength;

  arm(at: number | undefined, now: number): void {
    if (at === this.#at && !this.fired && !this.behindTaskEnd(now)) return;
    this.#scope?.cancel();
    this.#scope = undefined;
    this.#armed = undefined;
    this.#at = at;
    this.fired = false;
    if (at === undefined) return;
    const task = workflowInfo().historyLength;
    this.#armed = { now, task };
    const early = task === this.#firstTask && at - now > 2 * FIRST_TASK_LEAD_MS ? FIRST_TASK_LEAD_MS : 0;
    const scope = new CancellationScope();
    this.#scope = scope;
    scope
      .run(() => sleep(Math.max(at - early - now, 1)))
      .then(
        () => {
          if (this.#scope !== scope) return;
          this.fired = true;
          this.#armed = undefined;
        },
        () => undefined, // cancelled: re-armed, or the workflow is ending
      );
  }

  /**
   * A timer armed earlier in the current task, not fired, and workflow time has moved on since (a
   * local activity ended): it should be armed again, from `now`. The main loop wakes on this. Once
   * its task completes (the history length moves on), an armed timer stays as it is.
   */
  behindTaskEnd(now: number): boolean {
    const armed = this.#armed;
    if (!armed || armed.task !== workflowInfo().historyLength || now - armed.now < REARM_AFTER_MS) {
      return false;
    }
    return patched(TIMER_FROM_TASK_END);
  }
}
