import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { config } from '../config.js';
import { logger } from '../logger.js';

/**
 * Repair marks (table `repair_marks`): the intent of a change that spans PostgreSQL and Temporal,
 * committed before either side changes. The request holds a session advisory lock on its mark for
 * as long as it works, on a connection of its own; PostgreSQL drops that lock the moment the
 * process or its connection dies. So a mark that exists and is not locked is a change that did not
 * finish, and a worker can repair it at once, never under a request still in flight.
 */

export interface RepairMark {
  projectId: string;
  installationId: string;
  /** The operation the change created (a triggered read, a write), when it made one. */
  operationId?: string;
  /** What the request was doing, for the repair's log line. */
  reason: string;
}

export interface HeldRepairMark {
  id: string;
  /**
   * Ends the hold. `settled`: both sides agree (the change completed, or failed before touching
   * Temporal, or was undone), so the mark goes. Otherwise it stays, unlocked, for a worker to check.
   */
  release(settled: boolean): Promise<void>;
}

/** Advisory-lock namespace of repair marks (the two-key form keeps clear of other users). */
const LOCK_CLASS = 4242;

let pool: pg.Pool | undefined;

/**
 * Connections that only hold marks: a pool apart from the ORM's, so a burst of requests holding
 * marks can never starve the transactions those same requests wait for.
 */
function markPool(): pg.Pool {
  if (!pool) {
    pool = new pg.Pool({ connectionString: config().databaseUrl, max: 20, idleTimeoutMillis: 10_000 });
    // An idle connection the server closed is dropped by the pool; nothing else to do.
    pool.on('error', (error) => logger.warn({ err: error }, 'repair mark connection closed'));
  }
  return pool;
}

export async function closeRepairMarks(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.end();
}

/** Commits the mark and locks it for this process until `release`. */
export async function holdRepairMark(mark: RepairMark): Promise<HeldRepairMark> {
  const id = randomUUID();
  const client = await markPool().connect();
  // The server closed the connection (a restart): the lock is gone and the mark will be checked
  // once more, which is harmless; the request itself goes on.
  const lost = (error: Error) => logger.warn({ err: error, markId: id }, 'lost the lock of a repair mark');
  client.on('error', lost);
  try {
    // Locked before the row exists, so no worker can ever see the row unlocked while this lives.
    await client.query('select pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS, id]);
    await client.query(
      `insert into repair_marks (id, project_id, installation_id, operation_id, reason)
       values ($1, $2, $3, $4, $5)`,
      [id, mark.projectId, mark.installationId, mark.operationId ?? null, mark.reason],
    );
  } catch (error) {
    client.off('error', lost);
    client.release(true);
    throw error;
  }
  return {
    id,
    async release(settled) {
      try {
        if (settled) await client.query('delete from repair_marks where id = $1', [id]);
        await client.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, id]);
        client.off('error', lost);
        client.release();
      } catch (error) {
        // The change itself is done; a mark left behind is only checked once more.
        logger.warn({ err: error, markId: id }, 'could not release a repair mark');
        client.off('error', lost);
        client.release(true);
      }
    },
  };
}

export interface AbandonedRepairMark extends RepairMark {
  id: string;
}

/**
 * Claims up to `limit` marks nobody holds, oldest first, inside the caller's transaction (whose
 * transaction-scoped locks keep other workers off them until it ends).
 */
export async function claimAbandonedRepairMarks(
  tx: EntityManager,
  options: { limit: number; projectId?: string },
): Promise<AbandonedRepairMark[]> {
  const rows = await tx.execute<
    { id: string; project_id: string; installation_id: string; operation_id: string | null; reason: string }[]
  >(
    // The candidates first (a subquery with a limit is never merged into the outer query), so the
    // lock is only tried on them, never on rows another filter would have dropped.
    `select id, project_id, installation_id, operation_id, reason
       from (select * from repair_marks ${options.projectId ? 'where project_id = ?' : ''}
              order by create_time limit ?) candidates
      where pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(id::text))
      order by create_time limit ?`,
    [...(options.projectId ? [options.projectId] : []), options.limit * 4, options.limit],
  );
  return rows.map((row) => ({
    id: row.id,
    projectId: row.project_id,
    installationId: row.installation_id,
    ...(row.operation_id && { operationId: row.operation_id }),
    reason: row.reason,
  }));
}

export async function deleteRepairMark(tx: EntityManager, id: string): Promise<void> {
  await tx.execute('delete from repair_marks where id = ?', [id]);
}
