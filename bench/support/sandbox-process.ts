import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/config.js';

const ferryBin = join(projectRoot, 'bin', 'ferry.js');

/**
 * `ferry sandbox` in a process of its own, as a real provider would be, once it says it listens.
 * `args` are the command's flags after `sandbox` (`--port`, `--contacts`, realism). The child's
 * output is drained from then on; a bench that wants it listens again.
 */
export async function startSandboxProcess(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [ferryBin, 'sandbox', ...args], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exited: ((code: number | null) => void) | undefined;
  await new Promise<void>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('sandbox provider at')) resolve();
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    exited = (code) => reject(new Error(`the sandbox exited (${code}):\n${output}`));
    child.once('exit', exited);
  });
  child.off('exit', exited!);
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  return child;
}
