import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeyEntity } from '../db/entities/project.js';
import type { Principal } from '../core/principal.js';
import { hashToken } from '../crypto/secrets.js';
import { ProblemError } from '../core/problem.js';
import type { AuthScheme } from './route.js';

/**
 * Bearer tokens are checked by verifiers registered at start-up (builder tokens, project JWT keys);
 * each returns a principal, `undefined` when the token is not its kind, or throws a 401 problem.
 */
export type BearerVerifier = (token: string, em: EntityManager) => Promise<Principal | undefined>;

const bearerVerifiers: BearerVerifier[] = [];

export function registerBearerVerifier(verifier: BearerVerifier): void {
  if (!bearerVerifiers.includes(verifier)) bearerVerifiers.push(verifier);
}

/** The principal of an API key (`X-Api-Key`); a 401 problem when the key is unknown or revoked. */
export async function authenticateApiKey(key: string, em: EntityManager): Promise<Principal> {
  const apiKey = await em.findOne(ApiKeyEntity, { keyHash: hashToken(key), active: true });
  if (!apiKey) throw ProblemError.unauthorized('The API key is not valid.');
  // Once a minute at most, so busy keys do not turn every request into a write.
  const now = Date.now();
  if (!apiKey.lastUsedTime || now - apiKey.lastUsedTime.getTime() > 60_000) {
    await em.nativeUpdate(ApiKeyEntity, { id: apiKey.id }, { lastUsedTime: new Date(now) });
  }
  return { kind: 'apiKey', projectId: apiKey.projectId, apiKeyId: apiKey.id };
}

async function authenticateBearer(token: string, em: EntityManager): Promise<Principal> {
  for (const verify of bearerVerifiers) {
    const principal = await verify(token, em);
    if (principal) return principal;
  }
  throw ProblemError.unauthorized('The bearer token is not valid.');
}

/** Finds the caller from `X-Api-Key` or `Authorization: Bearer`, accepting only the route's schemes. */
export async function authenticate(
  ctx: Context,
  schemes: AuthScheme[],
  em: EntityManager,
): Promise<Principal> {
  if (schemes.includes('none')) return { kind: 'anonymous' };
  const apiKey = ctx.get('x-api-key');
  const authorization = ctx.get('authorization');
  const bearer = /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim();
  if (apiKey) {
    if (!schemes.includes('apiKey'))
      throw ProblemError.unauthorized('This endpoint requires a bearer token.');
    return authenticateApiKey(apiKey, em);
  }
  if (bearer) {
    if (!schemes.includes('bearer') && !schemes.includes('projectJwt')) {
      throw ProblemError.unauthorized('This endpoint requires an X-Api-Key header.');
    }
    const principal = await authenticateBearer(bearer, em);
    // Authenticated, but with a kind of token this endpoint does not take: forbidden, not unauthorized.
    if (principal.kind === 'projectJwt' && !schemes.includes('projectJwt')) {
      const instead = schemes.includes('bearer') ? 'it needs a builder token' : 'use an API key';
      throw new ProblemError({
        status: 403,
        detail: `This endpoint does not accept project JWTs; ${instead}.`,
      });
    }
    if (principal.kind === 'builder' && !schemes.includes('bearer')) {
      throw new ProblemError({
        status: 403,
        detail: 'This endpoint does not accept builder tokens; use an API key.',
      });
    }
    return principal;
  }
  throw ProblemError.unauthorized(
    schemes.includes('apiKey')
      ? 'Send an API key in the X-Api-Key header.'
      : 'Send a bearer token in the Authorization header.',
  );
}
