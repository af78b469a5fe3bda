import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

/**
 * The JWT bearer grant's assertion (RFC 7523 section 3): a short-lived JWT signed with the
 * connection's private key, naming who issues it (`iss`, a service account or client id), whom it
 * acts for (`sub`, optional), where it is used (`aud`) and, for Google, the scopes it asks for. The
 * private key never leaves this module except sealed; errors never quote it.
 */

/** The longest PEM Ferry accepts: an RSA 8192-bit key is about 6.5 kB. */
export const MAX_PRIVATE_KEY_LENGTH = 10_000;

/** The shortest RSA modulus a provider still accepts (Google and Salesforce ask for 2048 bits). */
const MIN_RSA_BITS = 2048;

export class InvalidPrivateKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPrivateKeyError';
  }
}

/**
 * Reads a PEM RSA private key (PKCS#8 `BEGIN PRIVATE KEY`, as in Google's service-account JSON, or
 * PKCS#1 `BEGIN RSA PRIVATE KEY`, as `openssl genrsa` writes). Encrypted keys, public keys,
 * certificates and other key types are refused with a message that does not quote the input.
 */
export function parseRsaPrivateKey(pem: string): KeyObject {
  if (pem.length > MAX_PRIVATE_KEY_LENGTH) {
    throw new InvalidPrivateKeyError(`is longer than ${MAX_PRIVATE_KEY_LENGTH} characters`);
  }
  // JSON copied from a key file sometimes keeps its escaped newlines.
  const text = pem.includes('\\n') && !pem.includes('\n') ? pem.replaceAll('\\n', '\n') : pem;
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text)) {
    throw new InvalidPrivateKeyError('is encrypted; give the unencrypted PEM private key');
  }
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(text)) {
    throw new InvalidPrivateKeyError(
      'is not a PEM private key (expected "-----BEGIN PRIVATE KEY-----" or "-----BEGIN RSA PRIVATE KEY-----")',
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    throw new InvalidPrivateKeyError('could not be read as a PEM private key (damaged or truncated?)');
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new InvalidPrivateKeyError(
      `is a ${key.asymmetricKeyType ?? 'non-RSA'} key; RS256 needs an RSA key`,
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) {
    throw new InvalidPrivateKeyError(
      `is a ${bits}-bit RSA key; providers need at least ${MIN_RSA_BITS} bits`,
    );
  }
  return key;
}

export interface AssertionClaims {
  issuer: string;
  subject?: string;
  audience: string;
  /** Space-separated scopes for a `scope` claim (Google); absent when the provider takes none. */
  scope?: string;
  keyId?: string;
  lifetimeSeconds: number;
  /** Seconds since the epoch; now if absent. */
  now?: number;
}

/** Signs one RS256 assertion with `iss`, `sub`, `aud`, `iat`, `exp` and, if given, `scope`. */
export async function signAssertion(key: KeyObject, claims: AssertionClaims): Promise<string> {
  const now = claims.now ?? Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims.scope ? { scope: claims.scope } : {})
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(claims.keyId && { kid: claims.keyId }) })
    .setIssuer(claims.issuer)
    .setAudience(claims.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + claims.lifetimeSeconds);
  if (claims.subject) jwt.setSubject(claims.subject);
  return jwt.sign(key);
}
