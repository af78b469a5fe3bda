import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { SignJWT, errors, jwtVerify } from 'jose';
import type { Config } from '../config.js';
import { canonicalEmail } from '../core/names.js';
import { ProblemError } from '../core/problem.js';
import type { Principal } from '../core/principal.js';
import { BuilderEntity, type Builder } from '../db/entities/org.js';

const ISSUER = 'ferry';
const AUDIENCE = 'ferry:builder';

/** Finds the builder with this email, creating them on first sign-in. */
export async function findOrCreateBuilder(em: EntityManager, email: string): Promise<Builder> {
  const normalized = canonicalEmail(email);
  const existing = await em.findOne(BuilderEntity, { email: normalized });
  if (existing) return existing;
  const builder = em.create(BuilderEntity, {
    id: randomUUID(),
    email: normalized,
    createTime: new Date(),
    updateTime: new Date(),
  });
  await em.persist(builder).flush();
  return builder;
}

/** Ferry signs builder tokens itself (HS256 under FERRY_BUILDER_TOKEN_SECRET). */
export async function issueBuilderToken(
  builder: Builder,
  secret: Config['builderTokenSecret'],
  ttlSeconds = 12 * 3600,
): Promise<string> {
  return new SignJWT({ email: builder.email })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(builder.id)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(secret);
}

/** Accepts Ferry-issued builder tokens; leaves other bearer tokens to the next verifier. */
export async function verifyBuilderToken(
  token: string,
  em: EntityManager,
  settings: Pick<Config, 'builderTokenSecret'>,
): Promise<Principal | undefined> {
  let header: { alg?: string };
  try {
    header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as {
      alg?: string;
    };
  } catch {
    return undefined;
  }
  if (header.alg !== 'HS256') return undefined;
  try {
    const { payload } = await jwtVerify(token, settings.builderTokenSecret, {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
      clockTolerance: 60,
    });
    const builder = await em.findOne(BuilderEntity, { id: payload.sub as string });
    if (!builder) throw ProblemError.unauthorized('The bearer token names a builder that no longer exists.');
    return { kind: 'builder', builderId: builder.id, email: builder.email };
  } catch (error) {
    if (error instanceof ProblemError) throw error;
    const reason = error instanceof errors.JWTExpired ? 'has expired' : 'is not valid';
    throw ProblemError.unauthorized(`The builder token ${reason}.`);
  }
}
