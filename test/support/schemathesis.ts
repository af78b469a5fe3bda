import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Schemathesis (PyPI), as the fuzz tests run it. `.ci/run` installs the pinned version into
 * `.tools/venv`; elsewhere the tests say how.
 */
export const SCHEMATHESIS_VERSION = '4.32.5';
export const schemathesisPath = join(process.cwd(), '.tools', 'venv', 'bin', 'schemathesis');
export const schemathesisInstalled = existsSync(schemathesisPath);
export const maxExamples = process.env.FERRY_FUZZ_EXAMPLES ?? '8';

/** Fails (in CI) or warns (elsewhere) when schemathesis is missing, rather than passing silently. */
export function requireSchemathesis(): void {
  if (process.env.CI) throw new Error(`schemathesis is missing at ${schemathesisPath}; .ci/run installs it`);
  console.warn(`fuzz test skipped: .tools/venv/bin/pip install schemathesis==${SCHEMATHESIS_VERSION}`);
}

/** A working directory holding a `schemathesis.toml` with the given contents. */
export function schemathesisDir(toml: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-fuzz-'));
  writeFileSync(join(dir, 'schemathesis.toml'), toml);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

export function runSchemathesis(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(schemathesisPath, args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The options every fuzz run shares: Ferry's checks, bounded examples, one worker, a fixed seed. */
export function fuzzOptions(phases: string): string[] {
  return [
    '--checks',
    'not_a_server_error,content_type_conformance,response_schema_conformance,status_code_conformance',
    '--max-examples',
    maxExamples,
    '--phases',
    phases,
    // One worker: hypothesis's source inspection is not thread-safe on Python 3.11.
    '--workers',
    '1',
    '--request-timeout',
    '30',
    '--seed',
    '1',
  ];
}

/** The failures section of a run, short enough to read in a test report. */
export function fuzzFailures(output: string): string {
  const start = output.indexOf('FAILURES');
  const end = output.indexOf('WARNINGS', start);
  return start < 0 ? output.slice(-3000) : output.slice(start, end < 0 ? undefined : end).slice(0, 8000);
}
