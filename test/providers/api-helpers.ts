import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/** The api stack with a sandbox CRM it reaches through `{{.sandboxURL}}`. */
export async function startStackWithSandbox(
  options: { worker?: boolean } = {},
): Promise<{ stack: TestStack; sandbox: Sandbox }> {
  const sandbox = await startSandbox({ port: 0, contacts: 120, companies: 10, deals: 10 });
  process.env.FERRY_SANDBOX_URL = sandbox.url; // read when the stack resets the configuration
  const stack = await startTestStack(options);
  return { stack, sandbox };
}

/** A connection of the group to a provider, made with credentials the caller already has. */
export async function generateConnection(
  stack: TestStack,
  body: Record<string, unknown>,
  apiKey = stack.project.apiKey,
  project = stack.project.name,
): Promise<{ id: string; provider: string }> {
  const response = await stack.api('POST', `/projects/${project}/connections:generate`, {
    body: { consumerRef: 'user-1', ...body },
    apiKey,
  });
  if (response.status !== 201) {
    throw new Error(`connection not generated: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/** An integration of `provider` with the given read and write objects. */
export async function createIntegration(
  stack: TestStack,
  name: string,
  provider: string,
  content: { read?: Record<string, unknown>[]; write?: Record<string, unknown>[] },
): Promise<{ id: string; latestRevision: { id: string } }> {
  const read = content.read?.map((object) => ({ destination: 'hook', schedule: '*/30 * * * *', ...object }));
  if (read) {
    // A manifest may only name existing destinations; a second integration finds it made (409).
    const hook = await stack.api('POST', `/projects/${stack.project.name}/destinations`, {
      body: { name: 'hook', type: 'webhook', metadata: { url: 'http://127.0.0.1:9/hook' } },
    });
    if (hook.status !== 201 && hook.status !== 409)
      throw new Error(`destination: ${JSON.stringify(hook.body)}`);
  }
  const response = await stack.api('POST', `/projects/${stack.project.name}/integrations`, {
    body: {
      name,
      provider,
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider,
          ...(read && { read: { objects: read } }),
          ...(content.write && { write: { objects: content.write } }),
        },
      },
    },
  });
  if (response.status !== 201) {
    throw new Error(`integration not created: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response.body;
}
