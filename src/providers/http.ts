import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { config } from '../config.js';
import { parseRetryAfter } from '../delivery/deliver.js';
import { guardedDispatcher } from '../delivery/url-guard.js';
import type { AuthMaterial, ConnectionTarget } from './auth-material.js';
import { applyAuth } from './http-credentials.js';
import { redactUrl, scrub } from './http-redaction.js';
import {
  AttemptTimeout,
  flattenHeaders,
  isConnectionRefused,
  isNetworkFailure,
  isUnsendable,
  parseBody,
  providerErrorMessage,
} from './http-answers.js';
import type {
  HttpMethod,
  ProviderHttpOptions,
  ProviderHttpRequest,
  ProviderHttpResponse,
  ProviderHttpStream,
  RequestLogEntry,
  RetryPolicy,
} from './http-types.js';
import { renderProviderTemplate, SANDBOX_URL_VARIABLE, sandboxUrl, type Provider } from './catalog/index.js';
import { ConnectionSetupError, ProviderError } from './errors.js';
import { failSpan, inClientSpan } from '../tracing.js';

export { formatBasicUsername } from './http-credentials.js';
export { redactUrl } from './http-redaction.js';
export { providerErrorMessage } from './http-answers.js';
export type * from './http-types.js';

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

const defaultRetry: Required<RetryPolicy> = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 30_000,
};

const idempotentMethods = new Set<HttpMethod>(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

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
      this.templateVars[SANDBOX_URL_VARIABLE] = sandboxUrl();
    }
  }

  /** Retrying cannot help, nor can the provider: the connection's values must change. */
  private unsendable(): ConnectionSetupError {
    return new ConnectionSetupError(
      `A request to "${this.provider.name}" cannot be built from this connection: a credential or header value holds characters HTTP headers cannot carry. Update the connection's credentials.`,
      this.provider.name,
    );
  }

  /**
   * The provider's base URL for this connection, without a trailing slash; a module's (its other
   * host) when named. A base URL given in the options (a local fake) stands in for every module.
   */
  baseUrl(module?: string): string {
    const moduleBase = module === undefined ? undefined : this.provider.modules?.[module]?.baseURL;
    if (module !== undefined && moduleBase === undefined)
      throw new Error(`Provider "${this.provider.name}" has no module "${module}" in Ferry's catalog.`);
    const template = this.options.baseUrl ?? moduleBase ?? this.provider.baseURL;
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
      : new URL(
          `${this.baseUrl(req.module)}${req.path === '' || req.path.startsWith('/') ? '' : '/'}${req.path}`,
        );
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) url.searchParams.append(name, item);
      else url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json', ...lowerKeys(req.headers ?? {}) };
    // A JSON body is sent as JSON unless the declaration names a JSON media type of its own
    // (JSON:API's `application/vnd.api+json`, which Outreach requires).
    if (req.json !== undefined && !/json/i.test(headers['content-type'] ?? ''))
      headers['content-type'] = 'application/json';
    const secrets = applyAuth(this.provider, material, this.templateVars, url, headers);
    return { url, headers, secrets };
  }
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split('?')[0];
  }
}
