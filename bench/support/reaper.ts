import { spawn } from 'node:child_process';

/**
 * A watchdog process of its own (detached: it outlives this one) that holds a pipe from this
 * process and is told every child's pid. When the pipe closes (this process ended, however: done,
 * crashed, killed with SIGKILL), it stops every child it was told of: SIGTERM, then SIGKILL.
 */
const REAPER_SOURCE = `
const pids = new Set();
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk.toString();
  const lines = buffered.split('\\n');
  buffered = lines.pop();
  for (const line of lines) if (/^\\d+$/.test(line)) pids.add(Number(line));
});
process.stdin.on('end', () => {
  const alive = () => [...pids].filter((pid) => { try { process.kill(pid, 0); return true; } catch { return false; } });
  for (const pid of alive()) try { process.kill(pid, 'SIGTERM'); } catch {}
  const started = Date.now();
  const timer = setInterval(() => {
    const left = alive();
    if (!left.length || Date.now() - started > 10000) {
      for (const pid of left) try { process.kill(pid, 'SIGKILL'); } catch {}
      process.exit(0);
    }
  }, 200);
});
`;

export interface Reaper {
  watch(pid: number | undefined): void;
  /** Ends the watch: whatever is still running is stopped. */
  close(): void;
}

export function startReaper(): Reaper {
  const child = spawn(process.execPath, ['-e', REAPER_SOURCE], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.unref();
  // The pipe must not keep this process alive either.
  (child.stdin as unknown as { unref(): void }).unref();
  return {
    watch(pid) {
      if (pid) child.stdin!.write(`${pid}\n`);
    },
    close() {
      child.stdin!.end();
    },
  };
}
