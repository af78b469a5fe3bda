import { config } from '../config.js';
import { logger } from '../logger.js';
import { repairPassDuration, repairPasses, repairedItems } from '../metrics.js';
import { unlessRunningElsewhere } from '../db/advisory-lock.js';
import { reconcileInstallations } from '../domain/installations/reconcile.js';
import { repairUnfinishedChanges } from '../domain/marked-changes.js';
import { sweepStuckOperations } from '../domain/stuck-operations.js';

export interface RepairLoop {
  stop(): Promise<void>;
}

/** A pass run now and then again `intervalMs` after each one ends, so passes never overlap. */
function every(intervalMs: number, pass: () => Promise<void>): RepairLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  running = pass().finally(schedule);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * Runs in every worker so nothing waits for a restart:
 * - every second, repairs what a change spanning PostgreSQL and Temporal left behind when its
 *   process died midway (its repair mark is left unlocked): the installation and operation it was
 *   changing are brought back in step within seconds;
 * - from the start and every `FERRY_REPAIR_INTERVAL_SECONDS`, the full pass: makes Temporal match
 *   PostgreSQL for every installation (reconcile) and ends or resumes operations that lost their
 *   run, whatever the cause (a run terminated from the Temporal UI, a server that lost its data).
 *   One worker runs it at a time, and the deployment's passes take at most 2 % of the time: after a
 *   pass of a second (10,000 installations: a visibility listing and a scan of the table) that
 *   found everything in order, the next, in whichever worker, comes 49 seconds later at the
 *   earliest. Other turns are skipped. Passes that repair something keep the usual interval.
 * A failed pass is logged and the next one tries again.
 */
/** The most of the time full passes take, across every worker of the deployment. */
const FULL_PASS_SHARE = 0.02;

interface FullPass {
  reconciled: Awaited<ReturnType<typeof reconcileInstallations>>;
  swept: Awaited<ReturnType<typeof sweepStuckOperations>>;
}

function repairedCount({ reconciled, swept }: FullPass): number {
  return reconciled.started + reconciled.configResent + reconciled.orphansEnded + swept.resumed + swept.ended;
}

export function startRepairLoop(options: { intervalMs?: number; marksIntervalMs?: number } = {}): RepairLoop {
  let first = true;
  const full = every(options.intervalMs ?? config().repair.intervalMs, async () => {
    try {
      // One worker at a time: with several replicas, the others skip the pass rather than repeat it.
      const pass = await unlessRunningElsewhere(
        'repair-pass',
        async (): Promise<FullPass> => ({
          reconciled: await reconcileInstallations(),
          swept: await sweepStuckOperations({ staleAfterMs: config().repair.stuckAfterMs }),
        }),
        // A pass that repaired something or met failures does not set the pace: the next comes
        // at the usual interval until one finds everything in order.
        { share: FULL_PASS_SHARE, setsPace: (done) => !repairedCount(done) && !done.reconciled.failed },
      );
      if (!pass.ran) {
        if (pass.why === 'not-due') return;
        logger.debug('repair pass skipped: another worker is running it');
        repairPasses.inc({ outcome: 'skipped' });
        return;
      }
      repairPassDuration.observe(pass.durationMs / 1000);
      const { reconciled, swept } = pass.value;
      const repaired = repairedCount(pass.value);
      // The first pass (the one a restart triggers) and any that changed something are worth a line.
      const level = first || repaired || reconciled.failed ? 'info' : 'debug';
      first = false;
      logger[level]({ reconciled, swept }, 'repair pass');
      repairPasses.inc({ outcome: repaired ? 'repaired' : 'clean' });
      const items = {
        started: reconciled.started,
        config_resent: reconciled.configResent,
        orphans_ended: reconciled.orphansEnded,
        resumed: swept.resumed,
        ended: swept.ended,
        failed: reconciled.failed,
      };
      for (const [action, count] of Object.entries(items)) if (count) repairedItems.inc({ action }, count);
    } catch (error) {
      repairPasses.inc({ outcome: 'failed' });
      logger.error({ err: error }, 'repair pass failed');
    }
  });
  const marks = every(options.marksIntervalMs ?? 1000, async () => {
    try {
      await repairUnfinishedChanges();
    } catch (error) {
      logger.error({ err: error }, 'repair of unfinished changes failed');
    }
  });
  return {
    async stop() {
      await Promise.all([full.stop(), marks.stop()]);
    },
  };
}
