import { options } from './options.js';
import { onShutdown } from './production.js';
import { MAX_COMMIT_LAG_MS, startSandbox, type StampRealism } from '../sandbox/index.js';

/** The `--precision` and `--commit-lag-ms` options as `startSandbox`'s realism, or a message naming the mistake. */
export function sandboxRealism(values: {
  precision?: string;
  'commit-lag-ms'?: string;
}): Partial<StampRealism> {
  const precision = values.precision as StampRealism['precision'] | undefined;
  if (precision !== undefined && precision !== 'second' && precision !== 'millisecond') {
    throw new Error('--precision is second or millisecond');
  }
  const lag = values['commit-lag-ms'];
  const commitLagMs = lag === undefined ? undefined : Number(lag);
  if (commitLagMs !== undefined && (!/^\d+$/.test(lag!) || commitLagMs > MAX_COMMIT_LAG_MS)) {
    throw new Error(`--commit-lag-ms is a whole number of milliseconds from 0 to ${MAX_COMMIT_LAG_MS}`);
  }
  return {
    ...(precision !== undefined && { precision }),
    ...(commitLagMs !== undefined && { commitLagMs }),
  };
}

/**
 * `ferry sandbox [--port 8090] [--contacts N] [--precision second] [--commit-lag-ms 1500]`: the
 * bundled fake CRM on its own; the last two stamp writes in whole seconds and list each up to that
 * long after its stamp, as real providers do.
 */
export async function sandboxCommand(args: string[]): Promise<void> {
  const values = options(args, {
    port: { type: 'string' },
    contacts: { type: 'string' },
    'auto-approve': { type: 'boolean' },
    precision: { type: 'string' },
    'commit-lag-ms': { type: 'string' },
  });
  const realism = sandboxRealism(values);
  const sandbox = await startSandbox({
    port: values.port ? Number(values.port) : 8090,
    contacts: values.contacts ? Number(values.contacts) : undefined,
    autoApprove: Boolean(values['auto-approve']),
    realism,
  });
  const stamps = `${realism.precision ?? 'millisecond'} stamps, commit lag up to ${realism.commitLagMs ?? 0} ms`;
  process.stdout.write(
    `sandbox provider at ${sandbox.url} (API key: sandbox-demo-key, OAuth client sandbox-client / sandbox-secret; ${stamps})\n`,
  );
  onShutdown(() => sandbox.close());
}
