import type { Context } from 'koa';
import { TtlCache } from '../core/ttl-cache.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeyEntity } from '../db/entities/project.js';
import { isFrontendOnly, refuseFrontendKey, type Principal } from '../core/principal.js';
import { hashToken } from '../crypto/secrets.js';
import { ProblemError } from '../core/problem.js';
import type { Config } from '../config.js';
import { requestSettings, type AuthScheme } from './route.js';

/**
 * Bearer tokens are checked by verifiers registered at start-up (builder tokens, project JWT keys);
 * each returns a principal, `undefined` when the token is not its kind, or throws a 401 problem.
 */
export type BearerVerifier = (
  token: string,
  em: EntityManager,
  settings: Config,
) => Promise<Principal | undefined>;

const bearerVerifiers: BearerVerifier[] = [];

export function registerBearerVerifier(verifier: BearerVerifier): void {
  if (!bearerVerifiers.includes(verifier)) bearerVerifiers.push(verifier);
}

/**
 * Keys verified lately, by hash, so a busy key costs no query on every request. A key deactivated
 * or deleted through this process is forgotten at once (`forgetApiKeys`); another process sees the
 * change after at most `API_KEY_CACHE_MS`. Only keys that verified are kept, never the keys themselves.
 */
const API_KEY_CACHE_MS = 5_000;
const API_KEY_CACHE_SIZE = 10_000;
const verifiedKeys = new TtlCache<string, Principal>(API_KEY_CACHE_MS, API_KEY_CACHE_SIZE);
/**
 * Lookups under way, by hash: requests with the same key that arrive while it is being looked up
 * wait for that lookup, so a busy key's expiry costs one query, not one per request in flight.
 */
const lookups = new Map<string, Promise<Principal>>();
/** Moves on when keys are forgotten: a lookup that began before never caches what it found. */
let generation = 0;

/** Forgets every verified key: called when a key is deactivated or deleted. */
export function forgetApiKeys(): void {
  generation++;
  verifiedKeys.clear();
  lookups.clear();
}

/** The principal of an API key (`X-Api-Key`); a 401 problem when the key is unknown or revoked. */
export async function authenticateApiKey(key: string, em: EntityManager): Promise<Principal> {
  const keyHash = hashToken(key);
  const cached = verifiedKeys.get(keyHash);
  if (cached) return cached;
  let lookup = lookups.get(keyHash);
  if (!lookup) {
    lookup = lookUpApiKey(keyHash, em).finally(() => {
      if (lookups.get(keyHash) === lookup) lookups.delete(keyHash);
    });
    lookups.set(keyHash, lookup);
  }
  return lookup;
}

async function lookUpApiKey(keyHash: string, em: EntityManager): Promise<Principal> {
  const began = generation;
  const apiKey = await em.findOne(ApiKeyEntity, { keyHash, active: true });
  if (!apiKey) {
    verifiedKeys.delete(keyHash);
    throw ProblemError.unauthorized('The API key is not valid.');
  }
  const now = Date.now();
  // Once a minute at most, so busy keys do not turn every request into a write.
  if (!apiKey.lastUsedTime || now - apiKey.lastUsedTime.getTime() > 60_000) {
    await em.nativeUpdate(ApiKeyEntity, { id: apiKey.id }, { lastUsedTime: new Date(now) });
  }
  const principal: Principal = {
    kind: 'apiKey',
    projectId: apiKey.projectId,
    apiKeyId: apiKey.id,
    ...(isFrontendOnly(apiKey.scopes) && { frontendOnly: true as const }),
  };
  if (began !== generation) return principal;
  verifiedKeys.set(keyHash, principal, now);
  return principal;
}

async function authenticateBearer(token: string, em: EntityManager, settings: Config): Promise<Principal> {
  for (const verify of bearerVerifiers) {
    const principal = await verify(token, em, settings);
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
    const principal = await authenticateApiKey(apiKey, em);
    // A frontend key reaches the routes a project JWT reaches, and no others.
    if (!schemes.includes('projectJwt')) refuseFrontendKey(principal);
    return principal;
  }
  if (bearer) {
    if (!schemes.includes('bearer') && !schemes.includes('projectJwt')) {
      throw ProblemError.unauthorized('This endpoint requires an X-Api-Key header.');
    }
    const principal = await authenticateBearer(bearer, em, requestSettings(ctx));
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
