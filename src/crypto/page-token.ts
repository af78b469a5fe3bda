import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Static, TSchema } from 'typebox';
import { ProblemError } from '../core/problem.js';
import { schemaIssues } from '../core/validation.js';

/**
 * The opaque next-page tokens of Ferry's listings, one codec for all: a token carries where its
 * listing stands (a typed position, checked against its TypeBox schema when it comes back) as
 * base64url JSON, bound to its listing and scope (a project, an installation) by an HMAC under a
 * key derived from a secret of the deployment. So a token cannot be forged, edited or replayed
 * against another listing or scope: anything but a token the same listing returned is a 400 naming
 * `pageToken`, never a query run with what a client made up.
 */

export interface PageTokenCodec<Position> {
  /** `secret`: the deployment's key (FERRY_ENCRYPTION_KEY), handed down from where settings are read. */
  encode(scope: string, position: Position, secret: Buffer | string): string;
  /** The position `token` carries; a `ProblemError` 400 for anything this listing did not return. */
  decode(scope: string, token: string, secret: Buffer | string): Position;
}

/** MAC characters kept (22 of base64url: 132 bits). */
const MAC_CHARS = 22;
/** Longer tokens are refused before any work is done on them. */
const MAX_TOKEN_CHARS = 2048;

export function invalidPageToken(token: string): ProblemError {
  return ProblemError.invalid([
    {
      in: 'query',
      name: 'pageToken',
      value: token.length > 200 ? `${token.slice(0, 200)}…` : token,
      detail:
        'pageToken is not a token this listing returned; pass nextPageToken back unchanged, or start again without it',
    },
  ]);
}

/**
 * A codec for one listing. `listing` names it (its tokens are never accepted by another); the secret
 * is given with each token made or checked, so a codec can be declared at module load.
 */
export function pageTokenCodec<S extends TSchema>(listing: string, schema: S): PageTokenCodec<Static<S>> {
  const mac = (scope: string, payload: string, secret: Buffer | string) => {
    const key = createHmac('sha256', secret).update(`ferry/page-token/${listing}/v1`).digest();
    return createHmac('sha256', key)
      .update(`${scope}\u0000${payload}`)
      .digest('base64url')
      .slice(0, MAC_CHARS);
  };
  return {
    encode(scope, position, secret) {
      const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
      return `${payload}.${mac(scope, payload, secret)}`;
    },
    decode(scope, token, secret) {
      if (token.length > MAX_TOKEN_CHARS) throw invalidPageToken(token);
      const [payload, signature, extra] = token.split('.');
      if (!payload || !signature || extra !== undefined) throw invalidPageToken(token);
      const expected = Buffer.from(mac(scope, payload, secret));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw invalidPageToken(token);
      let position: unknown;
      try {
        position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalidPageToken(token);
      }
      // Signed by this deployment, yet checked: a token minted by an older version may differ in shape.
      if (schemaIssues(schema, position, 'query').length) throw invalidPageToken(token);
      return position as Static<S>;
    },
  };
}
