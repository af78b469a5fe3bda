/** Keys are recognisable at a glance (and by secret scanners) from their prefix. */
export const API_KEY_PREFIX = 'ferry_sk_';
/** Frontend-only keys are meant to be seen in browser code, so scanners need not flag them as secrets. */
export const FRONTEND_KEY_PREFIX = 'ferry_pk_';

/** How a stored key is shown after its creation: its prefix, then this. */
export const MASKED_KEY_SUFFIX = '...';

const shownKeyPattern = new RegExp(
  `^((?:${API_KEY_PREFIX}|${FRONTEND_KEY_PREFIX})[A-Za-z0-9_-]{6})(?:\\.\\.\\.|…)$`,
);

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
  `(${API_KEY_PREFIX}|${FRONTEND_KEY_PREFIX})([A-Za-z0-9_-]{0,6})[A-Za-z0-9_%-]*(?:\\.\\.\\.|…)?`,
  'g',
);

/** Text with every API key in it cut to its prefix: a path that names a key, before it is logged or echoed. */
export function maskApiKeys(text: string): string {
  return text.replace(apiKeyPattern, '$1$2…');
}
