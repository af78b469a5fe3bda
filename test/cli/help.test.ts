import { spawnSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';

/** `ferry` says what it can do on stdout when asked, and names a mistake on stderr. */
const ferry = (...args: string[]) =>
  spawnSync(process.execPath, ['bin/ferry.js', ...args], { encoding: 'utf8', timeout: 30_000 });

describe('ferry help', () => {
  it('prints the commands to stdout for --help, -h, help and no command, and succeeds', () => {
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const run = ferry(...args);
      expect({ args, status: run.status, stderr: run.stderr }).toEqual({ args, status: 0, stderr: '' });
      expect(run.stdout).toContain('Usage: ferry <command> [options]');
      expect(run.stdout).toContain('start');
    }
  });

  it('prints one command’s usage for `ferry <command> --help` without running it', () => {
    const run = ferry('start', '--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: ferry start [options]');
    expect(run.stdout).toContain('Start the whole stack');
    const twoWords = ferry('projects', 'create', '-h');
    expect(twoWords.status).toBe(0);
    expect(twoWords.stdout).toContain('Usage: ferry projects create [options]');
  });

  it('names an unknown command on stderr and exits 2', () => {
    const run = ferry('frobnicate', 'now');
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('ferry: unknown command "frobnicate now"');
    expect(run.stderr).toContain('Usage: ferry <command> [options]');
  });
});
