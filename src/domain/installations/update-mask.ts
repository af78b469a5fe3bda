import { isPrototypeKey } from '../../core/input-limits.js';
import { ProblemError, type ProblemIssue } from '../../core/problem.js';
import { readOnlyPaths } from '../../core/schema-paths.js';
import {
  InstallationSchema,
  ReadConfigSchema,
  SubscribeConfigSchema,
  WriteConfigSchema,
  type InstallationConfigContent,
} from '../../schemas/installations.js';

/** Installation fields the server owns (`readOnly` in the schema); a mask naming them is refused rather than ignored. */
const readOnlyInstallationPaths = readOnlyPaths(InstallationSchema);

const objectProperties = {
  read: Object.keys(ReadConfigSchema.properties),
  write: Object.keys(WriteConfigSchema.properties),
  subscribe: Object.keys(SubscribeConfigSchema.properties),
} as const;

/**
 * Mask paths the caller applies beside the config, by the `ConfigChange` field each fills:
 * `connectionId` (checked to be the connection in use) and `config.createdBy` (who made the new
 * config version). Neither is part of the content.
 */
const pathsBesideConfig = new Map<string, 'connectionId' | 'createdBy'>([
  ['connectionId', 'connectionId'],
  ['config.createdBy', 'createdBy'],
]);

const isBesideConfig = (path: string) => pathsBesideConfig.has(path);

function isReadOnlyPath(path: string): boolean {
  if (isBesideConfig(path)) return false;
  return readOnlyInstallationPaths.some((readOnly) => path === readOnly || path.startsWith(`${readOnly}.`));
}

/** Returns why `path` (split on dots) cannot be updated, or undefined when it can. */
function pathProblem(path: string): string | undefined {
  if (isBesideConfig(path)) return undefined;
  if (isReadOnlyPath(path)) return 'is read-only';
  const segments = path.split('.');
  // Names an object's own prototype machinery, never a config field (setAt would walk into it).
  if (segments.some(isPrototypeKey)) return 'names no config field';
  if (path === 'config.revisionId' || path === 'config.content') return undefined;
  if (segments[0] !== 'config' || segments[1] !== 'content' || segments.some((segment) => !segment)) {
    return 'is not an updatable path; use connectionId, config.revisionId, config.createdBy or paths under config.content';
  }
  const [action, objects, objectName, property] = segments.slice(2);
  if (action === 'proxy') {
    return objects === undefined || (objects === 'enabled' && segments.length === 4)
      ? undefined
      : 'is not a field of config.content.proxy (only enabled)';
  }
  if (action !== 'read' && action !== 'write' && action !== 'subscribe') {
    return 'is not a field of config.content (read, write, subscribe, proxy)';
  }
  if (objects === undefined) return undefined;
  if (objects !== 'objects') return `is not a field of config.content.${action} (only objects)`;
  if (objectName === undefined || property === undefined) return undefined;
  const known = objectProperties[action] as readonly string[];
  return known.includes(property)
    ? undefined
    : `is not a field of a ${action} object config (fields: ${known.join(', ')})`;
}

function valueAt(root: unknown, segments: string[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** Sets (or, for `undefined`, removes) the value at `segments`, creating parents as needed. */
function setAt(root: Record<string, unknown>, segments: string[], value: unknown): void {
  let current = root;
  for (const segment of segments.slice(0, -1)) {
    const next = current[segment];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) current[segment] = {};
    current = current[segment] as Record<string, unknown>;
  }
  const last = segments[segments.length - 1];
  if (value === undefined) delete current[last];
  else current[last] = structuredClone(value);
}

/** The most paths a mask may stand for once its `*` segments are expanded. */
const MAX_EXPANDED_PATHS = 1_000;

/**
 * A mask path with `*` segments as the paths it stands for (AIP-161): a `*` names every key at its
 * level in the current installation or the request, so `config.content.read.objects.*.schedule` is
 * each object's schedule, and `config.content.read.objects.*` each object (the map replaced whole,
 * since a key the request lacks is removed). `budget` counts the paths left to give: a request with
 * a huge map cannot make the mask stand for millions of paths.
 */
function expandWildcards(
  segments: string[],
  current: unknown,
  requested: unknown,
  budget: { left: number },
): string[] {
  const at = segments.indexOf('*');
  if (at < 0) {
    if (--budget.left < 0) throw tooManyPaths();
    return [segments.join('.')];
  }
  const prefix = segments.slice(0, at);
  const keys = new Set<string>();
  for (const value of [valueAt(current, prefix), valueAt(requested, prefix)]) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      keys.add(key);
      if (keys.size > budget.left) throw tooManyPaths();
    }
  }
  return [...keys].flatMap((key) =>
    expandWildcards([...prefix, key, ...segments.slice(at + 1)], current, requested, budget),
  );
}

function tooManyPaths(): ProblemError {
  return ProblemError.invalid([
    {
      in: 'body',
      name: 'updateMask',
      detail: `the mask stands for more than ${MAX_EXPANDED_PATHS} paths once its * segments are expanded`,
    },
  ]);
}

export interface MaskedConfig {
  revisionId: string;
  content: InstallationConfigContent;
}

/**
 * Applies `updateMask` (dotted paths into the installation, e.g.
 * `config.content.read.objects.contacts.schedule`) to the current config: each named path takes the
 * value at the same path of `installation`, and a path absent there is removed, as field masks mean.
 * Unknown and read-only paths are refused together, naming each, before anything changes. The result
 * is not validated here; the caller validates the whole config.
 */
export function applyInstallationMask(
  current: MaskedConfig,
  installation: Record<string, unknown>,
  mask: readonly string[],
): MaskedConfig {
  const currentRoot = { config: current };
  const budget = { left: MAX_EXPANDED_PATHS };
  const paths = [...new Set(mask)].flatMap((path) => {
    const expanded = expandWildcards(path.split('.'), currentRoot, installation, budget);
    // As AIP-161 has it, a wildcard passes over fields the server owns rather than naming them.
    return path.includes('*') ? expanded.filter((each) => !isReadOnlyPath(each)) : expanded;
  });
  const issues: ProblemIssue[] = paths.flatMap((path) => {
    const problem = pathProblem(path);
    return problem
      ? [{ in: 'body' as const, name: 'updateMask', value: path, detail: `"${path}" ${problem}` }]
      : [];
  });
  if (issues.length)
    throw ProblemError.invalid(issues, 'The update mask names paths that cannot be updated.');

  const next = { revisionId: current.revisionId, content: structuredClone(current.content) } as {
    revisionId: string;
    content: Record<string, unknown>;
  };
  // A path named twice is applied once: each application copies what it sets.
  for (const path of new Set(paths)) {
    if (isBesideConfig(path)) continue;
    const segments = path.split('.');
    const value = valueAt(installation, segments);
    if (path === 'config.revisionId') {
      if (typeof value !== 'string') {
        throw ProblemError.invalid([
          {
            in: 'body',
            name: 'installation.config.revisionId',
            value,
            detail:
              '"config.revisionId" is in updateMask, so installation.config.revisionId must be a revision id',
          },
        ]);
      }
      next.revisionId = value;
    } else if (path === 'config.content') {
      if (value === null || typeof value !== 'object') {
        throw ProblemError.invalid([
          {
            in: 'body',
            name: 'installation.config.content',
            value,
            detail: '"config.content" is in updateMask, so installation.config.content must be an object',
          },
        ]);
      }
      next.content = {
        ...structuredClone(value as Record<string, unknown>),
        provider: current.content.provider,
      };
    } else {
      setAt(next.content, segments.slice(2), value);
    }
  }
  return next as MaskedConfig;
}

/**
 * The values of the mask's paths beside the config (`pathsBesideConfig`), each required as a string
 * when the mask names it.
 */
export function maskedInstallationFields(
  installation: Record<string, unknown>,
  mask: readonly string[],
): { connectionId?: string; createdBy?: string } {
  const fields: { connectionId?: string; createdBy?: string } = {};
  for (const [path, field] of pathsBesideConfig) {
    if (!mask.includes(path)) continue;
    const value = valueAt(installation, path.split('.'));
    if (typeof value !== 'string') {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: `installation.${path}`,
          value,
          detail: `"${path}" is in updateMask, so installation.${path} must be given`,
        },
      ]);
    }
    fields[field] = value;
  }
  return fields;
}
