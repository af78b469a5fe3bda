import { getOrm } from './orm.js';
import { withPooledConnection } from './raw.js';

/**
 * Work that one process at a time should do, however many run: a PostgreSQL session advisory lock
 * named after the work, tried without waiting. The holder keeps one pooled connection while it works
 * and unlocks after; a process that dies lets the lock go with its connection, so the next one to
 * try takes over at once.
 */

/** What `work` answered and how long it took, or why it did not run. */
export type Exclusive<T> =
  { ran: true; value: T; durationMs: number } | { ran: false; why: 'running-elsewhere' | 'not-due' };

export interface Pace<T = unknown> {
  /**
   * The most of the time the work takes, in whichever processes: after a run of d seconds, the next
   * may start d × (1 − share) / share seconds after it ended, 10 minutes at the most
   * (`exclusive_runs` keeps the last run that set the pace).
   */
  share: number;
  /**
   * Whether a run that answered `value` sets the pace; by default every run that did not throw.
   * A run that found things broken says no, so that recovery keeps the usual interval: its length
   * then measures the outage (timeouts), not the work's steady cost.
   */
  setsPace?: (value: T) => boolean;
}

/**
 * Runs `work` unless another session holds the lock of `name` (`running-elsewhere`) or, paced, the
 * last run anywhere ended too recently for its length (`not-due`); then skips it.
 */
export async function unlessRunningElsewhere<T>(
  name: string,
  work: () => Promise<T>,
  pace?: Pace<T>,
): Promise<Exclusive<T>> {
  const orm = await getOrm();
  // hashtext: a stable int4 of the name; the `ferry:` prefix keeps clear of other users' locks.
  const values = [`ferry:${name}`];
  return withPooledConnection(orm.em, async (connection) => {
    const { rows } = await connection.query({
      text: 'select pg_try_advisory_lock(hashtext($1)) as locked',
      values,
    });
    if (!rows[0].locked) return { ran: false, why: 'running-elsewhere' };
    try {
      if (pace) {
        const last = await connection.query({
          text: `select now() >= finished_at + least(make_interval(secs => duration_ms / 1000.0 * (1 - $2::float8) / $2::float8),
                                                    interval '10 minutes') as due
                   from exclusive_runs where name = $1`,
          values: [name, pace.share],
        });
        if (last.rows.length && !last.rows[0].due) return { ran: false, why: 'not-due' };
      }
      const started = performance.now();
      const value = await work();
      const durationMs = Math.round(performance.now() - started);
      // A failed run is not recorded: the next try comes at its usual time, as an outage needs.
      if (pace && (pace.setsPace?.(value) ?? true))
        await connection.query({
          text: `insert into exclusive_runs (name, finished_at, duration_ms) values ($1, now(), $2)
                 on conflict (name) do update set finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`,
          values: [name, durationMs],
        });
      return { ran: true, value, durationMs };
    } finally {
      await connection.query({ text: 'select pg_advisory_unlock(hashtext($1))', values });
    }
  });
}
