import { applyPatch, type Operation } from 'rfc6902';
import { isPrototypeKey } from '../../core/input-limits.js';
import { ProblemError, type ProblemIssue } from '../../core/problem.js';

export type JsonPatchOperation = {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
};

function pointerProblem(pointer: string | undefined): string | undefined {
  if (pointer === undefined) return 'is required';
  if (pointer === '') return 'must point inside the object config, not at its root';
  if (!pointer.startsWith('/')) return 'must be a JSON Pointer starting with "/"';
  const segments = pointer.split('/').slice(1);
  if (segments.some((segment) => isPrototypeKey(segment.replaceAll('~1', '/').replaceAll('~0', '~')))) {
    return 'must not name __proto__, constructor or prototype';
  }
  return undefined;
}

/**
 * Applies JSON Patch operations (RFC 6902) to one object's config, all or nothing: the operations run
 * on a copy, and if any fails (a missing path for `replace` or `remove`, a failed `test`, a bad
 * pointer) nothing is returned but a 400 naming each failed operation. The result still has to pass
 * config validation.
 */
export function patchObjectConfig(
  objectConfig: Record<string, unknown>,
  changes: readonly JsonPatchOperation[],
): Record<string, unknown> {
  const issues: ProblemIssue[] = [];
  changes.forEach((change, index) => {
    const pointers: ('path' | 'from')[] =
      change.op === 'move' || change.op === 'copy' ? ['path', 'from'] : ['path'];
    for (const field of pointers) {
      const problem = pointerProblem(change[field]);
      if (problem) {
        const name = `changes[${index}].${field}`;
        issues.push({ in: 'body', name, value: change[field], detail: `${name} ${problem}` });
      }
    }
    if (['add', 'replace', 'test'].includes(change.op) && !Object.hasOwn(change, 'value')) {
      issues.push({
        in: 'body',
        name: `changes[${index}].value`,
        detail: `changes[${index}].value is required for ${change.op}`,
      });
    }
  });
  if (issues.length) throw ProblemError.invalid(issues, 'The JSON Patch is not valid.');

  const patched = structuredClone(objectConfig);
  const results = applyPatch(patched, changes as Operation[]);
  results.forEach((error, index) => {
    if (!error) return;
    const change = changes[index];
    issues.push({
      in: 'body',
      name: `changes[${index}].path`,
      value: change.path,
      detail: `changes[${index}] (${change.op} ${change.path}) failed: ${error.message}`,
    });
  });
  if (issues.length)
    throw ProblemError.invalid(issues, 'The JSON Patch could not be applied; nothing was changed.');
  return patched;
}
