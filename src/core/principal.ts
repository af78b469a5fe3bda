import { ProblemError } from './problem.js';

/** Who is calling: every authenticated request, command and job acts as one of these. */
export type Principal =
  | {
      kind: 'apiKey';
      projectId: string;
      apiKeyId: string;
      /** A key with only the `frontend` scope (`isFrontendOnly`): see `refuseFrontendKey`. */
      frontendOnly?: true;
    }
  | { kind: 'builder'; builderId: string; email: string }
  /** A token minted by the builder's backend and signed with one of the project's JWT keys. */
  | {
      kind: 'projectJwt';
      projectId: string;
      keyId: string;
      subject?: string;
      /** The one group a browser token acts for (its `groupRef` claim), where the token names one. */
      groupRef?: string;
    }
  | { kind: 'anonymous' };

/** Only `frontend` among a key's scopes; no scopes, or `full` beside it, is a full key. */
export function isFrontendOnly(scopes: readonly string[]): boolean {
  return scopes.includes('frontend') && !scopes.includes('full');
}

/**
 * 403 for a key with only the `frontend` scope, outside the routes the embeddable components use
 * (those a project JWT reaches) and on anything that changes the project as a whole: such a key is
 * meant to sit in browser code, where anyone can read it.
 */
export function refuseFrontendKey(principal: Principal): void {
  if (principal.kind !== 'apiKey' || !principal.frontendOnly) return;
  throw new ProblemError({
    status: 403,
    detail:
      'This API key has only the frontend scope: it reaches what the embeddable components use, not this endpoint.',
    remedy: 'Call this endpoint from your backend with a key that has the full scope.',
    retryable: false,
  });
}
