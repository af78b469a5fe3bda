import { nextFireTime } from '../src/core/cron.js';
import type { InstallationConfigMessage } from '../src/temporal/contracts/installation.js';

/**
 * Returns why a config message cannot be applied, or undefined. The Update's validator runs this, so
 * malformed input is refused before it enters history; the API has already checked everything else.
 */
export function configMessageProblem(config: InstallationConfigMessage): string | undefined {
  if (!config || typeof config !== 'object') return 'the config must be an object';
  if (typeof config.configId !== 'string' || !config.configId) return 'configId is required';
  if (typeof config.revisionId !== 'string' || !config.revisionId) return 'revisionId is required';
  if (!config.content || typeof config.content !== 'object') return 'content is required';
  if (!Array.isArray(config.reads)) return 'reads must be an array';
  const names = new Set<string>();
  for (const read of config.reads) {
    if (!read || typeof read.objectName !== 'string' || !read.objectName)
      return 'every read needs an objectName';
    if (names.has(read.objectName)) return `read "${read.objectName}" appears twice`;
    names.add(read.objectName);
    if (typeof read.schedule !== 'string') return `read "${read.objectName}" needs a schedule`;
    try {
      nextFireTime(read.schedule, new Date(0));
    } catch (error) {
      return `read "${read.objectName}": ${(error as Error).message}`;
    }
  }
  return undefined;
}
