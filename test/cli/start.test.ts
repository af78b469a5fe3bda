import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

/**
 * `ferry start` never joins a server it did not start: with Temporal's port taken it stops, naming
 * the port and the setting that moves it, instead of silently using whatever answers there.
 */
let taken: Server;
let port: number;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

describe('ferry start', () => {
  it('refuses a taken Temporal port, naming it, and exits 1', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, FERRY_TEMPORAL_PORT: String(port) };
    delete env.TEMPORAL_ADDRESS;
    const run = spawnSync(process.execPath, ['bin/ferry.js', 'start'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`port ${port} is already in use; set FERRY_TEMPORAL_PORT to another port`);
    expect(run.stderr).toContain('TEMPORAL_ADDRESS');
    expect(run.stdout).not.toContain('Ferry is running');
  });
});
