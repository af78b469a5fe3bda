import type { Context, Next } from 'koa';
import { apiError, validationError } from './errors.js';
import { prng, saltOf } from './random.js';

export interface RateLimit {
  requests: number;
  perSeconds: number;
}

/** Runtime switches; each test sets what it needs and resets afterwards. */
export interface FaultSettings {
  /** Share of /api requests answered with an injected 500, 0..1. */
  errorRate: number;
  /** Delay added before every request except /_control. */
  latencyMs: number;
  /**
   * Delay between applying an /api create, update or delete and answering it: the write is done, the
   * client has not heard (a client that dies meanwhile never learns of it).
   */
  writeAnswerDelayMs: number;
  /** Fixed-window limit on /api requests; over it the answer is 429 with Retry-After. */
  rateLimit: RateLimit | null;
  /** Skip the consent page: GET /oauth/authorize redirects with a code at once. */
  autoApprove: boolean;
  /** POST /oauth/token answers 503 temporarily_unavailable. */
  failTokenEndpoint: boolean;
  /** Lifetime of access tokens issued from now on. */
  accessTokenTtlSeconds: number;
}

/** The body of POST /_control/faults: settings to change plus one-shot actions. */
export interface FaultPatch extends Partial<FaultSettings> {
  /** Revoke every access and refresh token (as if the user disconnected the app). */
  revokeAllTokens?: boolean;
  /** Make every current access token expired; refresh tokens keep working. */
  expireAccessTokens?: boolean;
}

export interface SandboxStats {
  /** Every request except /_control ones. */
  requestsServed: number;
  apiRequests: number;
  rateLimited: number;
  injectedErrors: number;
  authorizationCodesIssued: number;
  /** Access tokens issued by any grant, refreshes included. */
  tokensIssued: number;
  tokensRefreshed: number;
  tokensRevoked: number;
  webhooksDelivered: number;
  webhookDeliveryFailures: number;
}

export interface FaultHooks {
  revokeAllTokens(): void;
  expireAccessTokens(): void;
}

function zeroStats(): SandboxStats {
  return {
    requestsServed: 0,
    apiRequests: 0,
    rateLimited: 0,
    injectedErrors: 0,
    authorizationCodesIssued: 0,
    tokensIssued: 0,
    tokensRefreshed: 0,
    tokensRevoked: 0,
    webhooksDelivered: 0,
    webhookDeliveryFailures: 0,
  };
}

const patchKeys = new Set([
  'errorRate',
  'latencyMs',
  'writeAnswerDelayMs',
  'rateLimit',
  'autoApprove',
  'failTokenEndpoint',
  'accessTokenTtlSeconds',
  'revokeAllTokens',
  'expireAccessTokens',
]);

function isPositive(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/**
 * Fault injection and counters, switchable per test (in process or via /_control). Injected errors
 * come from a PRNG seeded by the sandbox seed and reseeded whenever errorRate is set, so a test
 * sees the same sequence of failures on every run.
 */
export class FaultController {
  readonly stats: SandboxStats = zeroStats();
  private current: FaultSettings;
  private random: () => number;
  private window: { startMs: number; count: number } | undefined;

  constructor(
    private readonly defaults: FaultSettings,
    private readonly seed: number,
    private readonly hooks: FaultHooks,
  ) {
    this.current = { ...defaults };
    this.random = this.newRandom();
  }

  get settings(): Readonly<FaultSettings> {
    return { ...this.current, rateLimit: this.current.rateLimit && { ...this.current.rateLimit } };
  }

  /** Validates the whole patch before changing anything; throws a 400 validation error otherwise. */
  set(patch: FaultPatch): FaultSettings {
    this.validate(patch);
    const { revokeAllTokens, expireAccessTokens, ...settings } = patch;
    Object.assign(this.current, settings);
    if (settings.errorRate !== undefined) this.random = this.newRandom();
    if (settings.rateLimit !== undefined) this.window = undefined;
    if (revokeAllTokens) this.revokeAllTokens();
    if (expireAccessTokens) this.hooks.expireAccessTokens();
    return this.settings;
  }

  /** Back to the start-up settings, with counters at zero. */
  reset(): void {
    this.current = { ...this.defaults };
    this.random = this.newRandom();
    this.window = undefined;
    Object.assign(this.stats, zeroStats());
  }

  revokeAllTokens(): void {
    this.hooks.revokeAllTokens();
  }

  shouldInjectError(): boolean {
    return this.current.errorRate > 0 && this.random() < this.current.errorRate;
  }

  /** Counts one request against the fixed window; tells when the window reopens if it is full. */
  takeRateLimit(nowMs: number): { allowed: boolean; remaining: number; resetSeconds: number } | undefined {
    const limit = this.current.rateLimit;
    if (!limit) return undefined;
    const windowMs = limit.perSeconds * 1000;
    if (!this.window || nowMs - this.window.startMs >= windowMs) this.window = { startMs: nowMs, count: 0 };
    const resetSeconds = Math.max(1, Math.ceil((this.window.startMs + windowMs - nowMs) / 1000));
    if (this.window.count >= limit.requests) return { allowed: false, remaining: 0, resetSeconds };
    this.window.count++;
    return { allowed: true, remaining: limit.requests - this.window.count, resetSeconds };
  }

  private newRandom(): () => number {
    return prng(this.seed ^ saltOf('faults'));
  }

  private validate(patch: FaultPatch): void {
    const problems: { name: string; message: string }[] = [];
    if (!patch || typeof patch !== 'object' || Array.isArray(patch)) {
      throw validationError('Faults must be a JSON object.');
    }
    for (const key of Object.keys(patch)) {
      if (!patchKeys.has(key)) problems.push({ name: key, message: 'Unknown fault setting.' });
    }
    const { errorRate, latencyMs, writeAnswerDelayMs, rateLimit, accessTokenTtlSeconds } = patch;
    if (errorRate !== undefined && !(typeof errorRate === 'number' && errorRate >= 0 && errorRate <= 1)) {
      problems.push({ name: 'errorRate', message: 'A number from 0 to 1.' });
    }
    if (
      latencyMs !== undefined &&
      !(typeof latencyMs === 'number' && latencyMs >= 0 && latencyMs <= 60_000)
    ) {
      problems.push({ name: 'latencyMs', message: 'A number of milliseconds from 0 to 60000.' });
    }
    if (
      writeAnswerDelayMs !== undefined &&
      !(typeof writeAnswerDelayMs === 'number' && writeAnswerDelayMs >= 0 && writeAnswerDelayMs <= 60_000)
    ) {
      problems.push({ name: 'writeAnswerDelayMs', message: 'A number of milliseconds from 0 to 60000.' });
    }
    if (
      rateLimit !== undefined &&
      rateLimit !== null &&
      !(
        Number.isInteger(rateLimit?.requests) &&
        isPositive(rateLimit?.requests) &&
        isPositive(rateLimit?.perSeconds)
      )
    ) {
      problems.push({
        name: 'rateLimit',
        message: 'null or {requests: positive integer, perSeconds: positive number}.',
      });
    }
    if (accessTokenTtlSeconds !== undefined && !isPositive(accessTokenTtlSeconds)) {
      problems.push({ name: 'accessTokenTtlSeconds', message: 'A positive number of seconds.' });
    }
    for (const key of [
      'autoApprove',
      'failTokenEndpoint',
      'revokeAllTokens',
      'expireAccessTokens',
    ] as const) {
      if (patch[key] !== undefined && typeof patch[key] !== 'boolean') {
        problems.push({ name: key, message: 'true or false.' });
      }
    }
    if (problems.length) throw validationError('Invalid fault settings.', problems);
  }
}

const writeMethods = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/**
 * Adds the configured latency to every request but the control ones, and holds the answer of an API
 * write that was applied.
 */
export function latencyMiddleware(faults: FaultController) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const { latencyMs } = faults.settings;
    if (latencyMs > 0 && !ctx.path.startsWith('/_control')) {
      await new Promise((resolve) => setTimeout(resolve, latencyMs));
    }
    await next();
    const { writeAnswerDelayMs } = faults.settings;
    if (
      writeAnswerDelayMs > 0 &&
      ctx.path.startsWith('/api/') &&
      writeMethods.has(ctx.method) &&
      ctx.status < 300
    ) {
      await new Promise((resolve) => setTimeout(resolve, writeAnswerDelayMs));
    }
  };
}

/** Rate limit, then random errors, for /api requests: both before authentication, as at a gateway. */
export function apiFaultsMiddleware(faults: FaultController) {
  return async (ctx: Context, next: Next): Promise<void> => {
    faults.stats.apiRequests++;
    const limit = faults.settings.rateLimit;
    const window = faults.takeRateLimit(Date.now());
    if (limit && window) {
      ctx.set('X-RateLimit-Limit', String(limit.requests));
      ctx.set('X-RateLimit-Remaining', String(window.remaining));
      ctx.set('X-RateLimit-Reset', String(window.resetSeconds));
      if (!window.allowed) {
        faults.stats.rateLimited++;
        throw apiError(
          429,
          'rate_limited',
          `Rate limit of ${limit.requests} requests per ${limit.perSeconds} s exceeded.`,
          {},
          {
            'Retry-After': String(window.resetSeconds),
          },
        );
      }
    }
    if (faults.shouldInjectError()) {
      faults.stats.injectedErrors++;
      throw apiError(500, 'internal_error', 'Injected fault: the sandbox failed this request on purpose.');
    }
    await next();
  };
}
