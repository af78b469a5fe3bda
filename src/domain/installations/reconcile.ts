import { randomUUID } from 'node:crypto';
import { em as newEntityManager } from '../../db/orm.js';
import { InstallationEntity } from '../../db/entities/installation.js';
import { logger } from '../../logger.js';
import {
  WorkflowNotRunningError,
  describeInstallation,
  workflowRunState,
  installationConfigIdFromMemo,
  runningInstallationWorkflows,
  terminateInstallationWorkflow,
} from '../../temporal/gateway.js';
import { installationWorkflowId } from '../../temporal/contracts/workflow-ids.js';
import { currentConfigMessage, ensureInstallationWorkflow, sendInstallationConfig } from './workflow.js';

export interface ReconcileOptions {
  /** Only this project's installations (tests; operators narrowing a repair). */
  projectId?: string;
  concurrency?: number;
  /**
   * Workflows younger than this are never ended as orphans (default 30 s: creates commit in
   * milliseconds), and installations created or changed more recently are left to the request doing
   * it (and its repair mark): the visibility listing lags a start or a config change by seconds.
   */
  graceMs?: number;
}

export interface ReconcileResult {
  installations: number;
  /** Workflows started because none was running (e.g. the Temporal server lost its data). */
  started: number;
  /** Running workflows whose config was behind PostgreSQL's and was sent again. */
  configResent: number;
  /** Running workflows of installations that no longer exist, terminated. */
  orphansEnded: number;
  failed: number;
}

const PAGE_SIZE = 500;

/** Runs `work` over `items` with at most `concurrency` at a time. */
async function eachLimited<T>(
  items: T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

/**
 * A running workflow whose config id differs from the database's missed an update: send it again.
 * Both sides are read afresh (the listing that raised the doubt may lag), the workflow's from its
 * memo, which the server answers without a worker, or from its query when the memo does not say.
 */
async function resendConfigIfBehind(installationId: string): Promise<boolean> {
  const em = await newEntityManager();
  const installation = await em.findOne(InstallationEntity, { id: installationId });
  if (!installation) return false;
  const runningConfigId =
    (await installationConfigIdFromMemo(installationId)) ??
    (await describeInstallation(installationId)).configId;
  if (runningConfigId === installation.configId) return false;
  // An id of its own: the database's config may be one the workflow applied before (a PATCH whose
  // process died after telling the workflow but before committing), and Temporal answers a reused
  // update id from its first result without applying it again.
  await sendInstallationConfig(
    installationId,
    await currentConfigMessage(em, installation),
    `reconcile/${installation.configId}/${randomUUID()}`,
  );
  return true;
}

interface RunningInstallation {
  startTime: Date;
  configId?: string;
}

async function runningInstallations(
  projectId: string | undefined,
): Promise<Map<string, RunningInstallation>> {
  const running = new Map<string, RunningInstallation>();
  for await (const { installationId, ...run } of runningInstallationWorkflows(projectId)) {
    running.set(installationId, run);
  }
  return running;
}

/** Terminates running workflows, started before `settled`, of installations gone from PostgreSQL (checked one by one before). */
async function endOrphans(candidates: [string, RunningInstallation][], settled: number): Promise<number> {
  let ended = 0;
  const em = await newEntityManager();
  // An installation still being created (its workflow starts before its row commits) is not an orphan.
  for (const [installationId, run] of candidates) {
    if (run.startTime.getTime() > settled) continue;
    if (await em.count(InstallationEntity, { id: installationId })) continue;
    await terminateInstallationWorkflow(installationId, 'installation no longer exists');
    ended++;
  }
  return ended;
}

/**
 * Makes Temporal match PostgreSQL: every installation has a running workflow (missing ones start
 * with the stored config and find their backfill state in `read_watermarks`), running workflows
 * hold the current config, and workflows of deleted installations end. Temporal's side comes from
 * one visibility listing; only installations that look out of step get a call of their own, so a
 * pass over thousands of installations costs a few pages, not thousands of queries. Safe to run at
 * any time and from several processes at once: a start fails harmlessly when a run is already open.
 */
export async function reconcileInstallations(
  reconcileOptions: ReconcileOptions = {},
): Promise<ReconcileResult> {
  const result: ReconcileResult = {
    installations: 0,
    started: 0,
    configResent: 0,
    orphansEnded: 0,
    failed: 0,
  };
  // Listed before PostgreSQL is read: an installation created in between is seen as missing and
  // its start is refused harmlessly, never taken for an orphan.
  const running = await runningInstallations(reconcileOptions.projectId);
  const settled = Date.now() - (reconcileOptions.graceMs ?? 30_000);
  const em = await newEntityManager();
  for (let lastId: string | undefined; ;) {
    const page = await em.fork().find(
      InstallationEntity,
      {
        ...(reconcileOptions.projectId && { projectId: reconcileOptions.projectId }),
        ...(lastId && { id: { $gt: lastId } }),
      },
      { orderBy: { id: 'asc' }, limit: PAGE_SIZE, fields: ['id', 'configId', 'updateTime'] },
    );
    if (!page.length) break;
    lastId = page[page.length - 1].id;
    const outOfStep = page.filter(({ id, configId, updateTime }) => {
      const run = running.get(id);
      running.delete(id);
      // Created or changed just now: a burst of creates would otherwise cost a call each.
      if (updateTime.getTime() > settled) return false;
      return !run || run.configId !== configId;
    });
    result.installations += page.length;
    await eachLimited(outOfStep, reconcileOptions.concurrency ?? 16, async ({ id }) => {
      try {
        if (await ensureInstallationWorkflow(em, id)) result.started++;
        else if (await resendConfigIfBehind(id)) result.configResent++;
      } catch (error) {
        if (error instanceof WorkflowNotRunningError) return;
        result.failed++;
        logger.warn({ err: error, installationId: id }, 'reconcile could not repair an installation');
      }
    });
  }
  // What is left running matched no installation row.
  result.orphansEnded = await endOrphans([...running], settled);
  return result;
}

/**
 * Makes Temporal match PostgreSQL for one installation, as a pass does for all of them: its
 * workflow runs (started from the stored config when missing) with the current config, or, when the
 * installation was never committed or is gone, no workflow runs for it. Says what it repaired.
 */
export async function reconcileInstallation(
  installationId: string,
): Promise<'started' | 'configResent' | 'orphanEnded' | undefined> {
  const em = await newEntityManager();
  if (!(await em.count(InstallationEntity, { id: installationId }))) {
    const run = await workflowRunState(installationWorkflowId(installationId));
    if (run.state !== 'running') return undefined;
    await terminateInstallationWorkflow(installationId, 'installation no longer exists');
    return 'orphanEnded';
  }
  if (await ensureInstallationWorkflow(em, installationId)) return 'started';
  try {
    return (await resendConfigIfBehind(installationId)) ? 'configResent' : undefined;
  } catch (error) {
    // Ended between the two calls (a delete in flight): nothing left to bring in step.
    if (error instanceof WorkflowNotRunningError) return undefined;
    throw error;
  }
}
