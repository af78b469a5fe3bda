import { afterEach, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig, resetConfig } from '../../src/config.js';
import { createWorker } from '../../src/cli/worker.js';

/** FERRY_WORKER_CACHED_WORKFLOWS bounds a worker's memory: about 0.8 MB per cached installation workflow. */

const load = (value?: string) =>
  loadConfig({ ...process.env, FERRY_WORKER_CACHED_WORKFLOWS: value }).temporal.maxCachedWorkflows;

describe('the worker’s workflow cache', () => {
  afterEach(() => {
    delete process.env.FERRY_WORKER_CACHED_WORKFLOWS;
    resetConfig();
  });

  it('is the SDK’s default unless the variable names a size', () => {
    expect(load(undefined)).toBeUndefined();
    expect(load('')).toBeUndefined();
    expect(load('12500')).toBe(12_500);
    expect(() => load('lots')).toThrow(ConfigError);
    expect(() => load('-1')).toThrow(/FERRY_WORKER_CACHED_WORKFLOWS/);
  });

  it('is the size the worker is created with', async () => {
    process.env.FERRY_WORKER_CACHED_WORKFLOWS = '37';
    resetConfig();
    const worker = await createWorker({
      taskQueue: 'workflow-cache-test',
      workflowBundlePath: process.env.FERRY_TEST_WORKFLOW_BUNDLE,
    });
    expect(worker.of('installations')?.options.maxCachedWorkflows).toBe(37);
    // Deliveries and writes are short-lived: their cache is never larger than the installations'.
    expect(worker.of('deliveries')?.options.maxCachedWorkflows).toBe(37);
    // A worker that never ran cannot be shut down: run it, and stop at once.
    await worker.runUntil(Promise.resolve());
  }, 60_000);
});
