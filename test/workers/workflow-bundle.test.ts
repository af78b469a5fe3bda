import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { createWorker } from '../../src/cli/worker.js';
import { bundleInChildProcess } from '../../src/cli/workflow-bundle.js';

/**
 * A worker never bundles its workflow code in its own process (webpack's memory stayed behind, about
 * 155 MB of the 524 MB it held at ready): it loads a bundle built ahead (FERRY_WORKFLOW_BUNDLE, which
 * the image sets) or one a child process builds as it starts.
 */

describe('the workflow bundle', () => {
  afterEach(() => {
    delete process.env.FERRY_WORKFLOW_BUNDLE;
    resetConfig();
  });

  it('is built by a child process into a file a worker loads', async () => {
    const path = await bundleInChildProcess();
    const code = readFileSync(path, 'utf8');
    expect(code).toContain('__TEMPORAL__');
    expect(code).toContain('installationWorkflow');
    // The cron module (and croner's 80 KB per compiled expression) is evaluated once per workflow
    // thread and shared, not once per cached workflow.
    const preloaded = code.slice(
      code.indexOf('exports.preloadModules'),
      code.indexOf('exports.importWorkflows'),
    );
    expect(preloaded).toContain('"./src/core/cron.ts"');
    const worker = await createWorker({
      taskQueue: `bundle-${Date.now()}`,
      concerns: ['deliveries'],
      workflowBundlePath: path,
    });
    expect(worker.getState()).toBe('INITIALIZED');
  }, 120_000);

  it('names FERRY_WORKFLOW_BUNDLE when the file it names is missing', async () => {
    process.env.FERRY_WORKFLOW_BUNDLE = '/nonexistent/workflow-bundle.js';
    resetConfig();
    await expect(createWorker({ concerns: ['deliveries'] })).rejects.toThrow(
      /FERRY_WORKFLOW_BUNDLE: no workflow bundle at \/nonexistent\/workflow-bundle\.js/,
    );
  });

  it('`ferry bundle-workflows` needs --out', () => {
    const run = spawnSync(process.execPath, ['bin/ferry.js', 'bundle-workflows'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('--out is required');
  });
});
