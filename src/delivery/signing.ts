import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (the scheme Svix publishes). Every delivery carries the headers twice,
 * as `webhook-*` and as `svix-*`, so receivers written for either verify it unchanged.
 */

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks receivers expect. */
export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Thrown for a secret that is not a `whsec_<base64>` key. Names the secret's position, never its value. */
export class SigningSecretError extends Error {
  override readonly name = 'SigningSecretError';
}

export interface SignatureInput {
  messageId: string;
  timestamp: Date;
  /** The exact bytes sent (a string is signed as UTF-8): the signature covers `id.timestamp.body`. */
  body: string | Buffer;
  /** Every secret currently valid; a rotated-out secret stays listed during its grace period. */
  secrets: readonly string[];
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature'?: string;
  'svix-id': string;
  'svix-timestamp': string;
  'svix-signature'?: string;
}

type Sign = (messageId: string, timestamp: Date, body: string | Buffer) => string;

/**
 * The `standardwebhooks` package checks the secret; the HMAC itself is node:crypto's, byte for byte
 * what the package computes but native: its pure-JS SHA-256 took milliseconds per 300 KB message.
 */
function signer(secret: string, position: number): Sign {
  let key: Buffer;
  try {
    if (!secret.startsWith(SECRET_PREFIX)) throw new Error('missing prefix');
    new Webhook(secret);
    key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  } catch {
    throw new SigningSecretError(`signing secret #${position + 1} is not a whsec_<base64> secret`);
  }
  return (messageId, timestamp, body) => {
    const seconds = Math.floor(timestamp.getTime() / 1000);
    const hmac = createHmac('sha256', key).update(`${messageId}.${seconds}.`).update(body).digest('base64');
    return `v1,${hmac}`;
  };
}

/**
 * The signature headers for one delivery attempt: one `v1,<signature>` per secret, space-separated,
 * so a receiver holding any of the secrets accepts it. No secrets means no signature header.
 */
export function signatureHeaders({ messageId, timestamp, body, secrets }: SignatureInput): SignatureHeaders {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  const signature = secrets
    .map((secret, position) => signer(secret, position)(messageId, timestamp, body))
    .join(' ');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': seconds,
    ...(signature && { 'webhook-signature': signature }),
    'svix-id': messageId,
    'svix-timestamp': seconds,
    ...(signature && { 'svix-signature': signature }),
  };
}
