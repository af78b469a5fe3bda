import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from '@jest/globals';
import { sandboxRealism } from '../../src/cli/sandbox.js';

/** `ferry sandbox` with realism on: whole-second stamps, writes listed up to the commit lag late. */

let child: ChildProcess | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  child = undefined;
});

/** Starts `ferry sandbox` on a free port with `args`; resolves with its URL from the banner. */
function startSandbox(args: string[]): Promise<{ url: string; banner: string }> {
  child = spawn(process.execPath, ['bin/ferry.js', 'sandbox', '--port', '0', '--contacts', '10', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /sandbox provider at (http:\/\/\S+)/.exec(output)?.[1];
      if (url) resolve({ url, banner: output });
    };
    child!.stdout!.on('data', collect);
    child!.stderr!.on('data', collect);
    child!.once('exit', (code) => reject(new Error(`ferry sandbox exited (${code}): ${output}`)));
  });
}

const headers = { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' };

describe('ferry sandbox --precision --commit-lag-ms', () => {
  it('stamps writes in whole seconds and lists them within the commit lag', async () => {
    const { url, banner } = await startSandbox(['--precision', 'second', '--commit-lag-ms', '1500']);
    expect(banner).toContain('second stamps, commit lag up to 1500 ms');
    const since = new Date(Date.now() - 60_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await fetch(`${url}/api/v1/contacts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ email: `cli${i}@example.com` }),
      });
      const record = (await created.json()) as { id: string; updatedAt: string };
      expect(record.updatedAt).toMatch(/:\d{2}\.000Z$/);
      ids.push(record.id);
    }
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const listed = (await (
      await fetch(`${url}/api/v1/contacts?updatedSince=${encodeURIComponent(since)}`, { headers })
    ).json()) as { results: { id: string }[] };
    expect(listed.results.map((record) => record.id).sort()).toEqual([...ids].sort());
  });

  it('keeps milliseconds and lists at once without the options', async () => {
    const { banner } = await startSandbox([]);
    expect(banner).toContain('millisecond stamps, commit lag up to 0 ms');
  });

  it('refuses a precision or a lag it cannot honour', () => {
    expect(() => sandboxRealism({ precision: 'minute' })).toThrow('--precision is second or millisecond');
    expect(() => sandboxRealism({ 'commit-lag-ms': '5000' })).toThrow('from 0 to 2000');
    expect(() => sandboxRealism({ 'commit-lag-ms': '-1' })).toThrow('--commit-lag-ms');
    expect(sandboxRealism({ precision: 'second', 'commit-lag-ms': '0' })).toEqual({
      precision: 'second',
      commitLagMs: 0,
    });
    const run = spawnSync(process.execPath, ['bin/ferry.js', 'sandbox', '--precision', 'hour'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('--precision is second or millisecond');
  });
});
