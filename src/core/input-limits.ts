import type { ProblemIssue } from './problem.js';
import { pointerToName } from './validation.js';

/**
 * The bounds every request's input is held to, checked in one place before any handler runs:
 * PostgreSQL refuses NUL characters in text, deep nesting overflows the stack of whatever walks
 * it recursively (a patch library, an error serialiser), and an error should never echo megabytes.
 */

/** JSON nesting deeper than this is refused; real configs nest about ten levels. */
export const MAX_JSON_DEPTH = 32;
/** The longest value an error echoes back; longer ones are shortened. */
export const MAX_ECHOED_CHARS = 200;

const NUL = '\u0000';
/**
 * A UTF-16 surrogate without its other half (JSON can spell one, `"\ud800"`): no Unicode character,
 * so UTF-8 cannot hold it, and PostgreSQL would keep U+FFFD instead of what the answer showed.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What keeps a string (a value or a key) out of storage: a NUL character or a lone surrogate. */
function unstorable(text: string): string | undefined {
  if (text.includes(NUL)) return 'a NUL character (U+0000), which is not allowed';
  const surrogate = LONE_SURROGATE.exec(text)?.[0];
  if (surrogate) {
    const code = surrogate.charCodeAt(0).toString(16).toUpperCase();
    return `a lone surrogate (\\u${code}), which is not a Unicode character; send the pair or the character itself`;
  }
  return undefined;
}

function pointerPart(key: string | number): string {
  return String(key).replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The first thing wrong with a parsed JSON value: nested deeper than MAX_JSON_DEPTH, or a NUL
 * character or a lone surrogate in a string or a key. Walks with its own stack, so any depth is
 * safe to inspect.
 */
export function jsonInputProblem(value: unknown, location: ProblemIssue['in']): ProblemIssue | undefined {
  const stack: { value: unknown; depth: number; pointer: string }[] = [{ value, depth: 0, pointer: '' }];
  while (stack.length) {
    const current = stack.pop()!;
    // Named as schema issues are (`metadata.headers.X-A`, `items[2]`), the whole input by its location.
    const name = pointerToName(current.pointer) || location;
    if (typeof current.value === 'string') {
      const why = unstorable(current.value);
      if (why) return { in: location, name, detail: `${name} contains ${why}` };
      continue;
    }
    if (current.value === null || typeof current.value !== 'object') continue;
    if (current.depth >= MAX_JSON_DEPTH) {
      return { in: location, name, detail: `${name} is nested deeper than ${MAX_JSON_DEPTH} levels` };
    }
    const entries = Array.isArray(current.value)
      ? current.value.map((item, index) => [index, item] as const)
      : Object.entries(current.value);
    for (const [key, item] of entries) {
      const pointer = `${current.pointer}/${pointerPart(key)}`;
      const why = typeof key === 'string' ? unstorable(key) : undefined;
      if (why) {
        const keyName = pointerToName(pointer);
        return { in: location, name: keyName, detail: `the key ${keyName} contains ${why}` };
      }
      stack.push({ value: item, depth: current.depth + 1, pointer });
    }
  }
  return undefined;
}

/** A NUL character in a path or query string, encoded or not. */
export function hasNul(text: string): boolean {
  return text.includes(NUL) || /%00/.test(text);
}

/** A value as an error may echo it: short strings as they are, long ones cut, structures summarised. */
export function echoable(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.length > MAX_ECHOED_CHARS
      ? `${value.slice(0, MAX_ECHOED_CHARS)}… (${value.length} characters)`
      : value;
  }
  if (value === null || typeof value !== 'object') return value;
  let size = 0;
  const stack: unknown[] = [value];
  // Small, shallow structures are echoed whole; anything else is named by its kind and size.
  for (let seen = 0; stack.length && seen < 50; seen++) {
    const current = stack.pop();
    if (typeof current === 'string') size += current.length;
    else if (current && typeof current === 'object') {
      const items = Object.values(current);
      size += items.length;
      stack.push(...items.slice(0, 50));
    }
    if (size > MAX_ECHOED_CHARS) break;
  }
  if (size <= MAX_ECHOED_CHARS && stack.length === 0) return value;
  return Array.isArray(value)
    ? `(an array of ${value.length} items)`
    : `(an object of ${Object.keys(value).length} members)`;
}

const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A path segment that would reach an object's prototype rather than one of its fields. */
export function isPrototypeKey(segment: string): boolean {
  return PROTOTYPE_KEYS.has(segment);
}
