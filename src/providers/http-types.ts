import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';

/** The shapes of the provider HTTP layer (`http.ts`): requests, answers, retry policy, options. */

export interface RequestLogEntry {
  method: string;
  /** The URL with credentials removed (query secrets and user info replaced by `[redacted]`). */
  url: string;
  /** The provider's HTTP status; absent when no answer came (network failure, timeout). */
  status?: number;
  durationMs: number;
  /** 1 for the first try of a request, 2 for the first retry... */
  attempt: number;
  /** What went wrong, secret-free: a network error, or the provider's status text. */
  error?: string;
  /** Set when another attempt follows after this many milliseconds. */
  retryInMs?: number;
}

export interface RetryPolicy {
  /** Attempts per request including the first (the 401 refresh retry comes on top). Default 4. */
  maxAttempts?: number;
  /** First backoff delay; doubled per retry, with jitter. Default 500 ms. */
  baseDelayMs?: number;
  /** Ceiling of one backoff delay. Default 10 s. */
  maxDelayMs?: number;
  /** A longer `Retry-After` is not waited for: the request fails, retryable, with `retryAfterSeconds`. Default 30 s. */
  maxRetryAfterMs?: number;
}

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface ProviderHttpRequest {
  method: HttpMethod;
  /** A path appended to the base URL (`/crm/v3/objects/contacts`), or an absolute URL. */
  path: string;
  /**
   * The catalog module whose base URL the path is appended to, for a provider whose APIs sit on
   * several hosts (Google's People API at people.googleapis.com); the provider's base URL if absent.
   */
  module?: string;
  query?: Record<string, string | number | boolean | string[] | undefined>;
  /** Sent as `application/json`. */
  json?: unknown;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Overrides the method's idempotency, e.g. true for a search sent as POST. */
  idempotent?: boolean;
  /**
   * A 401 after the forced refresh tells the connection its credentials are refused (the default);
   * false for requests whose 401 may mean something else, such as a proxied path.
   */
  reportRejection?: boolean;
  /** The answer's status as the provider sent it, even when its body reports a failure (the proxy). */
  rawStatus?: boolean;
}

export interface ProviderHttpResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the body is JSON, the text otherwise, undefined when empty. */
  body: T;
  rawBody: Buffer;
}

/** An answer whose body is still arriving (the proxy passes large bodies through without holding them). */
export interface ProviderHttpStream {
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

export interface ProviderHttpOptions {
  onRequest?: (entry: RequestLogEntry) => void;
  /** Replaces the catalog base URL. */
  baseUrl?: string;
  retry?: RetryPolicy;
  /** Per attempt, headers and body included. Default 30 s. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  /** Where this provider writes its error message, when the common dialects do not find it. */
  errorMessage?: (body: unknown) => string | undefined;
  /** How long to wait after a 429 that has no Retry-After, from the provider's rate-limit headers. */
  rateLimitWait?: (headers: Record<string, string>) => number | undefined;
  /** The status a 2xx answer really has when its body reports a failure (GraphQL `errors`). */
  bodyStatus?: (body: unknown) => number | undefined;
  /** What an error body details beyond its message (Zendesk's per-field `details`). */
  errorDetails?: (body: unknown) => unknown;
  /** Waits, before each attempt, until the provider's documented limits allow it (see `pacing.ts`). */
  pace?: (request: { method: string; url: URL }) => Promise<void>;
}
