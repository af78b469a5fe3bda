import { ProblemError } from '../core/problem.js';
import { transaction } from '../db/orm.js';
import {
  claimAbandonedRepairMarks,
  deleteRepairMark,
  holdRepairMark,
  type HeldRepairMark,
  type RepairMark,
} from '../db/repair-marks.js';
import { logger } from '../logger.js';
import { repairMarks } from '../metrics.js';
import { reconcileInstallation } from './installations/reconcile.js';
import { settleOperation } from './stuck-operations.js';

/**
 * Changes that touch both PostgreSQL and Temporal run under a repair mark (db/repair-marks.ts): if
 * the process dies midway, the mark is left unlocked and the next worker pass (every second or so)
 * brings that installation and operation back in step, instead of waiting for a full reconcile or
 * for the operation to look stale.
 */
export async function withRepairMark<T>(
  mark: RepairMark,
  change: (held: HeldRepairMark) => Promise<T>,
): Promise<T> {
  const held = await holdRepairMark(mark);
  let settled = false;
  try {
    const result = await change(held);
    settled = true;
    return result;
  } catch (error) {
    // A refusal (4xx) never reached Temporal, or was undone before it was thrown; anything else
    // may have left the two sides apart, so the mark stays for a worker to check.
    settled = error instanceof ProblemError && error.status < 500;
    throw error;
  } finally {
    await held.release(settled);
  }
}

export interface MarkedRepairResult {
  /** Marks of changes that did not finish, checked this pass. */
  examined: number;
  /** What was done about them: workflows started or ended, configs resent, operations resumed or ended. */
  repairs: Record<string, number>;
  failed: number;
}

/** Repairs what unfinished changes left behind, oldest first; a mark that cannot be repaired yet stays. */
export async function repairUnfinishedChanges(
  options: { limit?: number; projectId?: string } = {},
): Promise<MarkedRepairResult> {
  const result: MarkedRepairResult = { examined: 0, repairs: {}, failed: 0 };
  await transaction(async (tx) => {
    const marks = await claimAbandonedRepairMarks(tx, {
      limit: options.limit ?? 50,
      projectId: options.projectId,
    });
    for (const mark of marks) {
      result.examined++;
      try {
        const done = [
          await reconcileInstallation(mark.installationId),
          mark.operationId ? await settleOperation(mark.operationId) : undefined,
        ].filter((repair) => repair !== undefined);
        await deleteRepairMark(tx, mark.id);
        for (const repair of done) result.repairs[repair] = (result.repairs[repair] ?? 0) + 1;
        if (done.length) {
          logger.info(
            {
              installationId: mark.installationId,
              operationId: mark.operationId,
              unfinished: mark.reason,
              repaired: done,
            },
            'repaired a change its process did not finish',
          );
        }
      } catch (error) {
        result.failed++;
        logger.warn({ err: error, markId: mark.id }, 'could not repair an unfinished change yet');
      }
    }
  });
  if (result.examined > result.failed)
    repairMarks.inc({ outcome: 'repaired' }, result.examined - result.failed);
  if (result.failed) repairMarks.inc({ outcome: 'failed' }, result.failed);
  return result;
}
