import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Context, type Middleware } from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { ConformanceFake } from './conformance.js';

/**
 * What every provider's local test server shares: a Koa app on a free loopback port, a request log,
 * accepted credentials that a test can rotate (so a stale one gets the provider's 401), failures
 * queued for the next requests (429 with the provider's rate-limit headers, 5xx), and errors
 * rendered in the provider's own body shape. Each provider's fake adds its routes and its records,
 * written from that provider's public API reference.
 */

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /**
   * Set by the fake on a request that lists records: the page size it asked for, read from the
   * provider's own parameter (the provider's default when it named none), and the most that
   * endpoint's reference allows. The suite checks that reads ask for the most.
   */
  listing?: { object: string; pageSize: number; maxPageSize: number };
  /** The status the fake answered with. */
  status?: number;
  /** The answer was a failure the test queued (`failNext`), not the provider's own. */
  injected?: boolean;
}

/** Thrown by a fake's routes: answered with the provider's error body. */
export class FakeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface FakeProviderOptions {
  /** The credential a request carries (token, key...), or undefined when it carries none. */
  credentialOf(ctx: Context): string | undefined;
  /** The provider's error body. */
  errorBody(error: FakeHttpError): unknown;
  /** Headers on a rate-limited answer, beside any the test asked for. */
  rateLimitHeaders?(): Record<string, string>;
  /** The provider's code of a rate-limited answer (used by `errorBody`). */
  rateLimitCode?: string;
  /** Path prefix of the provider's API (`/api/v2`); `url` includes it. */
  prefix?: string;
}

export class FakeProvider {
  url = '';
  readonly requests: LoggedRequest[] = [];
  readonly router: Router;
  #logged = new WeakMap<Context, LoggedRequest>();
  #credential = 'valid-credential-1';
  #generation = 1;
  #failures: { status: number; headers: Record<string, string> }[] = [];
  #server?: Server;
  #refreshRefused = false;
  /** The URL of the OAuth token endpoint (refresh grant), for OAuth providers. */
  tokenUrl?: string;

  constructor(private readonly options: FakeProviderOptions) {
    this.router = new Router(options.prefix ? { prefix: options.prefix } : undefined);
  }

  /** The provider's clock (see `ConformanceFake.setClock`). */
  now: () => number = Date.now;

  setClock(now: () => number): void {
    this.now = now;
  }

  /** Marks the request being served as a listing (see `LoggedRequest.listing`). */
  logListing(ctx: Context, listing: NonNullable<LoggedRequest['listing']>): void {
    const logged = this.#logged.get(ctx);
    if (logged) logged.listing = listing;
  }

  /** The credential the provider accepts now. */
  get credential(): string {
    return this.#credential;
  }

  /** Makes the current credential stale (a revoked or expired token) and returns the new one. */
  rotateCredential(): string {
    this.#generation += 1;
    this.#credential = `valid-credential-${this.#generation}`;
    return this.#credential;
  }

  /** From now on the token endpoint refuses refresh tokens (`invalid_grant`): the grant was revoked. */
  refuseRefresh(): void {
    this.#refreshRefused = true;
  }

  /** The next `count` requests answer `status` instead (a 429 with the provider's rate-limit headers). */
  failNext(count: number, status: number, headers: Record<string, string> = {}): void {
    for (let index = 0; index < count; index++) this.#failures.push({ status, headers });
  }

  async start(): Promise<this> {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx, next) => {
      try {
        await next();
        if (ctx.status === 404 && ctx.body === undefined)
          throw new FakeHttpError(404, `No route for ${ctx.method} ${ctx.path}`);
      } catch (error) {
        const failure = error instanceof FakeHttpError ? error : new FakeHttpError(500, 'internal error');
        if (!(error instanceof FakeHttpError)) console.error(error);
        ctx.status = failure.status;
        for (const [name, value] of Object.entries(failure.headers)) ctx.set(name, value);
        ctx.body = this.options.errorBody(failure);
      }
      const logged = this.#logged.get(ctx);
      if (logged) logged.status = ctx.status;
    });
    // DELETE too: some providers take a body there (Jira's `DELETE /rest/api/3/webhook` {webhookIds}).
    app.use(bodyParser({ enableTypes: ['json', 'form'], parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] }));
    // RFC 6749 refresh: a new access token, or invalid_grant once the grant is revoked.
    app.use(async (ctx, next) => {
      if (ctx.method !== 'POST' || ctx.path !== '/oauth/token') return next();
      const body = (ctx.request.body ?? {}) as Record<string, string>;
      // Client credentials (section 4.4): a new access token, or invalid_client once the app is revoked.
      if (body.grant_type === 'client_credentials') {
        if (this.#refreshRefused) {
          ctx.status = 401;
          ctx.body = { error: 'invalid_client', error_description: 'The client credentials are invalid.' };
          return;
        }
        ctx.body = { access_token: this.rotateCredential(), token_type: 'bearer', expires_in: 7200 };
        return;
      }
      // Password grant (section 4.3, SugarCRM): the user's own login buys a token and a refresh token.
      if (body.grant_type === 'password') {
        if (!body.username || !body.password || this.#refreshRefused) {
          ctx.status = 400;
          ctx.body = { error: 'invalid_grant', error_description: 'The user name or password is wrong.' };
          return;
        }
        ctx.body = {
          access_token: this.rotateCredential(),
          token_type: 'bearer',
          expires_in: 3600,
          refresh_token: 'refresh-token-1',
        };
        return;
      }
      if (body.grant_type !== 'refresh_token' || !body.refresh_token || this.#refreshRefused) {
        ctx.status = 400;
        ctx.body = { error: 'invalid_grant', error_description: 'The refresh token is invalid or revoked.' };
        return;
      }
      ctx.body = { access_token: this.rotateCredential(), token_type: 'bearer', expires_in: 3600 };
    });
    app.use(async (ctx, next) => {
      const logged: LoggedRequest = {
        method: ctx.method,
        path: ctx.path,
        query: { ...ctx.query },
        headers: { ...ctx.headers },
        body: ctx.request.body,
      };
      this.requests.push(logged);
      this.#logged.set(ctx, logged);
      const failure = this.#failures.shift();
      if (failure) {
        logged.injected = true;
        const rateLimited = failure.status === 429;
        throw new FakeHttpError(
          failure.status,
          rateLimited ? 'Rate limit exceeded' : 'The service is unavailable',
          rateLimited ? this.options.rateLimitCode : undefined,
          { ...(rateLimited ? this.options.rateLimitHeaders?.() : {}), ...failure.headers },
        );
      }
      if (this.options.credentialOf(ctx) !== this.#credential) {
        throw new FakeHttpError(401, 'The credentials are missing, expired or revoked', 'unauthorized');
      }
      await next();
    });
    app.use(this.router.routes());
    app.use(this.router.allowedMethods());
    this.#server = createServer(app.callback());
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}${this.options.prefix ?? ''}`;
    this.tokenUrl = `http://127.0.0.1:${port}/oauth/token`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * A provider's request budget over a sliding window (Gong's 3 a second, QuickBooks' 500 a minute),
 * counted on real time, since it limits how fast a client may ask whatever the provider's clock
 * says. `countsRefused`: whether a refused request still spends budget (most providers count every
 * request they answer; some count only those they served).
 */
export class RequestWindow {
  readonly #times: number[] = [];

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly countsRefused = true,
  ) {}

  /** Takes one request at `at`: whether it is within the budget, how much is spent, and when room returns. */
  take(at = Date.now()): { allowed: boolean; used: number; resetMs: number; retryAfterSeconds: number } {
    while (this.#times.length && this.#times[0] <= at - this.windowMs) this.#times.shift();
    const allowed = this.#times.length < this.limit;
    if (allowed || this.countsRefused) this.#times.push(at);
    const resetMs = (this.#times[0] ?? at) + this.windowMs;
    return {
      allowed,
      used: this.#times.length,
      resetMs,
      retryAfterSeconds: Math.max(1, Math.ceil((resetMs - at) / 1000)),
    };
  }

  /**
   * Middleware that refuses a request past the budget with what `refusal` makes of the
   * `Retry-After` header (the seconds until room returns): the provider's own 429.
   */
  refusing(refusal: (headers: { 'Retry-After': string }) => Error): Middleware {
    return async (_ctx, next) => {
      const taken = this.take();
      if (!taken.allowed) throw refusal({ 'Retry-After': String(taken.retryAfterSeconds) });
      await next();
    };
  }
}

/** What only a provider's own fake knows: how it seeds, edits, deletes and stores records. */
export type FakeRecords = Pick<ConformanceFake, 'seed' | 'touch' | 'remove' | 'stored'>;

/**
 * A started fake as the conformance suite drives it: the provider's record handling joined to the
 * shared server's URL, credentials, clock, request log and queued failures, so no fake repeats them.
 */
export function asConformanceFake(fake: FakeProvider, records: FakeRecords): ConformanceFake {
  return {
    get url() {
      return fake.url;
    },
    get tokenUrl() {
      return fake.tokenUrl;
    },
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
    seed: (object, times) => records.seed(object, times),
    touch: (object, id, modifiedMs, options) => records.touch(object, id, modifiedMs, options),
    remove: (object, id, atMs) => records.remove(object, id, atMs),
    stored: (object, id) => records.stored(object, id),
  };
}

/** `Authorization: Bearer <token>` → the token. */
export function bearerCredential(ctx: Context): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'))?.[1];
}

/** `Authorization: Basic base64(user:password)` → `user` (an API key sent as the Basic user name). */
export function basicUserCredential(ctx: Context): string | undefined {
  const encoded = /^Basic\s+(.+)$/i.exec(ctx.get('authorization'))?.[1];
  return encoded ? Buffer.from(encoded, 'base64').toString('utf8').split(':')[0] : undefined;
}

/** A record kept by a fake: the provider-shaped record, its modification time and when listings show it. */
export interface StoredRecord<T> {
  record: T;
  modifiedMs: number;
  /** Listings show this version from then on (a late commit, a lagging index); default `modifiedMs`. */
  visibleFromMs?: number;
  deleted?: boolean;
  /** When it was deleted, for providers that list deletions. */
  deletedMs?: number;
}

/**
 * A fake's records of one object, in insertion (id) order. Providers differ in shape, so the store
 * holds each record as the provider returns it and leaves formatting to the fake. Deleted records
 * stay (with `deleted`), for fakes whose provider lists them.
 */
export class RecordStore<T extends object> {
  readonly rows = new Map<string, StoredRecord<T>>();
  #nextId = 1;

  nextId(): number {
    return this.#nextId++;
  }

  put(id: string, record: T, modifiedMs: number, visibleFromMs?: number): T {
    this.rows.set(id, { record, modifiedMs, ...(visibleFromMs !== undefined && { visibleFromMs }) });
    return record;
  }

  get(id: string): StoredRecord<T> | undefined {
    const row = this.rows.get(id);
    return row && !row.deleted ? row : undefined;
  }

  /** Marks the record deleted at `atMs`; listings of deletions still find it. */
  remove(id: string, atMs: number): StoredRecord<T> | undefined {
    const row = this.rows.get(id);
    if (!row || row.deleted) return undefined;
    Object.assign(row, { deleted: true, deletedMs: atMs, modifiedMs: atMs, visibleFromMs: undefined });
    return row;
  }

  /** Live records, oldest id first. */
  live(): StoredRecord<T>[] {
    return [...this.rows.values()].filter((row) => !row.deleted);
  }

  /** Deleted records, oldest id first. */
  removed(): StoredRecord<T>[] {
    return [...this.rows.values()].filter((row) => row.deleted);
  }

  /**
   * Live records modified in [since, until), oldest modification first (ties by id). With `now`,
   * only versions visible by then (see `visibleFromMs`).
   */
  modifiedBetween(since: number | undefined, until: number | undefined, now?: number): StoredRecord<T>[] {
    return this.live()
      .filter(
        (row) =>
          (since === undefined || row.modifiedMs >= since) &&
          (until === undefined || row.modifiedMs < until) &&
          (now === undefined || (row.visibleFromMs ?? row.modifiedMs) <= now),
      )
      .sort((a, b) => a.modifiedMs - b.modifiedMs);
  }
}
