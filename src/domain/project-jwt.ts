import { createPublicKey } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../config.js';
import { ProblemError } from '../core/problem.js';
import { type Principal } from '../core/principal.js';
import { isUuid } from '../core/ids.js';
import { canonicalName } from '../core/names.js';
import { JwtKeyEntity, type JwtKey } from '../db/entities/jwt-key.js';

/** Tokens minted by different machines disagree a little about the time. */
export const CLOCK_TOLERANCE_SECONDS = 60;

const reject = (detail: string) => ProblemError.unauthorized(detail);

/**
 * Accepts bearer tokens a builder's backend signs with one of the project's JWT keys: RS256, the
 * key's ID in the `kid` header, an `exp` claim no further off than the lifetime allowed, and the
 * audience and issuer the key requires, if it requires any. Other bearer tokens (HS256 builder
 * tokens) are left to their own verifier.
 */
export async function verifyProjectJwt(
  token: string,
  em: EntityManager,
  settings: Pick<Config, 'projectJwtMaxLifetimeSeconds'>,
): Promise<Principal | undefined> {
  let header: { alg?: string; kid?: string };
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return undefined;
  }
  if (header.alg !== 'RS256') return undefined;
  if (!header.kid)
    throw reject('The token has no "kid" header; set it to the ID of the project JWT key that signed it.');
  const key = isUuid(header.kid) ? await em.findOne(JwtKeyEntity, { id: header.kid }) : null;
  if (!key) throw reject(`The token's "kid" names no JWT key ("${header.kid}").`);
  if (!key.active) throw reject(`JWT key "${key.id}" is inactive; activate it or sign with an active key.`);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, createPublicKey(key.publicKeyPem), {
      algorithms: ['RS256'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp'],
      ...(key.audience && { audience: key.audience }),
      ...(key.issuer && { issuer: key.issuer }),
    }));
  } catch (error) {
    throw refusal(error, key);
  }
  // A group claim that is not a group name must not pass for no claim: that would widen the
  // token from one group to the whole project.
  if (payload.groupRef !== undefined && (typeof payload.groupRef !== 'string' || !payload.groupRef)) {
    throw reject('The token\'s "groupRef" claim must be a group reference (a non-empty string).');
  }
  assertLifetime(payload, typeof payload.groupRef === 'string', settings.projectJwtMaxLifetimeSeconds);
  return {
    kind: 'projectJwt',
    projectId: key.projectId,
    keyId: key.id,
    ...(typeof payload.sub === 'string' && { subject: payload.sub }),
    // The group named as the API names groups (NFC), so it matches however the backend spelled it.
    ...(typeof payload.groupRef === 'string' && { groupRef: canonicalName(payload.groupRef) }),
  };
}

/** The 401 for a token jose refused, saying which check failed. */
function refusal(error: unknown, key: JwtKey): ProblemError {
  if (error instanceof errors.JWTExpired) {
    return reject(
      `The token has expired (at ${new Date(Number(error.payload.exp) * 1000).toISOString()}); mint a new one.`,
    );
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return reject(`The token's signature does not match JWT key "${key.id}".`);
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    const missing = error.reason === 'missing';
    switch (error.claim) {
      case 'exp':
        return reject('The token must carry an "exp" (expiry) claim.');
      case 'aud':
        return reject(
          `The token's "aud" claim ${missing ? 'is missing' : 'does not name this key’s audience'}: JWT key "${key.id}" accepts only tokens for "${key.audience}".`,
        );
      case 'iss':
        return reject(
          `The token's "iss" claim ${missing ? 'is missing' : 'is not this key’s issuer'}: JWT key "${key.id}" accepts only tokens issued by "${key.issuer}".`,
        );
      case 'nbf':
        return reject('The token is not valid yet (its "nbf" is in the future).');
      default:
        return reject(`The token must carry a valid "${error.claim}" claim.`);
    }
  }
  return reject('The token is not a valid JWT.');
}

/**
 * Refuses a token valid for longer than allowed, from when it was issued (`iat`, or now without
 * one, or now if `iat` claims the future) to its `exp`: a leaked long-lived token would keep
 * working after the key's holder forgot it. A token for one group lives in a browser, so its bound
 * is set apart from a project-wide token's.
 */
function assertLifetime(
  payload: JWTPayload,
  groupScoped: boolean,
  lifetimes: Config['projectJwtMaxLifetimeSeconds'],
): void {
  const now = Math.floor(Date.now() / 1000);
  const issued = typeof payload.iat === 'number' ? Math.min(payload.iat, now) : now;
  const lifetime = Math.ceil(payload.exp! - issued);
  const { groupScoped: groupMax, projectWide: projectMax } = lifetimes;
  const max = groupScoped ? groupMax : projectMax;
  if (lifetime <= max + CLOCK_TOLERANCE_SECONDS) return;
  const from = typeof payload.iat === 'number' ? 'its "iat"' : 'now (it has no "iat")';
  const bound = groupScoped
    ? `a token for one group (with a "groupRef" claim) may be valid for at most ${max} seconds (FERRY_GROUP_JWT_MAX_LIFETIME_SECONDS)`
    : `a token for the whole project (no "groupRef" claim) may be valid for at most ${max} seconds (FERRY_PROJECT_JWT_MAX_LIFETIME_SECONDS)`;
  throw reject(
    `The token is valid for ${lifetime} seconds, from ${from} to its "exp"; ${bound}. Mint it with a nearer "exp".`,
  );
}
