import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { proxyOpenApiDocument } from '../../src/api/proxy/openapi.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  fuzzFailures,
  fuzzOptions,
  requireSchemathesis,
  runSchemathesis,
  schemathesisDir,
  schemathesisInstalled,
} from '../support/schemathesis.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { connectGroup, createDestination, createIntegration, install } from '../installations/support.js';

/**
 * Schemathesis against the proxy listener, from the proxy's own OpenAPI document: headers, paths,
 * methods and bodies, first addressed to a real installation (so requests reach the sandbox
 * provider through Ferry) and then with whatever headers the fuzzer makes up. No 5xx from Ferry,
 * and every answer Ferry makes itself is the problem details it documents.
 */

let stack: TestStack;
let sandbox: Sandbox;
let installationId: string;

beforeAll(async () => {
  if (!schemathesisInstalled) return;
  sandbox = await startSandbox({ port: 0, contacts: 20, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack();
  await createDestination(stack);
  const fixture = await createIntegration(stack);
  const { groupRef } = await connectGroup(stack);
  installationId = (await install(stack, fixture, groupRef)).id;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  delete process.env.FERRY_SANDBOX_URL;
});

describe('fuzzing the proxy listener from its OpenAPI document', () => {
  if (!schemathesisInstalled) {
    it('needs schemathesis', requireSchemathesis);
    return;
  }

  const runs = {
    // A path the sandbox serves, so bodies and queries reach its handlers through Ferry.
    'a provider path of an installation': { path: 'contacts', addressed: true },
    'any path of an installation': { addressed: true },
    'made-up headers': { addressed: false },
  } as const satisfies Record<string, { path?: string; addressed: boolean }>;

  for (const [name, run] of Object.entries(runs)) {
    it(`${name}: no server errors, documented types and shapes`, async () => {
      const parameters = [
        ...('path' in run ? [`"path.path" = "${run.path}"`] : []),
        ...(run.addressed
          ? [
              `"header.x-amp-proxy-version" = "1"`,
              `"header.x-amp-project-id" = "${stack.project.id}"`,
              `"header.x-api-key" = "${stack.project.apiKey}"`,
              `"header.x-amp-installation-id" = "${installationId}"`,
            ]
          : []),
      ];
      const toml = parameters.length ? ['[parameters]', ...parameters, ''].join('\n') : '';
      const dir = schemathesisDir(toml, {
        'proxy.json': JSON.stringify(proxyOpenApiDocument([{ url: stack.urls.proxy }])),
      });
      const { code, output } = await runSchemathesis(
        ['run', 'proxy.json', '--url', stack.urls.proxy, ...fuzzOptions('coverage,fuzzing')],
        dir,
      );
      if (code !== 0) throw new Error(`schemathesis exited ${code}:\n${fuzzFailures(output)}`);
      expect(output).toMatch(/passed/);
    }, 600_000);
  }
});
