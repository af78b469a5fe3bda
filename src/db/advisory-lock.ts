import { getOrm } from './orm.js';
import { withPooledConnection } from './raw.js';

/**
 * Work that one process at a time should do, however many run: a PostgreSQL session advisory lock
 * named after the work, tried without waiting. The holder keeps one pooled connection while it works
 * and unlocks after; a process that dies lets the lock go with its connection, so the next one to
 * try takes over at once.
 */

export type Exclusive<T> = { ran: true; value: T } | { ran: false };

/** Runs `work` unless another session holds the lock of `name`; then skips it (`ran: false`). */
export async function unlessRunningElsewhere<T>(name: string, work: () => Promise<T>): Promise<Exclusive<T>> {
  const orm = await getOrm();
  // hashtext: a stable int4 of the name; the `ferry:` prefix keeps clear of other users' locks.
  const values = [`ferry:${name}`];
  return withPooledConnection(orm.em, async (connection) => {
    const { rows } = await connection.query({
      text: 'select pg_try_advisory_lock(hashtext($1)) as locked',
      values,
    });
    if (!rows[0].locked) return { ran: false };
    try {
      return { ran: true, value: await work() };
    } finally {
      await connection.query({ text: 'select pg_advisory_unlock(hashtext($1))', values });
    }
  });
}
