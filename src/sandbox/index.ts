import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { demoApiKey } from './api-auth.js';
import { createSandboxApp } from './app.js';
import type { SandboxContext } from './context.js';
import { IdempotentCreates } from './idempotency.js';
import { resetSandbox, type ResetOptions } from './control.js';
import { CursorCodec } from './cursor.js';
import { Generator, type GeneratedCounts } from './data.js';
import { FaultController } from './faults.js';
import { ObjectSchemas } from './schema.js';
import { RecordStore, type StampRealism } from './store.js';
import { startOfUtcDay } from './timeline.js';
import { OAuthStore, type OAuthClient } from './tokens.js';
import { WebhookDispatcher } from './webhooks.js';

export { verifySandboxSignature, signSandboxPayload, sandboxSignatureHeader } from './signature.js';
export { demoApiKey } from './api-auth.js';
export { allScopes, devClient } from './tokens.js';
export { idOf } from './data.js';
export type { FaultController, FaultPatch, FaultSettings, RateLimit, SandboxStats } from './faults.js';
export type { ObjectName } from './schema.js';
export type { StampRealism } from './store.js';
export type { WebhookEvent } from './webhooks.js';

export interface SandboxOptions {
  /** 0 picks a free port. Default 8090. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Generated records per object. Defaults 1,000,000 contacts, 10,000 companies, 50,000 deals. */
  contacts?: number;
  companies?: number;
  deals?: number;
  /** Seed of the generated data, the cursor MAC key and the fault PRNG. Default 42. */
  seed?: number;
  /** Consent is given at once: GET /oauth/authorize redirects with a code. */
  autoApprove?: boolean;
  /** Default 3600. */
  accessTokenTtlSeconds?: number;
  /** Base URL clients use, when not the listening address (e.g. behind a proxy). */
  publicUrl?: string;
  /** Generated updatedAt values end just before this instant. Default: midnight UTC today. */
  anchor?: string | Date;
  /** API keys accepted besides `sandbox-demo-key`. */
  apiKeys?: string[];
  /** Waits before each webhook redelivery; its length is the retry count. Default [500, 2000]. */
  webhookRetryDelaysMs?: number[];
  /** Called with unexpected errors (answered as 500). Default: one line on stderr. */
  onError?: (error: unknown) => void;
  /**
   * Stamps API writes in whole seconds, and lists each up to `commitLagMs` after its stamp, as real
   * providers do (see `StampRealism`). Default: milliseconds, listed at once.
   */
  realism?: Partial<StampRealism>;
}

export interface Sandbox {
  url: string;
  port: number;
  faults: FaultController;
  /** Generated record counts per object. */
  counts: GeneratedCounts;
  /** ISO instant all generated updatedAt values precede; API writes are stamped at or after it. */
  anchor: string;
  /** Registers an OAuth client (as POST /oauth/clients does); ids and secrets may be chosen. */
  registerClient(input?: {
    name?: string;
    redirectUris?: string[];
    clientId?: string;
    clientSecret?: string;
  }): OAuthClient;
  addApiKey(key: string): void;
  /** Faults back to the options and counters zeroed; `data: true` also drops API changes, custom fields and webhooks. */
  reset(options?: ResetOptions): void;
  close(): Promise<void>;
}

function count(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback;
  if (!Number.isSafeInteger(result) || result < 0) {
    throw new RangeError(`${name} must be a non-negative integer.`);
  }
  return result;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The longest a write may take to show in listings (`realism.commitLagMs`), as the declaration says. */
export const MAX_COMMIT_LAG_MS = 2000;

/** Starts the sandbox CRM provider on its own HTTP server. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const seed = opts.seed ?? 42;
  const counts: GeneratedCounts = {
    contacts: count(opts.contacts, 1_000_000, 'contacts'),
    companies: count(opts.companies, 10_000, 'companies'),
    deals: count(opts.deals, 50_000, 'deals'),
  };
  const anchorMs = opts.anchor === undefined ? startOfUtcDay(Date.now()) : new Date(opts.anchor).getTime();
  if (Number.isNaN(anchorMs)) throw new RangeError('anchor must be a valid date.');
  const generator = new Generator(seed, counts, anchorMs);
  const schemas = new ObjectSchemas();
  // The TTL is read at issue time, after faults exists; it can change at run time.
  const oauth = new OAuthStore(() => faults.settings.accessTokenTtlSeconds);
  const faults = new FaultController(
    {
      errorRate: 0,
      latencyMs: 0,
      writeAnswerDelayMs: 0,
      rateLimit: null,
      autoApprove: opts.autoApprove ?? false,
      failTokenEndpoint: false,
      accessTokenTtlSeconds: opts.accessTokenTtlSeconds ?? 3600,
    },
    seed,
    { revokeAllTokens: () => oauth.revokeAll(), expireAccessTokens: () => oauth.expireAccessTokens() },
  );
  let publicUrl = opts.publicUrl?.replace(/\/+$/, '') ?? '';
  const context: SandboxContext = {
    generator,
    schemas,
    store: new RecordStore(generator, schemas, {
      precision: opts.realism?.precision ?? 'millisecond',
      // What the sandbox's declaration states as its lag: a commit never shows later than this.
      commitLagMs: Math.min(opts.realism?.commitLagMs ?? 0, MAX_COMMIT_LAG_MS),
    }),
    idempotentCreates: new IdempotentCreates(),
    cursors: new CursorCodec(seed),
    oauth,
    faults,
    webhooks: new WebhookDispatcher(faults.stats, opts.webhookRetryDelaysMs ?? [500, 2000]),
    apiKeys: new Set([demoApiKey, ...(opts.apiKeys ?? [])]),
    publicUrl: () => publicUrl,
    reportError:
      opts.onError ??
      ((error) =>
        process.stderr.write(`sandbox: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`)),
  };

  const server = createServer(createSandboxApp(context).callback());
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8090, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  publicUrl ||= `http://${urlHost(host)}:${port}`;

  return {
    url: publicUrl,
    port,
    faults,
    counts,
    anchor: new Date(anchorMs).toISOString(),
    registerClient: (input) => oauth.registerClient(input),
    addApiKey: (key) => void context.apiKeys.add(key),
    reset: (options) => resetSandbox(context, options),
    async close() {
      await context.webhooks.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // keep-alive sockets would hold close() open
      });
    },
  };
}
