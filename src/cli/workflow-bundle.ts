import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { options } from './options.js';

/**
 * The workflow code a worker runs: `workflows/` bundled by the SDK's webpack. Bundling in the
 * worker's own process left webpack's memory behind in it (about 155 of the 524 MB a worker held at
 * ready, bench/worker-memory.ts), so a worker loads a bundle built elsewhere: one the image built
 * ahead (`ferry bundle-workflows --out <file>`, named by FERRY_WORKFLOW_BUNDLE), or one built in a
 * child process as it starts.
 */

export const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
const ferryBin = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));

/**
 * Pure modules evaluated once per worker thread rather than once per workflow. Every other module of
 * the bundle is evaluated anew for each workflow the worker holds (the SDK keeps a module cache per
 * workflow); `croner` allocates 80 KB per compiled expression (a 10,000-year table), which made up a
 * third of a cached installation workflow's 250 KB. Only stateless code belongs here: what these
 * modules keep (compiled expressions) is shared by every workflow and must not change an answer.
 */
export const sharedWorkflowModules = [fileURLToPath(new URL('../core/cron.ts', import.meta.url))];

const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };

/** Temporal's OpenTelemetry workflow interceptors, bundled into the workflow code when tracing is on. */
function tracingWorkflowModules(): string[] {
  const require = createRequire(import.meta.url);
  return [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];
}

/** Bundles the workflows here, in this process, into `out`. */
export async function writeWorkflowBundle(out: string, { tracing = false } = {}): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    logger: quiet,
    preloadModules: sharedWorkflowModules,
    ...(tracing && { workflowInterceptorModules: tracingWorkflowModules() }),
  });
  writeFileSync(out, code);
}

/** Bundles the workflows in a child process and answers the bundle's path; the child's memory goes with it. */
export async function bundleInChildProcess({ tracing = false } = {}): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'ferry-workflows-')), 'workflow-bundle.js');
  const child = spawn(
    process.execPath,
    [ferryBin, 'bundle-workflows', '--out', out, ...(tracing ? ['--tracing'] : [])],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`bundling the workflows failed (exit ${code}): ${stderr.trim()}`);
  return out;
}

/** `ferry bundle-workflows --out <file> [--tracing]`: what an image build runs once, and a worker's child at start. */
export async function bundleWorkflowsCommand(args: string[]): Promise<void> {
  const values = options(args, { out: { type: 'string' }, tracing: { type: 'boolean' } });
  if (!values.out) throw new Error('--out is required');
  await writeWorkflowBundle(values.out, { tracing: values.tracing ?? false });
}
