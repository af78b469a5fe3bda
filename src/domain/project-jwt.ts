import { createPublicKey } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { ProblemError } from '../core/problem.js';
import { type Principal } from '../core/principal.js';
import { isUuid } from '../core/ids.js';
import { canonicalName } from '../core/names.js';
import { JwtKeyEntity } from '../db/entities/jwt-key.js';

/** Tokens minted by different machines disagree a little about the time. */
export const CLOCK_TOLERANCE_SECONDS = 60;

const reject = (detail: string) => ProblemError.unauthorized(detail);

/**
 * Accepts bearer tokens a builder's backend signs with one of the project's JWT keys: RS256, the
 * key's ID in the `kid` header, and an `exp` claim. Other bearer tokens (HS256 builder tokens) are
 * left to their own verifier.
 */
export async function verifyProjectJwt(token: string, em: EntityManager): Promise<Principal | undefined> {
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
  try {
    const { payload } = await jwtVerify(token, createPublicKey(key.publicKeyPem), {
      algorithms: ['RS256'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp'],
    });
    // A group claim that is not a group name must not pass for no claim: that would widen the
    // token from one group to the whole project.
    if (payload.groupRef !== undefined && (typeof payload.groupRef !== 'string' || !payload.groupRef)) {
      throw reject('The token\'s "groupRef" claim must be a group reference (a non-empty string).');
    }
    return {
      kind: 'projectJwt',
      projectId: key.projectId,
      keyId: key.id,
      ...(typeof payload.sub === 'string' && { subject: payload.sub }),
      // The group named as the API names groups (NFC), so it matches however the backend spelled it.
      ...(typeof payload.groupRef === 'string' && { groupRef: canonicalName(payload.groupRef) }),
    };
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw reject('The token has expired.');
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      throw reject(`The token's signature does not match JWT key "${key.id}".`);
    }
    if (error instanceof errors.JWTClaimValidationFailed) {
      const claim = error.claim === 'exp' ? 'an "exp" (expiry) claim' : `a valid "${error.claim}" claim`;
      throw reject(`The token must carry ${claim}.`);
    }
    throw reject('The token is not a valid JWT.');
  }
}
