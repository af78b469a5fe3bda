import { options } from './options.js';
import { onShutdown } from './production.js';
import { startSandbox } from '../sandbox/index.js';

/** `ferry sandbox [--port 8090] [--contacts N]`: the bundled fake CRM on its own. */
export async function sandboxCommand(args: string[]): Promise<void> {
  const values = options(args, {
    port: { type: 'string' },
    contacts: { type: 'string' },
    'auto-approve': { type: 'boolean' },
  });
  const sandbox = await startSandbox({
    port: values.port ? Number(values.port) : 8090,
    contacts: values.contacts ? Number(values.contacts) : undefined,
    autoApprove: Boolean(values['auto-approve']),
  });
  process.stdout.write(
    `sandbox provider at ${sandbox.url} (API key: sandbox-demo-key, OAuth client sandbox-client / sandbox-secret)\n`,
  );
  onShutdown(() => sandbox.close());
}
