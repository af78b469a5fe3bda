import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * What the benchmarks measure of a process and of the machine, from Linux's /proc: CPU seconds,
 * resident memory and its peak, the machine's busy time; and percentiles of what they time.
 */

/** USER_HZ: 100 on every Linux this runs on (`getconf CLK_TCK`). */
const CLOCK_TICKS = 100;

/** The p-th percentile (nearest rank) of `values`, in any order; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** CPU seconds (user + system) a process has used so far; undefined where Linux cannot say. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** A process's resident set (`VmRSS`) or its peak since start or reset (`VmHWM`), in MB. */
export function procStatusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number | undefined {
  if (pid === undefined) return undefined;
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return undefined;
  try {
    const match = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(status, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : undefined;
  } catch {
    return undefined; // the process ended between the check and the read
  }
}

/** A process's resident set now, in MB. */
export const rssMb = (pid: number | undefined) => procStatusMb(pid, 'VmRSS');

/**
 * Forgets a process's peak resident set size (Linux: `5` into /proc/<pid>/clear_refs), so the peak
 * measured afterwards is the work's, not the process start's (bundling the workflow code).
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU seconds the whole machine has been busy (PostgreSQL and the sandbox provider included), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}
