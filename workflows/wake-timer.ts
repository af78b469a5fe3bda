import { CancellationScope, patched, sleep, workflowInfo } from '@temporalio/workflow';

/** Workflows started before a timer was re-armed at its task's end let it fire late by the task. */
const TIMER_FROM_TASK_END = 'timer-from-task-end';
/** Closer than this to the task's end, a timer armed earlier in the task stays as it is. */
const REARM_AFTER_MS = 50;

/**
 * The one timer to the earliest due read. It is re-armed only when that time changes, so a read
 * finishing or a message arriving does not cancel and restart an identical timer (two history
 * events and a server timer task each time, for every installation).
 *
 * A timer's length is measured from workflow time when it is armed, but it starts only when its
 * task completes and the command reaches the server. A timer armed while the task's inline reads
 * (local activities) run, to another object's fire or to the next of several reads, fired late by
 * their length. Each local activity's result moves workflow time on to when it completed; a timer
 * armed earlier in the same task, now behind, is armed again from there. Its first command was
 * never sent, so cancelling it costs nothing: the server sees one timer, of the right length.
 */
export class WakeTimer {
  fired = false;
  #at?: number;
  #scope?: CancellationScope;
  /** The workflow time it was armed at, and its task (the history length then). */
  #armed?: { now: number; task: number };

  arm(at: number | undefined, now: number): void {
    if (at === this.#at && !this.fired && !this.behindTaskEnd(now)) return;
    this.#scope?.cancel();
    this.#scope = undefined;
    this.#at = at;
    this.fired = false;
    if (at === undefined) return;
    this.#armed = { now, task: workflowInfo().historyLength };
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

  /**
   * Armed earlier in the current task, and workflow time has moved on since (a local activity
   * ended): it should be armed again, from `now`. The main loop wakes on this. Once its task
   * completes (the history length moves on), an armed timer stays as it is.
   */
  behindTaskEnd(now: number): boolean {
    const armed = this.#armed;
    if (!armed || armed.task !== workflowInfo().historyLength || now - armed.now < REARM_AFTER_MS) {
      return false;
    }
    return patched(TIMER_FROM_TASK_END);
  }
}
