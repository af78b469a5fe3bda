import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Schemathesis, driven by Ferry's own OpenAPI documents, against the real stack: every operation of
 * every host, with the project's key and without, must answer no 5xx, with the content type and
 * the schema it documents. Bounded (examples per operation) to stay a few minutes of CI.
 * `.ci/run` installs the pinned schemathesis into `.tools/venv`; elsewhere the test says how.
 */

export const SCHEMATHESIS_VERSION = '4.32.5';
const schemathesis = join(process.cwd(), '.tools', 'venv', 'bin', 'schemathesis');
const installed = existsSync(schemathesis);
const maxExamples = process.env.FERRY_FUZZ_EXAMPLES ?? '8';

let stack: TestStack;

beforeAll(async () => {
  if (installed) stack = await startTestStack();
});
afterAll(() => stack?.close());

function run(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(schemathesis, args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The failures section of a run, short enough to read in a test report. */
function failures(output: string): string {
  const start = output.indexOf('FAILURES');
  const end = output.indexOf('WARNINGS', start);
  return start < 0 ? output.slice(-3000) : output.slice(start, end < 0 ? undefined : end).slice(0, 8000);
}

describe('fuzzing every host from its OpenAPI document', () => {
  if (!installed) {
    it('needs schemathesis', () => {
      // CI always has it; a developer machine is told how to get it rather than passing silently.
      if (process.env.CI) throw new Error(`schemathesis is missing at ${schemathesis}; .ci/run installs it`);
      console.warn(`fuzz test skipped: .tools/venv/bin/pip install schemathesis==${SCHEMATHESIS_VERSION}`);
    });
    return;
  }

  for (const host of ['api', 'read', 'write', 'search'] as const) {
    for (const auth of ['with the project key', 'without credentials'] as const) {
      it(`${host} host, ${auth}: no server errors, documented types and shapes`, async () => {
        const dir = mkdtempSync(join(tmpdir(), 'ferry-fuzz-'));
        // Path ids of the test's own project, so requests reach the handlers and not only 404s.
        writeFileSync(
          join(dir, 'schemathesis.toml'),
          `[parameters]\n"path.projectIdOrName" = "${stack.project.name}"\n`,
        );
        const { code, output } = await run(
          [
            'run',
            `${stack.urls[host]}/openapi.json`,
            ...(auth === 'with the project key' ? ['-H', `X-Api-Key: ${stack.project.apiKey}`] : []),
            '--checks',
            'not_a_server_error,content_type_conformance,response_schema_conformance,status_code_conformance',
            '--max-examples',
            maxExamples,
            '--phases',
            'coverage,fuzzing,stateful',
            // One worker: hypothesis's source inspection is not thread-safe on Python 3.11.
            '--workers',
            '1',
            '--request-timeout',
            '30',
            '--seed',
            '1',
          ],
          dir,
        );
        // The report names each failing operation with a curl line to reproduce it.
        if (code !== 0) throw new Error(`schemathesis exited ${code}:\n${failures(output)}`);
        expect(output).toMatch(/passed/);
        // On the api host, creates chain into reads, updates and deletes of what they made (OpenAPI links).
        if (host === 'api') expect(output).toContain('✅ Stateful');
      }, 600_000);
    }
  }
});
