import type { TSchema } from 'typebox';
import { ProblemError } from '../core/problem.js';
import { writableProperties } from '../core/schema-paths.js';

/**
 * Applies a flat `updateMask` (field names of `patch`) to `target`. The fields a mask may name are
 * those of the request's `patchSchema` not marked `readOnly`; unknown or read-only names are refused
 * together, naming each, before anything changes.
 */
export function applyUpdateMask<T extends object>(
  target: T,
  patch: Partial<T>,
  mask: string[],
  patchSchema: TSchema,
  bodyField: string,
): void {
  const updatable = writableProperties(patchSchema);
  const refused = mask.filter((field) => !updatable.includes(field));
  if (refused.length) {
    throw ProblemError.invalid(
      refused.map((field) => ({
        in: 'body' as const,
        name: 'updateMask',
        value: field,
        detail: `"${field}" cannot be updated; updatable fields: ${updatable.join(', ')}`,
      })),
    );
  }
  const missing = mask.filter((field) => (patch as Record<string, unknown>)[field] === undefined);
  if (missing.length) {
    throw ProblemError.invalid(
      missing.map((field) => ({
        in: 'body' as const,
        name: `${bodyField}.${field}`,
        detail: `"${field}" is in updateMask but ${bodyField}.${field} is missing`,
      })),
    );
  }
  for (const field of mask)
    (target as Record<string, unknown>)[field] = (patch as Record<string, unknown>)[field];
}
