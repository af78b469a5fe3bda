import { Pointer } from 'rfc6902/pointer.js';

/** Pointers are parsed once: a read looks up the same few pointers in every record. */
const parsed = new Map<string, readonly string[]>();

function tokensOf(pointer: string): readonly string[] {
  let tokens = parsed.get(pointer);
  if (!tokens) {
    tokens = Pointer.fromJSON(pointer).tokens.slice(1);
    parsed.set(pointer, tokens);
  }
  return tokens;
}

/** The value a JSON Pointer (RFC 6901) names in `document`; undefined when any step is missing. */
export function valueAt(document: unknown, pointer: string): unknown {
  let value: unknown = document;
  for (const token of tokensOf(pointer)) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, token)) return undefined;
    value = (value as Record<string, unknown>)[token];
  }
  return value;
}

/** The value at the first of `pointers` that holds one (not undefined or null), or undefined. */
export function firstValueAt(document: unknown, pointers: string | readonly string[]): unknown {
  for (const pointer of typeof pointers === 'string' ? [pointers] : pointers) {
    const value = valueAt(document, pointer);
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}
