import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { config } from '../config.js';
import { parseRetryAfter } from '../delivery/deliver.js';
import { guardedDispatcher } from '../delivery/url-guard.js';
import type { AuthMaterial, ConnectionTarget } from './auth-material.js';
import { authMethodPresenting } from './catalog/auth-methods.js';
import { renderProviderTemplate, SANDBOX_URL_VARIABLE, type Provider } from './catalog/index.js';
import { ConnectionSetupError, ProviderError } from './errors.js';
import { failSpan, inClientSpan } from '../tracing.js';

/**
 * The one way connectors talk HTTP to providers. Per request it:
 * - resolves the provider's base URL template (`{{.workspace}}`, `{{.sandboxURL}}`...);
 * - injects credentials from `target.auth()` the way the catalog says for the method that takes them
 *   (OAuth 2 bearer, API key header or query parameter, Basic, API key as Basic, custom headers), the
 *   main method or an alternative (`alternativeAuth`);
 * - reads a 2xx answer whose body reports a failure (GraphQL `errors`) as the status it stands for;
 * - retries 429 (after `Retry-After`, seconds or HTTP date) and, for idempotent requests, 5xx
 *   and network failures, with exponential backoff and jitter, a bounded number of times;
 * - after a 401, asks `target.auth({ forceRefresh: true })` once and tries again;
 * - bounds every attempt with a timeout;
 * - reports every attempt to `onRequest` with secrets removed from the URL and error text.
 *
 * Non-idempotent requests (POST, PATCH) are retried only after a 429, or when the connection was
 * refused, because a 5xx or a timeout may have come after the provider applied the change.
 */

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

const defaultRetry: Required<RetryPolicy> = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 30_000,
};

const idempotentMethods = new Set<HttpMethod>(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Query parameter names that carry credentials at one provider or another. */
const secretQueryNames = new Set([
  'access_token',
  'api_key',
  'apikey',
  'api-key',
  'auth',
  'authorization',
  'client_secret',
  'code',
  'hapikey',
  'id_token',
  'key',
  'password',
  'refresh_token',
  'secret',
  'sig',
  'signature',
  'token',
]);

const REDACTED = '[redacted]';

/**
 * Provider traffic goes through the same address guard as webhook deliveries: a URL filled from
 * connection metadata must not reach loopback or private networks, except the bundled sandbox.
 */
export function providerDispatcher(): Dispatcher {
  const { env, sandboxUrl, allowPrivateDestinations } = config();
  const sandboxHost = new URL(sandboxUrl).hostname.replace(/^\[|\]$/g, '');
  const sandboxAddresses = sandboxHost === 'localhost' ? ['127.0.0.1', '::1'] : [sandboxHost];
  return guardedDispatcher({
    allowPrivate: allowPrivateDestinations,
    allowedAddresses: env === 'production' ? [] : sandboxAddresses,
  });
}

/** Exponential backoff with "equal jitter": between half and all of base·2^(retry-1), capped. */
export function backoffDelay(retry: number, policy: Required<RetryPolicy>, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  if (contentType?.includes('json') || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** The provider's own words from an error body, in the dialects providers commonly use. */
export function providerErrorMessage(body: unknown): string | undefined {
  let message: unknown;
  if (typeof body === 'string') message = body;
  else if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const nested =
      record.error && typeof record.error === 'object' ? (record.error as Record<string, unknown>) : {};
    const first = Array.isArray(record.errors)
      ? (record.errors[0] as Record<string, unknown> | undefined)
      : {};
    message =
      record.message ??
      record.error_description ??
      nested.message ??
      first?.message ??
      record.detail ??
      (typeof record.error === 'string' ? record.error : undefined) ??
      record.title;
  }
  if (typeof message !== 'string' || !message.trim()) return undefined;
  const trimmed = message.trim();
  return trimmed.length > 500 ? `${trimmed.slice(0, 497)}...` : trimmed;
}

/** Failures of the network or the peer (refused, reset, unknown host, timed out), not of Ferry's own code. */
function isNetworkFailure(error: unknown): boolean {
  if (error instanceof AttemptTimeout) return true;
  const codes = [
    (error as { code?: unknown })?.code,
    (error as { cause?: { code?: unknown } })?.cause?.code,
  ].filter((code): code is string => typeof code === 'string');
  return codes.some(
    (code) =>
      /^E[A-Z]+$/.test(code) ||
      ['UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'UND_ERR_INFO'].includes(code) ||
      /^UND_ERR_.*TIMEOUT$/.test(code) ||
      code.startsWith('HPE_'),
  );
}

/**
 * A request the HTTP client refuses to build for a header value it cannot carry (a line break, text
 * beyond Latin-1), which here can only come from the connection's credentials or metadata. Its other
 * refusals (a path, a method, a body, the headers Ferry sets itself) are Ferry's bugs, not the user's.
 */
function isUnsendable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === 'UND_ERR_INVALID_ARG' &&
    typeof message === 'string' &&
    /^invalid (?!host |content-length |upgrade |request )\S+ header$/.test(message)
  );
}

function isConnectionRefused(error: unknown): boolean {
  const code = (error as { code?: string; cause?: { code?: string } })?.code;
  const causeCode = (error as { cause?: { code?: string } })?.cause?.code;
  return code === 'ECONNREFUSED' || causeCode === 'ECONNREFUSED';
}

class AttemptTimeout extends Error {}

/** One attempt's log entry, its duration measured from now. */
function logEntryOf(method: string, url: string, attempt: number) {
  const started = performance.now();
  return (extra: Partial<RequestLogEntry>): RequestLogEntry => ({
    method,
    url,
    durationMs: Math.round(performance.now() - started),
    attempt,
    ...extra,
  });
}

/**
 * An authenticated HTTP client for one connection. Connectors make one per connector; it holds no
 * credentials itself, asking `target.auth()` per request so refreshed tokens are picked up.
 */
export class ProviderHttpClient {
  private readonly retry: Required<RetryPolicy>;
  private readonly timeoutMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly templateVars: Record<string, string>;

  constructor(
    readonly provider: Provider,
    private readonly target: ConnectionTarget,
    private readonly options: ProviderHttpOptions = {},
  ) {
    this.retry = { ...defaultRetry, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.dispatcher = options.dispatcher ?? providerDispatcher();
    this.templateVars = { ...target.templateVars };
    if (
      !this.templateVars[SANDBOX_URL_VARIABLE] &&
      (options.baseUrl ?? provider.baseURL).includes(SANDBOX_URL_VARIABLE)
    ) {
      // Not connection metadata: the bundled sandbox lives wherever Ferry's configuration says.
      this.templateVars[SANDBOX_URL_VARIABLE] = config().sandboxUrl;
    }
  }

  /** Retrying cannot help, nor can the provider: the connection's values must change. */
  private unsendable(): ConnectionSetupError {
    return new ConnectionSetupError(
      `A request to "${this.provider.name}" cannot be built from this connection: a credential or header value holds characters HTTP headers cannot carry. Update the connection's credentials.`,
      this.provider.name,
    );
  }

  /** The provider's base URL for this connection, without a trailing slash. */
  baseUrl(): string {
    const template = this.options.baseUrl ?? this.provider.baseURL;
    try {
      return renderProviderTemplate(template, this.templateVars).replace(/\/+$/, '');
    } catch (error) {
      const missing = (error as { missing?: string[] }).missing ?? [];
      throw new ConnectionSetupError(
        `The connection to "${this.provider.name}" lacks ${missing.map((name) => `"${name}"`).join(', ')}, needed by the provider's base URL.`,
        this.provider.name,
      );
    }
  }

  /**
   * Sends a request and returns the provider's answer whatever its status (after retries), or
   * throws `ProviderError` when no answer came at all. For the proxy, which relays statuses.
   */
  async send(req: ProviderHttpRequest): Promise<ProviderHttpResponse> {
    const idempotent = req.idempotent ?? idempotentMethods.has(req.method);
    let material = await this.target.auth();
    let refreshed = false;
    let retries = 0;
    for (let attempt = 1; ; attempt++) {
      const { url, headers, secrets } = this.prepare(req, material);
      const logUrl = redactUrl(url, secrets);
      const entry = logEntryOf(req.method, logUrl, attempt);
      let response: ProviderHttpResponse;
      await this.options.pace?.({ method: req.method, url });
      try {
        response = await this.attempt(req, url, headers, () =>
          this.spanAttributes(req, url, logUrl, attempt),
        );
      } catch (error) {
        if (isUnsendable(error)) throw this.unsendable();
        // A bug of Ferry's (a body that cannot be sent, say) is not an outage of the provider's.
        if (!isNetworkFailure(error)) throw error;
        const reason = this.failureReason(error, secrets);
        const canRetry = (idempotent || isConnectionRefused(error)) && retries + 1 < this.retry.maxAttempts;
        const delay = canRetry ? backoffDelay(retries + 1, this.retry) : undefined;
        this.report(entry({ error: reason, ...(delay !== undefined && { retryInMs: delay }) }));
        if (delay === undefined) throw this.unreachable(req, logUrl, reason);
        retries++;
        await sleep(delay);
        continue;
      }

      if (response.status >= 200 && response.status < 300 && this.options.bodyStatus && !req.rawStatus) {
        response.status = this.options.bodyStatus(response.body) ?? response.status;
      }
      const { status } = response;
      if (status === 401 && !refreshed) {
        // The token may have been revoked or expired early: one forced refresh, then one more try.
        this.report(entry({ status, error: 'unauthorized; refreshing credentials' }));
        refreshed = true;
        material = await this.target.auth({ forceRefresh: true });
        continue;
      }
      const retryAfterMs =
        parseRetryAfter(response.headers['retry-after']) ??
        (status === 429 ? this.options.rateLimitWait?.(response.headers) : undefined);
      const retryableStatus = status === 429 || (status >= 500 && idempotent);
      if (retryableStatus && retries + 1 < this.retry.maxAttempts) {
        const delay = retryAfterMs ?? backoffDelay(retries + 1, this.retry);
        if (delay <= this.retry.maxRetryAfterMs) {
          this.report(entry({ status, error: `HTTP ${status}`, retryInMs: delay }));
          retries++;
          await sleep(delay);
          continue;
        }
      }
      this.report(entry({ status, ...(status >= 400 && { error: `HTTP ${status}` }) }));
      if (status === 401 && refreshed && req.reportRejection !== false) {
        await this.target.rejected?.(
          `Provider "${this.provider.name}" refused the connection’s credentials${
            providerErrorMessage(response.body) ? `: ${providerErrorMessage(response.body)}` : '.'
          }`,
        );
      }
      return response;
    }
  }

  /**
   * Like `send`, but the answer's body is handed over as a stream, whatever its status: credentials
   * injected, one forced refresh after a 401, a 429's `Retry-After` waited for. No retry after a 5xx
   * or once an answer began, as its body belongs to the caller; a refused connection is retried.
   */
  async stream(req: ProviderHttpRequest): Promise<ProviderHttpStream> {
    let material = await this.target.auth();
    let refreshed = false;
    let retries = 0;
    for (let attempt = 1; ; attempt++) {
      const { url, headers, secrets } = this.prepare(req, material);
      const logUrl = redactUrl(url, secrets);
      const entry = logEntryOf(req.method, logUrl, attempt);
      await this.options.pace?.({ method: req.method, url });
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new AttemptTimeout()), this.timeoutMs);
      let response: Dispatcher.ResponseData;
      try {
        // The span covers the wait for the answer's headers; its body belongs to the caller.
        response = await inClientSpan(
          `${req.method} ${this.provider.name}`,
          () => this.spanAttributes(req, url, logUrl, attempt),
          async (span) => {
            const answer = await request(url, {
              method: req.method,
              headers,
              body: req.json !== undefined ? JSON.stringify(req.json) : req.body,
              signal: controller.signal,
              dispatcher: this.dispatcher,
              headersTimeout: this.timeoutMs,
              bodyTimeout: this.timeoutMs,
            });
            span?.setAttribute('http.response.status_code', answer.statusCode);
            if (answer.statusCode >= 400) failSpan(span, `HTTP ${answer.statusCode}`);
            return answer;
          },
        );
      } catch (thrown) {
        const error = controller.signal.aborted ? new AttemptTimeout() : thrown;
        if (isUnsendable(error)) throw this.unsendable();
        if (!isNetworkFailure(error)) throw error;
        const reason = this.failureReason(error, secrets);
        const delay =
          isConnectionRefused(error) && retries + 1 < this.retry.maxAttempts
            ? backoffDelay(retries + 1, this.retry)
            : undefined;
        this.report(entry({ error: reason, ...(delay !== undefined && { retryInMs: delay }) }));
        if (delay === undefined) throw this.unreachable(req, logUrl, reason);
        retries++;
        await sleep(delay);
        continue;
      } finally {
        // Only the wait for the answer's headers is bounded here; its body has `bodyTimeout` between chunks.
        clearTimeout(timer);
      }
      const status = response.statusCode;
      const flat = flattenHeaders(response.headers);
      if (status === 401 && !refreshed) {
        this.report(entry({ status, error: 'unauthorized; refreshing credentials' }));
        await response.body.dump();
        refreshed = true;
        material = await this.target.auth({ forceRefresh: true });
        continue;
      }
      if (status === 429 && retries + 1 < this.retry.maxAttempts) {
        const delay =
          parseRetryAfter(flat['retry-after']) ??
          this.options.rateLimitWait?.(flat) ??
          backoffDelay(retries + 1, this.retry);
        if (delay <= this.retry.maxRetryAfterMs) {
          this.report(entry({ status, error: `HTTP ${status}`, retryInMs: delay }));
          await response.body.dump();
          retries++;
          await sleep(delay);
          continue;
        }
      }
      this.report(entry({ status, ...(status >= 400 && { error: `HTTP ${status}` }) }));
      return { status, headers: flat, body: response.body };
    }
  }

  /** Why no answer came, fit for logs and errors: the provider's credentials scrubbed out. */
  private failureReason(error: unknown, secrets: string[]): string {
    return scrub(
      error instanceof AttemptTimeout
        ? `no answer within ${this.timeoutMs} ms`
        : ((error as Error)?.message ?? String(error)),
      secrets,
    );
  }

  private unreachable(req: ProviderHttpRequest, logUrl: string, reason: string): ProviderError {
    return new ProviderError(
      this.provider.name,
      `Provider "${this.provider.name}" could not be reached for ${req.method} ${pathOf(logUrl)}: ${reason}.`,
      { retryable: true, request: { method: req.method, url: logUrl } },
    );
  }

  /** Sends a request and returns the 2xx answer; any other status becomes a `ProviderError`. */
  async json<T = unknown>(req: ProviderHttpRequest): Promise<ProviderHttpResponse<T>> {
    const response = await this.send(req);
    if (response.status >= 200 && response.status < 300) return response as ProviderHttpResponse<T>;
    throw this.errorFor(req, response);
  }

  /** The `ProviderError` describing a failed answer; connectors use it for statuses they inspect first. */
  errorFor(req: ProviderHttpRequest, response: ProviderHttpResponse): ProviderError {
    const { status } = response;
    const providerMessage = this.options.errorMessage?.(response.body) ?? providerErrorMessage(response.body);
    const details = status >= 400 ? this.options.errorDetails?.(response.body) : undefined;
    const retryAfterMs =
      parseRetryAfter(response.headers['retry-after']) ??
      (status === 429 ? this.options.rateLimitWait?.(response.headers) : undefined);
    const what =
      status === 401
        ? 'rejected the connection’s credentials'
        : status === 403
          ? `refused access to ${req.method} ${pathOf(req.path)}`
          : `answered ${status} to ${req.method} ${pathOf(req.path)}`;
    return new ProviderError(
      this.provider.name,
      `Provider "${this.provider.name}" ${what}${providerMessage ? `: ${providerMessage}` : '.'}`,
      {
        status,
        retryable: status === 429 || status === 408 || status >= 500,
        ...(retryAfterMs !== undefined && { retryAfterSeconds: Math.ceil(retryAfterMs / 1000) }),
        providerMessage,
        ...(details !== undefined && { details }),
        request: { method: req.method, url: pathOf(req.path) },
      },
    );
  }

  private report(entry: RequestLogEntry): void {
    try {
      this.options.onRequest?.(entry);
    } catch {
      // a failing logger must not fail the provider call
    }
  }

  /**
   * What a provider call's span says (tracing on): provider, method, host and the path with any
   * credential scrubbed out; never the query string, a header or a body.
   */
  private spanAttributes(req: ProviderHttpRequest, url: URL, logUrl: string, attempt: number) {
    return {
      'ferry.provider': this.provider.name,
      'http.request.method': req.method,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      'url.path': pathOf(logUrl),
      ...(attempt > 1 && { 'http.request.resend_count': attempt - 1 }),
    };
  }

  private attempt(
    req: ProviderHttpRequest,
    url: URL,
    headers: Record<string, string>,
    spanAttributes: () => ReturnType<ProviderHttpClient['spanAttributes']>,
  ): Promise<ProviderHttpResponse> {
    return inClientSpan(`${req.method} ${this.provider.name}`, spanAttributes, async (span) => {
      const response = await this.attemptOnce(req, url, headers);
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 400) failSpan(span, `HTTP ${response.status}`);
      return response;
    });
  }

  private async attemptOnce(
    req: ProviderHttpRequest,
    url: URL,
    headers: Record<string, string>,
  ): Promise<ProviderHttpResponse> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeout()), this.timeoutMs);
    try {
      const body = req.json !== undefined ? JSON.stringify(req.json) : req.body;
      const response = await request(url, {
        method: req.method,
        headers,
        body,
        signal: controller.signal,
        dispatcher: this.dispatcher,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      const rawBody = Buffer.from(await response.body.arrayBuffer());
      const flat = flattenHeaders(response.headers);
      return {
        status: response.statusCode,
        headers: flat,
        body: parseBody(rawBody, flat['content-type']),
        rawBody,
      };
    } catch (error) {
      if (controller.signal.aborted) throw new AttemptTimeout();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** URL and headers of one attempt, with credentials attached; `secrets` lists what logs must never show. */
  private prepare(
    req: ProviderHttpRequest,
    material: AuthMaterial,
  ): { url: URL; headers: Record<string, string>; secrets: string[] } {
    const url = /^https?:\/\//i.test(req.path)
      ? new URL(req.path)
      : new URL(`${this.baseUrl()}${req.path === '' || req.path.startsWith('/') ? '' : '/'}${req.path}`);
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) url.searchParams.append(name, item);
      else url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json', ...lowerKeys(req.headers ?? {}) };
    if (req.json !== undefined) headers['content-type'] = 'application/json';
    const secrets = applyAuth(this.provider, material, this.templateVars, url, headers);
    return { url, headers, secrets };
  }
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/**
 * The Basic username a method sends: the given one in the method's `usernameFormat` (Zendesk's
 * `%s/token`), unless it is already in that form.
 */
export function formatBasicUsername(username: string, format: string | undefined): string {
  if (!format) return username;
  const [prefix, suffix] = format.split('%s');
  const formatted = username.startsWith(prefix) && username.endsWith(suffix);
  return formatted && username.length >= prefix.length + suffix.length
    ? username
    : format.replace('%s', username);
}

/**
 * Attaches credentials as the catalog describes the method that presents them (the main method, or
 * the alternative that takes this kind of credential); returns the secret strings it used.
 */
function applyAuth(
  provider: Provider,
  material: AuthMaterial,
  templateVars: Record<string, string>,
  url: URL,
  headers: Record<string, string>,
): string[] {
  const method = authMethodPresenting(provider, material.type);
  const secrets: string[] = [];
  switch (material.type) {
    case 'oauth2':
      // A provider that takes the token in a header of its own (Shopify's X-Shopify-Access-Token) gets no Bearer.
      if (!method.customOpts?.headers?.some((header) => header.valueTemplate.includes('{{.accessToken}}')))
        headers.authorization = `Bearer ${material.accessToken}`;
      secrets.push(material.accessToken);
      break;
    case 'basic': {
      const username = formatBasicUsername(material.username, method.basicOpts?.usernameFormat);
      headers.authorization = basic(username, material.password);
      secrets.push(material.password, headers.authorization.slice('Basic '.length));
      break;
    }
    case 'apiKey': {
      secrets.push(material.apiKey);
      const keyOpts = method.apiKeyOpts;
      const asBasic = method.basicOpts?.apiKeyAsBasic ? method.basicOpts.apiKeyAsBasicOpts : undefined;
      if (keyOpts?.attachmentType === 'header' && keyOpts.header) {
        headers[keyOpts.header.name.toLowerCase()] = `${keyOpts.header.valuePrefix ?? ''}${material.apiKey}`;
      } else if (keyOpts?.attachmentType === 'query' && keyOpts.query) {
        url.searchParams.set(keyOpts.query.name, material.apiKey);
      } else if (method.basicOpts?.apiKeyAsBasic) {
        const value = (asBasic?.keyFormat ?? '%s').replace('%s', material.apiKey);
        headers.authorization = asBasic?.fieldUsed === 'password' ? basic('', value) : basic(value, '');
        secrets.push(headers.authorization.slice('Basic '.length));
      } else {
        throw new ConnectionSetupError(
          `Provider "${provider.name}" does not say where an API key goes; the connection cannot be used.`,
          provider.name,
        );
      }
      break;
    }
    case 'custom':
      secrets.push(...Object.values(material.values));
      break;
    case 'none':
      break;
  }
  const vars =
    material.type === 'apiKey'
      ? { ...templateVars, apiKey: material.apiKey }
      : material.type === 'oauth2'
        ? { ...templateVars, accessToken: material.accessToken }
        : material.type === 'custom'
          ? { ...templateVars, ...material.values }
          : templateVars;
  // Only the presenting method's own headers: Shopify's OAuth token header is not an API token's.
  for (const header of method.customOpts?.headers ?? []) {
    const value = renderProviderTemplate(header.valueTemplate, vars);
    headers[header.name.toLowerCase()] = value;
    secrets.push(value);
  }
  for (const param of method.customOpts?.queryParams ?? []) {
    const value = renderProviderTemplate(param.valueTemplate, vars);
    url.searchParams.set(param.name, value);
    secrets.push(value);
  }
  return secrets.filter((secret) => secret.length >= 4);
}

function scrub(text: string, secrets: string[]): string {
  let result = text;
  for (const secret of secrets) {
    result = result.split(secret).join(REDACTED);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) result = result.split(encoded).join(REDACTED);
  }
  return result;
}

/** The URL as logs may show it: no user info, no credential-like query values, no known secret anywhere. */
export function redactUrl(url: URL, secrets: string[] = []): string {
  const copy = new URL(url.toString());
  if (copy.username || copy.password) {
    copy.username = '';
    copy.password = '';
  }
  for (const name of [...new Set(copy.searchParams.keys())]) {
    if (secretQueryNames.has(name.toLowerCase())) copy.searchParams.set(name, REDACTED);
  }
  return scrub(copy.toString(), secrets).replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split('?')[0];
  }
}
