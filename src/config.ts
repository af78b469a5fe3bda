import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CronError, nextFireTime } from './core/cron.js';
import { parseRetrySchedule } from './core/retry-schedule.js';
import { schemaIssues } from './core/validation.js';
import { ProviderOverridesSchema, type ProviderOverrides } from './schemas/provider.js';
import { isWorkConcern, WORK_CONCERNS, type WorkConcern } from './temporal/contracts/task-queues.js';

/** The repository root: `.data/` and `.tools/` live here in development. */
export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Every environment variable Ferry reads, typed and validated once at start.
 * The README's configuration table mirrors this list.
 */
export interface Config {
  env: 'development' | 'production' | 'test';
  databaseUrl: string;
  temporal: {
    address: string;
    namespace: string;
    /** The deployment's base task queue; each concern's queue is derived from it (`taskQueueOf`). */
    taskQueue: string;
    /** The concerns this process's worker serves (FERRY_WORKER_CONCERNS); every one unless told. */
    workerConcerns: readonly WorkConcern[];
    /** Workflows a worker keeps in memory between tasks (FERRY_WORKER_CACHED_WORKFLOWS); unset: the SDK's default, from the machine's memory. */
    maxCachedWorkflows?: number;
    /** A workflow bundle built ahead (`ferry bundle-workflows --out`, FERRY_WORKFLOW_BUNDLE); unset: built as the worker starts. */
    workflowBundlePath?: string;
  };
  ports: { api: number; read: number; write: number; search: number; proxy: number; mcp: number };
  /** The MCP listener's rules for AI agents (src/mcp): see `McpConfig`. */
  mcp: McpConfig;
  /**
   * Where `GET /metrics` is served, apart from the public listeners: by the api process
   * (FERRY_METRICS_PORT) and by the worker process (FERRY_WORKER_METRICS_PORT); null is off.
   */
  metricsPorts: { server: number | null; worker: number | null };
  /**
   * OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
   * names an OTLP/HTTP collector; OTEL_SDK_DISABLED=true keeps them off all the same. The exporter
   * reads the other standard OTEL_EXPORTER_OTLP_* variables (headers, timeout) itself.
   */
  tracing: TracingConfig;
  host: string;
  publicApiUrl: string;
  /** Where browsers reach the other hosts (the console's calls); unset: the api host's hostname with their port. */
  publicHostUrls: Partial<Record<'read' | 'write' | 'search', string>>;
  sandboxUrl: string;
  encryptionKey: Buffer;
  builderTokenSecret: Buffer;
  bodyLimitBytes: number;
  /** A request (headers and body) must arrive within this; a stalled one is answered 408. */
  requestTimeoutMs: number;
  corsOrigins: string[];
  logLevel: string;
  allowPrivateDestinations: boolean;
  delivery: {
    /** Delays before each attempt of a failed delivery, the first included (FERRY_DELIVERY_RETRY_SCHEDULE). */
    retryScheduleMs: readonly number[];
    timeoutMs: number;
    /** A destination failing without a success for this long is disabled. */
    disableAfterMs: number;
    /** How long a rotated-out signing secret keeps signing deliveries. */
    secretRotationGraceMs: number;
    /** Messages of one read on their way to its destination at once (FERRY_DELIVERY_CONCURRENCY). */
    concurrency: number;
  };
  /** Provider pages one read activity reads before handing back to its workflow (each page is checkpointed). */
  readPagesPerActivity: number;
  /** After this long a read activity fetches no more pages, delivers those it holds, and hands back. */
  readActivityMs: number;
  /**
   * The longest `Retry-After` a provider may ask for before a read gives up, saying so
   * (FERRY_PROVIDER_MAX_WAIT_SECONDS); shorter ones are waited for without a request in between.
   */
  providerMaxWaitMs: number;
  /**
   * Records per provider page of a read (FERRY_READ_PROVIDER_PAGE_SIZE); unset: the most each
   * provider allows. Records per delivered message are the read object's `delivery.pageSize`.
   */
  readProviderPageSize?: number;
  /**
   * Pages a scheduled read reads inline, as one activity of its installation's workflow, before it
   * hands the rest to a child workflow of its own (FERRY_READ_INLINE_PAGES; 0: always a child).
   */
  readInlinePages: number;
  minScheduleIntervalSeconds: number;
  /** Installations' fires spread over this window after each cron time (see ScheduleSpread). */
  scheduleSpreadSeconds: number;
  /** How long an org invite stays pending before it expires. */
  inviteTtlSeconds: number;
  /**
   * The longest a project JWT may be valid, from its `iat` (or now, without one) to its `exp`: for a
   * token minted for one group (a `groupRef` claim, handed to a browser) and for one that acts for
   * the whole project (FERRY_GROUP_JWT_MAX_LIFETIME_SECONDS, FERRY_PROJECT_JWT_MAX_LIFETIME_SECONDS).
   */
  projectJwtMaxLifetimeSeconds: { groupScoped: number; projectWide: number };
  repair: {
    /** How often each worker reconciles workflows with PostgreSQL and sweeps stuck operations. */
    intervalMs: number;
    /** An operation untouched this long is checked for a live run behind it. */
    stuckAfterMs: number;
  };
  /** Provider subscriptions that expire (Microsoft Graph, Jira's dynamic webhooks). */
  subscriptionRenewal: {
    /** How long before it expires a subscription is renewed (FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS). */
    leadMs: number;
    /** After a renewal failed for good, when it is tried again (FERRY_SUBSCRIPTION_RENEWAL_RETRY_SECONDS). */
    retryMs: number;
  };
  dataDir: string;
  /**
   * Check every handler's answer against the route's declared response schema, failing the request
   * (500) on a mismatch: on in tests, so a view that drifts from the OpenAPI document fails a test.
   */
  checkResponses: boolean;
  /** Where operators open the Temporal UI; operations link their runs there (FERRY_TEMPORAL_UI_URL). */
  temporalUiUrl: string;
  /** Provider endpoints this deployment uses instead of the catalog's (FERRY_PROVIDER_OVERRIDES[_FILE]). */
  providerOverrides: ProviderOverrides;
  retention: RetentionConfig;
}

/**
 * How long Ferry keeps what its runs leave behind (FERRY_RETENTION_*), in days, and when its cleanup
 * workflow runs. Rows still needed are kept past their window: see src/domain/retention.ts.
 */
export interface RetentionConfig {
  /** Operation log entries, counted from when they were written. */
  operationLogsDays: number;
  /** Delivery attempts of record pages, change events and schema messages. */
  deliveryAttemptsDays: number;
  /** Read checkpoints, counted from when their read ended. */
  readCheckpointsDays: number;
  /** Pages stored for `delivery.mode: onRequest` and not asked for, counted from when their read ended. */
  storedPagesDays: number;
  /** Notification events (and the attempts to deliver them), counted from when they were raised. */
  eventsDays: number;
  /** Change events providers sent: their bodies and the ids that make a redelivered event a no-op. */
  subscriptionEventsDays: number;
  /** Finished operations, counted from when they ended. */
  operationsDays: number;
  /** Closed workflow runs in Temporal: the namespace retention `ferry start` sets on its dev server. */
  temporalDays: number;
  /** Five-field cron (UTC) of the cleanup workflow's passes. */
  schedule: string;
  /** Rows one cleanup statement deletes at most: each is a short transaction of its own. */
  batchSize: number;
}

/** How agents reach an installation through the MCP listener (FERRY_MCP_*). */
export interface McpConfig {
  /** Tool calls one session may make per minute (FERRY_MCP_CALLS_PER_MINUTE); more are refused with a tool error. */
  callsPerMinute: number;
  /** A session unused this long is closed (FERRY_MCP_SESSION_IDLE_SECONDS); its client starts a new one. */
  sessionIdleMs: number;
  /** Sessions one listener keeps at once (FERRY_MCP_MAX_SESSIONS); beyond, new ones are refused (503). */
  maxSessions: number;
  /**
   * HTTP methods the proxy tool may send, where an installation enables the proxy
   * (FERRY_MCP_PROXY_METHODS, comma-separated): GET only unless the builder allows more.
   */
  proxyMethods: readonly string[];
}

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

function proxyMethods(env: NodeJS.ProcessEnv): readonly string[] {
  const raw = env.FERRY_MCP_PROXY_METHODS?.trim();
  if (!raw) return ['GET'];
  const methods = [...new Set(raw.split(',').map((method) => method.trim().toUpperCase()))];
  const unknown = methods.filter((method) => !HTTP_METHODS.includes(method));
  if (unknown.length || !methods.length) {
    throw new ConfigError(
      `FERRY_MCP_PROXY_METHODS must list some of ${HTTP_METHODS.join(', ')} (comma-separated), got "${raw}"`,
    );
  }
  return methods;
}

export interface TracingConfig {
  enabled: boolean;
  /** Where spans are sent (OTLP/HTTP, JSON): the traces endpoint itself, `/v1/traces` included. */
  endpoint?: string;
  /** OTEL_SERVICE_NAME; unset, each process names itself (`ferry-api`, `ferry-worker`, `ferry`). */
  serviceName?: string;
}

export class ConfigError extends Error {}

function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function boolVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/** A port that `0` or `off` turns off (null); unset or empty keeps the default. */
function optionalPort(env: NodeJS.ProcessEnv, name: string, fallback: number): number | null {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === 'off' || raw === 'false') return null;
  const port = intVar(env, name, fallback);
  if (port > 65535)
    throw new ConfigError(`${name} must be a port from 1 to 65535, or 0 / off, got "${env[name]}"`);
  return port === 0 ? null : port;
}

function tracing(env: NodeJS.ProcessEnv): TracingConfig {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  // The OpenTelemetry rule: the generic endpoint gets `/v1/traces` appended, the specific one is used as is.
  const endpoint = traces || (base ? `${base.replace(/\/$/, '')}/v1/traces` : undefined);
  const name = traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (endpoint && !/^https?:\/\/[^/]/i.test(endpoint)) {
    throw new ConfigError(
      `${name} must be an http(s) URL of an OTLP/HTTP collector, got "${traces || base}"`,
    );
  }
  const disabled = boolVar(env, 'OTEL_SDK_DISABLED', false);
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || undefined;
  return {
    enabled: Boolean(endpoint) && !disabled,
    ...(endpoint && { endpoint }),
    ...(serviceName && { serviceName }),
  };
}

function workerConcerns(env: NodeJS.ProcessEnv): readonly WorkConcern[] {
  const raw = env.FERRY_WORKER_CONCERNS?.trim();
  if (!raw) return WORK_CONCERNS;
  const names = [...new Set(raw.split(',').map((name) => name.trim()))];
  const unknown = names.filter((name) => !isWorkConcern(name));
  if (unknown.length || !names.length) {
    throw new ConfigError(
      `FERRY_WORKER_CONCERNS must list some of ${WORK_CONCERNS.join(', ')} (comma-separated), got "${raw}"`,
    );
  }
  return names as WorkConcern[];
}

function retrySchedule(env: NodeJS.ProcessEnv): readonly number[] {
  try {
    return parseRetrySchedule(env.FERRY_DELIVERY_RETRY_SCHEDULE);
  } catch (error) {
    throw new ConfigError(`FERRY_DELIVERY_RETRY_SCHEDULE: ${(error as Error).message}`);
  }
}

const MAX_RETENTION_DAYS = 3650;

function retentionDays(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || value < 1 || value > MAX_RETENTION_DAYS) {
    throw new ConfigError(
      `${name} must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, got "${raw}"`,
    );
  }
  return value;
}

function retention(env: NodeJS.ProcessEnv, retryScheduleMs: readonly number[]): RetentionConfig {
  const schedule = (env.FERRY_RETENTION_SCHEDULE || '17 * * * *').trim();
  try {
    nextFireTime(schedule, new Date());
  } catch (error) {
    if (!(error instanceof CronError)) throw error;
    throw new ConfigError(`FERRY_RETENTION_SCHEDULE: ${error.message}`);
  }
  const batchSize = intVar(env, 'FERRY_RETENTION_BATCH_SIZE', 1000);
  if (batchSize < 10 || batchSize > 50_000) {
    throw new ConfigError(`FERRY_RETENTION_BATCH_SIZE must be from 10 to 50000, got "${batchSize}"`);
  }
  const config: RetentionConfig = {
    operationLogsDays: retentionDays(env, 'FERRY_RETENTION_OPERATION_LOGS_DAYS', 30),
    deliveryAttemptsDays: retentionDays(env, 'FERRY_RETENTION_DELIVERY_ATTEMPTS_DAYS', 30),
    readCheckpointsDays: retentionDays(env, 'FERRY_RETENTION_READ_CHECKPOINTS_DAYS', 30),
    storedPagesDays: retentionDays(env, 'FERRY_RETENTION_STORED_PAGES_DAYS', 14),
    eventsDays: retentionDays(env, 'FERRY_RETENTION_EVENTS_DAYS', 30),
    subscriptionEventsDays: retentionDays(env, 'FERRY_RETENTION_SUBSCRIPTION_EVENTS_DAYS', 7),
    operationsDays: retentionDays(env, 'FERRY_RETENTION_OPERATIONS_DAYS', 90),
    temporalDays: retentionDays(env, 'FERRY_RETENTION_TEMPORAL_DAYS', 30),
    schedule,
    batchSize,
  };
  // An event, or a change event's body, must outlive the retries of its delivery.
  const retryDays = retryScheduleMs.reduce((sum, ms) => sum + ms, 0) / 86_400_000;
  for (const [name, days] of [
    ['FERRY_RETENTION_EVENTS_DAYS', config.eventsDays],
    ['FERRY_RETENTION_SUBSCRIPTION_EVENTS_DAYS', config.subscriptionEventsDays],
  ] as const) {
    if (days <= retryDays) {
      throw new ConfigError(
        `${name} (${days}) must be longer than FERRY_DELIVERY_RETRY_SCHEDULE, whose retries last ${retryDays.toFixed(1)} days: rows would be deleted while still being delivered`,
      );
    }
  }
  return config;
}

/** Parses sizes such as `10mb`, `512kb` or a plain byte count. */
export function parseByteSize(raw: string): number {
  const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!match) throw new ConfigError(`invalid size "${raw}"`);
  const unit = (match[2] ?? 'b').toLowerCase();
  const factor = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[unit as 'b' | 'kb' | 'mb' | 'gb'];
  return Number(match[1]) * factor;
}

/**
 * Development keeps a generated secret under `.data/` so restarts find their encrypted data again;
 * production refuses to start without an explicit key.
 */
function secretKey(
  env: NodeJS.ProcessEnv,
  name: string,
  mode: Config['env'],
  dataDir: string,
  file: string,
): Buffer {
  const raw = env[name];
  if (raw) {
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes, base64-encoded`);
    return key;
  }
  if (mode === 'production') throw new ConfigError(`${name} is required in production`);
  const path = join(dataDir, file);
  if (existsSync(path)) return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, key.toString('base64'), { mode: 0o600 });
  return key;
}

/**
 * FERRY_PROVIDER_OVERRIDES (JSON) or FERRY_PROVIDER_OVERRIDES_FILE (a JSON file): provider name →
 * `{baseURL?, authURL?, tokenURL?, modules?: {<id>: {baseURL}}}`.
 */
function providerOverrides(env: NodeJS.ProcessEnv): ProviderOverrides {
  const file = env.FERRY_PROVIDER_OVERRIDES_FILE;
  const text = file ? readFileSync(file, 'utf8') : env.FERRY_PROVIDER_OVERRIDES;
  if (!text?.trim()) return {};
  const source = file ? `FERRY_PROVIDER_OVERRIDES_FILE (${file})` : 'FERRY_PROVIDER_OVERRIDES';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  const issues = schemaIssues(ProviderOverridesSchema, parsed, 'body');
  if (issues.length) {
    throw new ConfigError(`${source} is not valid: ${issues.map((issue) => issue.detail).join('; ')}`);
  }
  return parsed as ProviderOverrides;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const mode = (env.FERRY_ENV ?? (env.NODE_ENV === 'test' ? 'test' : 'development')) as Config['env'];
  if (!['development', 'production', 'test'].includes(mode)) {
    throw new ConfigError(`FERRY_ENV must be development, production or test, got "${mode}"`);
  }
  const dataDir = env.FERRY_DATA_DIR ?? join(projectRoot, '.data');
  const ports = {
    api: intVar(env, 'FERRY_API_PORT', 8080),
    read: intVar(env, 'FERRY_READ_PORT', 8081),
    write: intVar(env, 'FERRY_WRITE_PORT', 8082),
    search: intVar(env, 'FERRY_SEARCH_PORT', 8084),
    proxy: intVar(env, 'FERRY_PROXY_PORT', 8083),
    mcp: intVar(env, 'FERRY_MCP_PORT', 8085),
  };
  const deliveryRetryScheduleMs = retrySchedule(env);
  return {
    env: mode,
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/ferry',
    temporal: {
      address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
      namespace: env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: env.FERRY_TASK_QUEUE ?? 'ferry',
      workerConcerns: workerConcerns(env),
      ...(env.FERRY_WORKER_CACHED_WORKFLOWS && {
        maxCachedWorkflows: intVar(env, 'FERRY_WORKER_CACHED_WORKFLOWS', 0),
      }),
      ...(env.FERRY_WORKFLOW_BUNDLE && { workflowBundlePath: env.FERRY_WORKFLOW_BUNDLE }),
    },
    ports,
    mcp: {
      callsPerMinute: Math.max(1, intVar(env, 'FERRY_MCP_CALLS_PER_MINUTE', 60)),
      sessionIdleMs: Math.max(1, intVar(env, 'FERRY_MCP_SESSION_IDLE_SECONDS', 1800)) * 1000,
      maxSessions: Math.max(1, intVar(env, 'FERRY_MCP_MAX_SESSIONS', 10_000)),
      proxyMethods: proxyMethods(env),
    },
    metricsPorts: {
      server: optionalPort(env, 'FERRY_METRICS_PORT', 9464),
      worker: optionalPort(env, 'FERRY_WORKER_METRICS_PORT', 9465),
    },
    tracing: tracing(env),
    host: env.FERRY_HOST ?? (mode === 'production' ? '0.0.0.0' : '127.0.0.1'),
    publicApiUrl: (env.FERRY_PUBLIC_API_URL ?? `http://localhost:${ports.api}`).replace(/\/$/, ''),
    publicHostUrls: Object.fromEntries(
      (['read', 'write', 'search'] as const).flatMap((host) => {
        const url = env[`FERRY_PUBLIC_${host.toUpperCase()}_URL`]?.trim();
        return url ? [[host, url.replace(/\/$/, '')]] : [];
      }),
    ),
    sandboxUrl: (env.FERRY_SANDBOX_URL ?? 'http://127.0.0.1:8090').replace(/\/$/, ''),
    encryptionKey: secretKey(env, 'FERRY_ENCRYPTION_KEY', mode, dataDir, 'encryption.key'),
    builderTokenSecret: secretKey(env, 'FERRY_BUILDER_TOKEN_SECRET', mode, dataDir, 'builder-token.key'),
    bodyLimitBytes: parseByteSize(env.FERRY_BODY_LIMIT ?? '10mb'),
    requestTimeoutMs: intVar(env, 'FERRY_REQUEST_TIMEOUT_SECONDS', 30) * 1000,
    corsOrigins: (env.FERRY_CORS_ORIGINS ?? (mode === 'production' ? '' : '*'))
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    logLevel: env.LOG_LEVEL ?? (mode === 'test' ? 'silent' : 'info'),
    allowPrivateDestinations: boolVar(env, 'FERRY_ALLOW_PRIVATE_DESTINATIONS', false),
    delivery: {
      retryScheduleMs: deliveryRetryScheduleMs,
      timeoutMs: intVar(env, 'FERRY_DELIVERY_TIMEOUT_SECONDS', 15) * 1000,
      disableAfterMs: intVar(env, 'FERRY_DESTINATION_DISABLE_AFTER_SECONDS', 5 * 24 * 3600) * 1000,
      secretRotationGraceMs: intVar(env, 'FERRY_SECRET_ROTATION_GRACE_SECONDS', 24 * 3600) * 1000,
      concurrency: Math.max(1, intVar(env, 'FERRY_DELIVERY_CONCURRENCY', 1)),
    },
    readPagesPerActivity: Math.max(1, intVar(env, 'FERRY_READ_PAGES_PER_ACTIVITY', 1000)),
    readActivityMs: Math.max(1, intVar(env, 'FERRY_READ_ACTIVITY_SECONDS', 60)) * 1000,
    providerMaxWaitMs: Math.max(1, intVar(env, 'FERRY_PROVIDER_MAX_WAIT_SECONDS', 3600)) * 1000,
    ...(env.FERRY_READ_PROVIDER_PAGE_SIZE && {
      readProviderPageSize: Math.max(1, intVar(env, 'FERRY_READ_PROVIDER_PAGE_SIZE', 1)),
    }),
    readInlinePages: Math.max(0, intVar(env, 'FERRY_READ_INLINE_PAGES', 5)),
    minScheduleIntervalSeconds: intVar(env, 'FERRY_MIN_SCHEDULE_INTERVAL_SECONDS', 300),
    scheduleSpreadSeconds: intVar(env, 'FERRY_SCHEDULE_SPREAD_SECONDS', 300),
    inviteTtlSeconds: intVar(env, 'FERRY_INVITE_TTL_SECONDS', 7 * 24 * 3600),
    projectJwtMaxLifetimeSeconds: {
      groupScoped: Math.max(1, intVar(env, 'FERRY_GROUP_JWT_MAX_LIFETIME_SECONDS', 24 * 3600)),
      projectWide: Math.max(1, intVar(env, 'FERRY_PROJECT_JWT_MAX_LIFETIME_SECONDS', 3600)),
    },
    repair: {
      intervalMs: Math.max(1, intVar(env, 'FERRY_REPAIR_INTERVAL_SECONDS', 15)) * 1000,
      stuckAfterMs: Math.max(1, intVar(env, 'FERRY_STUCK_OPERATION_SECONDS', 120)) * 1000,
    },
    subscriptionRenewal: {
      leadMs: Math.max(1, intVar(env, 'FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS', 24 * 3600)) * 1000,
      retryMs: Math.max(1, intVar(env, 'FERRY_SUBSCRIPTION_RENEWAL_RETRY_SECONDS', 300)) * 1000,
    },
    dataDir,
    checkResponses: boolVar(env, 'FERRY_CHECK_RESPONSES', mode === 'test'),
    providerOverrides: providerOverrides(env),
    temporalUiUrl: (env.FERRY_TEMPORAL_UI_URL ?? 'http://localhost:8233').replace(/\/$/, ''),
    retention: retention(env, deliveryRetryScheduleMs),
  };
}

let current: Config | undefined;

/** The process-wide configuration, read from the environment on first use. */
export function config(): Config {
  current ??= loadConfig();
  return current;
}

/** Tests and `ferry start` adjust the environment before anything reads it; this forgets the cached copy. */
export function resetConfig(): void {
  current = undefined;
}
