import { request, type Dispatcher } from 'undici';
import { signatureHeaders, SigningSecretError } from './signing.js';
import {
  assertDeliverableUrl,
  DestinationUrlError,
  guardedDispatcher,
  redactUrl,
  type DestinationPolicy,
} from './url-guard.js';
import { failSpan, inClientSpan, traceContextHeaders } from '../tracing.js';

/**
 * One delivery attempt of one message to one webhook URL: sign, POST, follow redirects under the SSRF
 * guard, classify the outcome. Records pages and notification events both go through here. It never
 * throws for a failed delivery; the caller decides on retries from the result.
 */

export interface DeliveryRequest {
  url: string;
  /** The destination's own headers (for example an Authorization header); dropped on a cross-origin redirect. */
  headers?: Record<string, string>;
  /** The JSON body, exactly as it is signed and sent (a string is sent as UTF-8). */
  body: string | Buffer;
  /** Stable across attempts of the same message, so receivers can deduplicate. */
  messageId: string;
  secrets: readonly string[];
  /** The whole attempt, redirects and reading the response included. */
  timeoutMs: number;
  allowPrivate: boolean;
  allowedAddresses?: readonly string[];
  /** The signing time; defaults to now. Each attempt is signed afresh because receivers reject old timestamps. */
  timestamp?: Date;
}

/** Why an attempt failed: refused by the SSRF guard, timed out, no connection, or an unsuccessful status. */
export type DeliveryFailure = 'refused' | 'timeout' | 'network' | 'status' | 'invalid-request';

export interface DeliveryResult {
  ok: boolean;
  status?: number;
  durationMs: number;
  /** The start of the receiver's response body, at most RESPONSE_BODY_LIMIT bytes of UTF-8. */
  responseBody: string;
  retryable: boolean;
  /** The receiver's Retry-After, in milliseconds from when the response arrived. */
  retryAfterMs?: number;
  /** The receiver answered 410 Gone: the destination should be disabled. */
  gone: boolean;
  failure?: DeliveryFailure;
  /** A human reason; it never contains secrets, header values or query strings. */
  error?: string;
}

export const RESPONSE_BODY_LIMIT = 2048;
export const MAX_REDIRECTS = 5;
const USER_AGENT = 'Ferry-Webhooks/1.0';

/** Parses Retry-After, either delay-seconds or an HTTP-date, into milliseconds from `now`. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // HTTP dates start with the day's name; Date.parse alone would also take "-5" or "2026".
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(date - now, 0);
}

/** Status codes that are worth another attempt: the receiver is overloaded, down or slow. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Headers a destination may not set: the transport's own, and the ones Ferry signs and sets. */
const RESERVED_HEADER =
  /^(host|content-length|content-type|transfer-encoding|connection|keep-alive|upgrade|expect|te|trailer|user-agent|webhook-.*|svix-.*)$/;

/** Whether a destination may not set this header itself (the API refuses such headers up front). */
export function isReservedHeader(name: string): boolean {
  return RESERVED_HEADER.test(name.toLowerCase());
}

/** The destination's headers with lower-cased names, reserved ones left out (a duplicate `Webhook-Id` would confuse receivers). */
function destinationHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (!RESERVED_HEADER.test(lower)) kept[lower] = value;
  }
  return kept;
}

/** Reads at most `limit` bytes of the body and cuts at a character boundary. */
async function readStart(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    chunks.push(bytes);
    size += bytes.length;
    if (size >= limit) break;
  }
  const all = Buffer.concat(chunks);
  if (all.length <= limit) return all.toString('utf8');
  let end = limit;
  while (end > 0 && (all[end] & 0xc0) === 0x80) end--;
  return all.toString('utf8', 0, end);
}

function errorCode(error: unknown): string | undefined {
  const own = (error as { code?: unknown }).code;
  if (typeof own === 'string') return own;
  const cause = (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

function failedAttempt(
  startedAt: number,
  failure: DeliveryFailure,
  error: string,
  retryable: boolean,
): DeliveryResult {
  return {
    ok: false,
    durationMs: Date.now() - startedAt,
    responseBody: '',
    retryable,
    gone: false,
    failure,
    error,
  };
}

/** Turns a thrown error into a result; only codes and our own messages reach `error`, never header values. */
function thrownToResult(
  error: unknown,
  startedAt: number,
  timedOut: boolean,
  timeoutMs: number,
): DeliveryResult {
  if (error instanceof DestinationUrlError) {
    return failedAttempt(startedAt, 'refused', error.message, error.code === 'unresolvable');
  }
  if (error instanceof SigningSecretError)
    return failedAttempt(startedAt, 'invalid-request', error.message, false);
  const code = errorCode(error);
  if (timedOut || (code && TIMEOUT_CODES.has(code))) {
    return failedAttempt(startedAt, 'timeout', `no response within ${timeoutMs} ms`, true);
  }
  if (code === 'UND_ERR_INVALID_ARG' || code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
    return failedAttempt(startedAt, 'invalid-request', `the request could not be built (${code})`, false);
  }
  return failedAttempt(
    startedAt,
    'network',
    `connection failed (${code ?? (error as Error).name ?? 'unknown error'})`,
    true,
  );
}

/**
 * One delivery attempt, inside a client span when tracing is on. The span names the receiver's host
 * and port, the message id and the outcome: never the URL's path or query (webhook URLs often carry
 * a token there), a header or the body. The receiver gets the span's `traceparent`.
 */
export function deliverMessage(message: DeliveryRequest): Promise<DeliveryResult> {
  return inClientSpan(
    'POST destination',
    () => deliverySpanAttributes(message),
    async (span) => {
      const result = await attemptDelivery(message);
      if (result.status !== undefined) span?.setAttribute('http.response.status_code', result.status);
      if (!result.ok) {
        span?.setAttribute('ferry.delivery.failure', result.failure ?? 'status');
        failSpan(span, result.failure ?? 'status');
      }
      return result;
    },
  );
}

function deliverySpanAttributes(message: DeliveryRequest) {
  const attributes = { 'http.request.method': 'POST', 'ferry.message.id': message.messageId };
  try {
    const url = new URL(message.url);
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    return { ...attributes, 'server.address': url.hostname, 'server.port': port };
  } catch {
    return attributes;
  }
}

async function attemptDelivery(message: DeliveryRequest): Promise<DeliveryResult> {
  const startedAt = Date.now();
  const policy: DestinationPolicy = {
    allowPrivate: message.allowPrivate,
    allowedAddresses: message.allowedAddresses,
  };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, message.timeoutMs);
  try {
    // Encoded once: the signature and the request use the same bytes.
    const payload = typeof message.body === 'string' ? Buffer.from(message.body, 'utf8') : message.body;
    const signed = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...traceContextHeaders(),
      ...signatureHeaders({
        messageId: message.messageId,
        timestamp: message.timestamp ?? new Date(),
        body: payload,
        secrets: message.secrets,
      }),
    };
    const ownHeaders = destinationHeaders(message.headers);
    let url = await assertDeliverableUrl(message.url, policy);
    // Once a redirect leaves the destination's origin, its own headers (credentials) stay behind for good.
    let sameOrigin = true;
    let method: 'POST' | 'GET' = 'POST';
    for (let redirects = 0; ; redirects++) {
      const response = await request(url, {
        method,
        headers: sameOrigin ? { ...ownHeaders, ...signed } : signed,
        body: method === 'POST' ? payload : undefined,
        dispatcher: guardedDispatcher(policy),
        signal: controller.signal,
        headersTimeout: message.timeoutMs,
        bodyTimeout: message.timeoutMs,
      });
      const { statusCode: status, headers } = response;
      const location = headers.location;
      if (REDIRECTS.has(status) && typeof location === 'string') {
        await response.body.dump();
        if (redirects >= MAX_REDIRECTS) {
          return {
            ...failedAttempt(startedAt, 'status', `more than ${MAX_REDIRECTS} redirects`, false),
            status,
          };
        }
        let next: URL;
        try {
          next = await assertDeliverableUrl(new URL(location, url), policy);
        } catch (error) {
          const reason = error instanceof Error ? error.message : 'invalid location';
          const refused = failedAttempt(
            startedAt,
            'refused',
            `redirect from ${redactUrl(url)} refused: ${reason}`,
            false,
          );
          return { ...refused, status };
        }
        // 303 asks for a GET of another resource; the other codes repeat the POST, or the message would be lost.
        if (status === 303) method = 'GET';
        if (next.origin !== url.origin) sameOrigin = false;
        url = next;
        continue;
      }
      const responseBody = await readStart(response.body, RESPONSE_BODY_LIMIT);
      const ok = status >= 200 && status < 300;
      const retryable = !ok && isRetryableStatus(status);
      const retryAfterMs = retryable ? parseRetryAfter(headers['retry-after']) : undefined;
      return {
        ok,
        status,
        durationMs: Date.now() - startedAt,
        responseBody,
        retryable,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
        gone: status === 410,
        ...(!ok && { failure: 'status' as const, error: `${redactUrl(url)} answered ${status}` }),
      };
    }
  } catch (error) {
    return thrownToResult(error, startedAt, timedOut, message.timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}
