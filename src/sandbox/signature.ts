import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying webhook signatures: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export const sandboxSignatureHeader = 'X-Sandbox-Signature';

function hmacHex(secret: string, timestamp: number, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** Builds the signature header value for a body, as the sandbox sends it. */
export function signSandboxPayload(
  secret: string,
  rawBody: string | Buffer,
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, rawBody)}`;
}

/**
 * Checks a webhook signature against the exact raw body. Several v1 entries are allowed (one per
 * valid secret during a rotation); any match passes. The timestamp must be within the tolerance
 * of now, which stops replays of old deliveries.
 */
export function verifySandboxSignature(
  secret: string,
  header: string | undefined | null,
  rawBody: string | Buffer,
  toleranceSeconds = 300,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): boolean {
  if (!secret || !header) return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === 't' && /^\d+$/.test(value ?? '')) timestamp = Number(value);
    else if (name === 'v1' && /^[0-9a-f]{64}$/i.test(value ?? '')) signatures.push(value.toLowerCase());
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, rawBody), 'hex');
  return signatures.some((signature) => timingSafeEqual(expected, Buffer.from(signature, 'hex')));
}
