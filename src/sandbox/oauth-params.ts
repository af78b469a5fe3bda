/** Parameter rules shared by the OAuth endpoints. */
import { allScopes } from './tokens.js';

/** RFC 7636: verifiers and challenges are 43-128 unreserved characters. */
export const pkceValue = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Reads one string parameter; repeated parameters are refused (RFC 6749 3.1). */
export function single(
  source: Record<string, unknown>,
  name: string,
  fail: (message: string) => Error,
): string | undefined {
  const value = source[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw fail(`The ${name} parameter must appear once.`);
  return value;
}

export function parseScope(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return [...allScopes]; // no scope asked: everything, like many real providers
  const scopes = [...new Set(raw.split(' ').filter(Boolean))];
  return scopes.length && scopes.every((s) => (allScopes as readonly string[]).includes(s))
    ? scopes
    : undefined;
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.hash;
  } catch {
    return false;
  }
}
