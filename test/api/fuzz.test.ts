import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  fuzzFailures,
  fuzzOptions,
  requireSchemathesis,
  runSchemathesis,
  schemathesisDir,
  schemathesisInstalled,
} from '../support/schemathesis.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Schemathesis, driven by Ferry's own OpenAPI documents, against the real stack: every operation of
 * every host, with the project's key and without, must answer no 5xx, with the content type and
 * the schema it documents. Bounded (examples per operation) to stay a few minutes of CI. The proxy
 * listener has its own run in test/proxy/fuzz.test.ts.
 */

let stack: TestStack;

beforeAll(async () => {
  if (schemathesisInstalled) stack = await startTestStack();
});
afterAll(() => stack?.close());

describe('fuzzing every host from its OpenAPI document', () => {
  if (!schemathesisInstalled) {
    it('needs schemathesis', requireSchemathesis);
    return;
  }

  for (const host of ['api', 'read', 'write', 'search'] as const) {
    for (const auth of ['with the project key', 'without credentials'] as const) {
      it(`${host} host, ${auth}: no server errors, documented types and shapes`, async () => {
        // Path ids of the test's own project, so requests reach the handlers and not only 404s.
        const dir = schemathesisDir(`[parameters]\n"path.projectIdOrName" = "${stack.project.name}"\n`);
        const { code, output } = await runSchemathesis(
          [
            'run',
            `${stack.urls[host]}/openapi.json`,
            ...(auth === 'with the project key' ? ['-H', `X-Api-Key: ${stack.project.apiKey}`] : []),
            // The hosted service's operations answer only 501, which not_a_server_error counts as a failure.
            ...(host === 'api' ? ['--exclude-tag', 'Hosted service only'] : []),
            ...fuzzOptions('coverage,fuzzing,stateful'),
          ],
          dir,
        );
        // The report names each failing operation with a curl line to reproduce it.
        if (code !== 0) throw new Error(`schemathesis exited ${code}:\n${fuzzFailures(output)}`);
        expect(output).toMatch(/passed/);
        // On the api host, creates chain into reads, updates and deletes of what they made (OpenAPI links).
        if (host === 'api') expect(output).toContain('✅ Stateful');
      }, 600_000);
    }
  }
});
