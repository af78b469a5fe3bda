import { Pointer } from 'rfc6902/pointer.js';

const compiled = new Map<string, Pointer>();

/** The value a JSON Pointer (RFC 6901) names in `document`; undefined when any step is missing. */
export function valueAt(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let parsed = compiled.get(pointer);
  if (!parsed) {
    parsed = Pointer.fromJSON(pointer);
    compiled.set(pointer, parsed);
  }
  let value: unknown = document;
  for (const token of parsed.tokens.slice(1)) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, token)) return undefined;
    value = (value as Record<string, unknown>)[token];
  }
  return value;
}
