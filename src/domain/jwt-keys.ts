import { createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { isUuid } from '../core/ids.js';
import { JwtKeyEntity, type JwtKey } from '../db/entities/jwt-key.js';
import type { JwtKeyView } from '../schemas/jwt-keys.js';

/** Shorter RSA keys are breakable; NIST has disallowed them for signatures since 2013. */
export const MIN_RSA_BITS = 2048;

export function jwtKeyView(key: JwtKey): JwtKeyView {
  return {
    id: key.id,
    projectId: key.projectId,
    label: key.label,
    algorithm: key.algorithm,
    publicKeyPem: key.publicKeyPem,
    active: key.active,
    ...(key.audience && { audience: key.audience }),
    ...(key.issuer && { issuer: key.issuer }),
    createTime: key.createTime.toISOString(),
    updateTime: key.updateTime.toISOString(),
  };
}

function pemIssue(value: string, detail: string): ProblemError {
  // The value is a public key, but echoing kilobytes of PEM back helps nobody; its first line does.
  return ProblemError.invalid([
    {
      in: 'body',
      name: 'publicKeyPem',
      value: value.trim().split('\n')[0],
      detail: `publicKeyPem ${detail}`,
    },
  ]);
}

/** Parses and checks a PEM public key: RSA, at least 2048 bits, and never a private key. */
export function parseRsaPublicKey(pem: string): KeyObject {
  if (/PRIVATE KEY/.test(pem)) {
    throw pemIssue(pem, 'is a private key; send only the public half (-----BEGIN PUBLIC KEY-----)');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw pemIssue(
      pem,
      'is not a PEM-encoded public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----)',
    );
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw pemIssue(pem, `must be an RSA key; this is an ${key.asymmetricKeyType ?? 'unknown'} key`);
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) {
    throw pemIssue(pem, `must be at least ${MIN_RSA_BITS} bits; this key has ${bits}`);
  }
  return key;
}

export function createJwtKey(
  em: EntityManager,
  projectId: string,
  input: {
    label: string;
    algorithm: 'RSA';
    publicKeyPem: string;
    active?: boolean;
    audience?: string;
    issuer?: string;
  },
): JwtKey {
  parseRsaPublicKey(input.publicKeyPem);
  return em.create(JwtKeyEntity, {
    id: randomUUID(),
    projectId,
    label: input.label,
    algorithm: input.algorithm,
    publicKeyPem: input.publicKeyPem.trim() + '\n',
    active: input.active ?? true,
    audience: input.audience ?? null,
    issuer: input.issuer ?? null,
    createTime: new Date(),
    updateTime: new Date(),
  });
}

/** The spec's remedy on a JWT key 404: the key or the project may be the wrong one. */
export const JWT_KEY_NOT_FOUND_REMEDY =
  'Check the key ID and the project ID: list the project’s keys with GET /projects/{projectIdOrName}/jwt-keys.';

/** The spec's 404 for a key that is missing or belongs to another project, with its remedy. */
export async function findJwtKey(em: EntityManager, projectId: string, keyId: string): Promise<JwtKey> {
  const key = isUuid(keyId) ? await em.findOne(JwtKeyEntity, { id: keyId, projectId }) : null;
  if (!key) {
    throw ProblemError.notFound(
      `JWT key "${keyId}" was not found in this project.`,
      JWT_KEY_NOT_FOUND_REMEDY,
    );
  }
  return key;
}
