import { config } from '../config.js';
import { logger } from '../logger.js';
import { reconcileInstallations } from '../domain/installations/reconcile.js';
import { sweepStuckOperations } from '../domain/stuck-operations.js';

export interface RepairLoop {
  stop(): Promise<void>;
}

/**
 * Runs in every worker, from its start and then every `FERRY_REPAIR_INTERVAL_SECONDS`: makes
 * Temporal match PostgreSQL again after any crash (reconcile) and ends or resumes operations that
 * lost their run, so nothing waits for a restart. Passes never overlap; a failed pass is logged and
 * the next one tries again.
 */
export function startRepairLoop(options: { intervalMs?: number } = {}): RepairLoop {
  const intervalMs = options.intervalMs ?? config().repair.intervalMs;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> = Promise.resolve();

  let first = true;
  const runPass = async () => {
    try {
      const reconciled = await reconcileInstallations();
      const swept = await sweepStuckOperations({ staleAfterMs: config().repair.stuckAfterMs });
      const repaired =
        reconciled.started + reconciled.configResent + reconciled.orphansEnded + swept.resumed + swept.ended;
      // The first pass (the one a restart triggers) and any that changed something are worth a line.
      const level = first || repaired || reconciled.failed ? 'info' : 'debug';
      first = false;
      logger[level]({ reconciled, swept }, 'repair pass');
    } catch (error) {
      logger.error({ err: error }, 'repair pass failed');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      pass = runPass().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  pass = runPass().finally(schedule);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}
