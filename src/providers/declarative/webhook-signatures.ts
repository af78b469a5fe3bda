import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { EchoedSecret, HmacSignature, WebhookSignature } from '../../schemas/connector-declaration.js';
import { WebhookVerificationError } from '../errors.js';
import { valueAt } from './json-pointer.js';

/**
 * How a declared webhook's authenticity is checked: an HMAC of the body (and a signing time) the
 * declaration describes, credentials or a secret the provider echoes, or a signed token.
 */

export type Headers = Record<string, string | string[] | undefined>;

export function headerValue(headers: Headers, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function matches(value: string, pattern: string | undefined): string[] {
  if (!pattern) return [value.trim()];
  return [...value.matchAll(new RegExp(pattern, 'g'))].map((match) => match[1]).filter(Boolean);
}

function keyOf(signature: HmacSignature, secret: string): Buffer {
  const bare =
    signature.secretPrefix && secret.startsWith(signature.secretPrefix)
      ? secret.slice(signature.secretPrefix.length)
      : secret;
  return Buffer.from(bare, signature.secretEncoding ?? 'utf8');
}

/** The request a webhook came in, for signatures over more than the body (HubSpot's v3). */
export interface WebhookRequest {
  method: string;
  /** The URL the provider posted to, as it sees it (Ferry's public URL). */
  uri: string;
  /** The object the subscription is for, for events that name only the change (Graph's `changeType`). */
  objectName?: string;
}

const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

/** Checks the signature (and its age); throws WebhookVerificationError saying what did not match. */
export function checkSignature(
  provider: string,
  signature: WebhookSignature,
  headers: Headers,
  rawBody: Buffer,
  secret: string,
  now = Date.now(),
  request?: WebhookRequest,
): void {
  const refuse = (why: string) => new WebhookVerificationError(why, provider);
  if (signature.scheme === 'echoed') return checkEchoedSecret(signature, rawBody, secret, refuse);
  if (signature.scheme === 'jwt')
    return checkToken(signature.toleranceSeconds ?? 60, headers, secret, now, refuse);
  if (signature.scheme === 'basic') {
    const expected = Buffer.from(
      `Basic ${Buffer.from(`${signature.username}:${secret}`).toString('base64')}`,
    );
    if (!sameBytes(Buffer.from(headerValue(headers, 'authorization') ?? ''), expected)) {
      throw refuse('The webhook does not carry the credentials registered with the provider.');
    }
    return;
  }
  const header = headerValue(headers, signature.header);
  if (!header) throw refuse(`The webhook has no ${signature.header} header.`);
  const timestamp = signature.timestamp ? signingTime(signature, headers, rawBody, now, refuse) : '';
  const [before, after] = signature.signed.split('{{body}}');
  const filled = (part: string) =>
    part
      .replaceAll('{{timestamp}}', timestamp)
      .replaceAll('{{method}}', request?.method ?? '')
      .replaceAll('{{uri}}', request?.uri ?? '');
  const algorithm = signature.scheme === 'hmac-sha1' ? 'sha1' : 'sha256';
  const expected = createHmac(algorithm, keyOf(signature, secret))
    .update(filled(before))
    .update(rawBody)
    .update(filled(after ?? ''))
    .digest();
  const given = matches(header, signature.pattern).map((value) => Buffer.from(value, signature.encoding));
  if (!given.some((candidate) => sameBytes(candidate, expected))) {
    throw refuse(`The ${signature.header} signature does not match the body.`);
  }
}

/** The signing time as it was signed (the text), once it is known to be within the tolerance. */
function signingTime(
  signature: HmacSignature,
  headers: Headers,
  rawBody: Buffer,
  now: number,
  refuse: (why: string) => WebhookVerificationError,
): string {
  const declared = signature.timestamp!;
  const where = declared.header ?? `the body's ${declared.body}`;
  let source = '';
  if (declared.header) source = headerValue(headers, declared.header) ?? '';
  else if (declared.body !== undefined) {
    try {
      const value = valueAt(JSON.parse(rawBody.toString('utf8')), declared.body);
      source = typeof value === 'number' || typeof value === 'string' ? String(value) : '';
    } catch {
      throw refuse('The webhook body is not JSON.');
    }
  }
  const timestamp = matches(source, declared.pattern)[0] ?? '';
  const signedAt =
    declared.unit === 'iso'
      ? Date.parse(timestamp)
      : /^\d+$/.test(timestamp)
        ? Number(timestamp) * (declared.unit === 'seconds' ? 1000 : 1)
        : Number.NaN;
  if (Number.isNaN(signedAt)) throw refuse(`The webhook has no signing time in ${where}.`);
  if (Math.abs(now - signedAt) > (signature.toleranceSeconds ?? 300) * 1000) {
    throw refuse('The webhook was signed too long ago (or in the future): a replay is refused.');
  }
  return timestamp;
}

/** `Authorization: Bearer <JWT>`: HS256 with the secret (no other algorithm), within its times. */
function checkToken(
  toleranceSeconds: number,
  headers: Headers,
  secret: string,
  now: number,
  refuse: (why: string) => WebhookVerificationError,
): void {
  const token = /^Bearer\s+(\S+)$/i.exec(headerValue(headers, 'authorization') ?? '')?.[1];
  const parts = token?.split('.');
  if (!parts || parts.length !== 3) throw refuse('The webhook carries no bearer token.');
  const [head, body, signed] = parts;
  let header: { alg?: unknown };
  let claims: { exp?: unknown; iat?: unknown };
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as typeof header;
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    throw refuse('The webhook’s bearer token is not a JWT.');
  }
  if (header.alg !== 'HS256') throw refuse('The webhook’s bearer token is not signed HS256.');
  const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  if (!sameBytes(Buffer.from(signed, 'base64url'), expected)) {
    throw refuse('The webhook’s bearer token is not signed with the app’s secret.');
  }
  const seconds = now / 1000;
  if (typeof claims.exp !== 'number' || claims.exp + toleranceSeconds < seconds)
    throw refuse('The webhook’s bearer token has expired: a replay is refused.');
  if (typeof claims.iat === 'number' && claims.iat - toleranceSeconds > seconds)
    throw refuse('The webhook’s bearer token was issued in the future.');
}

/**
 * The secret echoed in the body (or in each of its listed notifications: Graph's `clientState`),
 * compared by digest so neither its length nor its bytes leak by timing.
 */
function checkEchoedSecret(
  signature: EchoedSecret,
  rawBody: Buffer,
  secret: string,
  refuse: (why: string) => WebhookVerificationError,
): void {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw refuse('The webhook body is not JSON.');
  }
  const items = signature.each === undefined ? [body] : valueAt(body, signature.each);
  if (!Array.isArray(items) || !items.length) throw refuse('The webhook lists no notifications.');
  const digest = (value: string) => createHash('sha256').update(value).digest();
  const expected = digest(secret);
  // Every notification must carry it: one that does not refuses the whole request.
  for (const item of items) {
    const given = signature.at
      .map((pointer) => {
        const value = valueAt(item, pointer);
        return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
      })
      .find((value) => value !== undefined);
    if (given === undefined)
      throw refuse('The webhook does not carry the secret registered with the provider.');
    if (!timingSafeEqual(digest(given), expected)) {
      throw refuse('The webhook carries another secret than the one registered with the provider.');
    }
  }
}
