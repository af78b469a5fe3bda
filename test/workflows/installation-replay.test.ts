import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { temporal } from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { sharedWorkflowModules, workflowsPath } from '../../src/cli/workflow-bundle.js';

/**
 * Replays a committed history of the installation workflow (reads, triggers, pause/resume, a
 * backfill request, a config update with a subscription) against the current code: a change that
 * would make running installations non-deterministic fails here, before it reaches a worker.
 * Regenerate the fixture only for an intended, versioned change: test/fixtures/generate-installation-history.ts.
 */
describe('the installation workflow history', () => {
  it('replays deterministically against the current workflow code', async () => {
    const json: unknown = JSON.parse(
      readFileSync(new URL('../fixtures/installation-history.json', import.meta.url), 'utf8'),
    );
    const history = temporal.api.history.v1.History.fromObject(json as Record<string, unknown>);
    expect(history.events.length).toBeGreaterThan(100);
    const bundle = process.env.FERRY_TEST_WORKFLOW_BUNDLE;
    const options: ReplayWorkerOptions = bundle
      ? { workflowBundle: { codePath: bundle } }
      : { workflowsPath, bundlerOptions: { ignoreModules: [], preloadModules: sharedWorkflowModules } };
    await expect(Worker.runReplayHistory(options, history, 'installation/replayed')).resolves.toBeUndefined();
  }, 120_000);
});
