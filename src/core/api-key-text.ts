/** Keys are recognisable at a glance (and by secret scanners) from their prefix. */
export const API_KEY_PREFIX = 'ferry_sk_';
/** Frontend-only keys are meant to be seen in browser code, so scanners need not flag them as secrets. */
export const FRONTEND_KEY_PREFIX = 'ferry_pk_';

/** How a stored key is shown after its creation: its prefix and this many characters, then `...`. */
const SHOWN_KEY_CHARACTERS = 6;
export const MASKED_KEY_SUFFIX = '...';

const kinds = `${API_KEY_PREFIX}|${FRONTEND_KEY_PREFIX}`;
// `...` as the API shows a key, `…` as logs cut one.
const cut = '(?:\\.\\.\\.|…)';
const shownKeyPattern = new RegExp(`^((?:${kinds})[A-Za-z0-9_-]{${SHOWN_KEY_CHARACTERS}})${cut}$`);

/** The part of a new key kept to recognise it (`ferry_sk_AbCdEf`). */
export function shownKeyPrefix(key: string): string {
  const kind = key.startsWith(FRONTEND_KEY_PREFIX) ? FRONTEND_KEY_PREFIX : API_KEY_PREFIX;
  return key.slice(0, kind.length + SHOWN_KEY_CHARACTERS);
}

/** The prefix a shown key (`ferry_sk_AbCdEf...`, or with `…` as logs cut it) names, if `text` is one. */
export function maskedKeyPrefix(text: string): string | undefined {
  return shownKeyPattern.exec(text)?.[1];
}

/** Whether `text` looks like a key of either kind. */
export function hasApiKeyPrefix(text: string): boolean {
  return text.startsWith(API_KEY_PREFIX) || text.startsWith(FRONTEND_KEY_PREFIX);
}

// A key's characters, percent-encoded ones too: a path may spell a key `ferry_sk_ab%43d…`.
const apiKeyPattern = new RegExp(
  `(${kinds})([A-Za-z0-9_-]{0,${SHOWN_KEY_CHARACTERS}})[A-Za-z0-9_%-]*${cut}?`,
  'g',
);

/** Text with every API key in it cut to its prefix: a path that names a key, before it is logged or echoed. */
export function maskApiKeys(text: string): string {
  return text.replace(apiKeyPattern, '$1$2…');
}
