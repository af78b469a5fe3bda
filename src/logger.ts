import { DriverException } from '@mikro-orm/core';
import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { config } from './config.js';
import { maskApiKeys } from './core/api-key-text.js';

/** Keys that may carry credentials; pino replaces their values wherever they appear. */
const redactedPaths = [
  'apiKey',
  'clientSecret',
  'accessToken',
  'refreshToken',
  'password',
  'secret',
  'token',
  'authorization',
  '*.apiKey',
  '*.clientSecret',
  '*.accessToken',
  '*.refreshToken',
  '*.password',
  '*.secret',
  '*.token',
  '*.authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
];

/**
 * Errors as logged. A database driver's error carries the statement with its values inlined (which
 * may be a customer's data or a secret): only what went wrong is kept, never the statement.
 */
export function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (!(error instanceof DriverException)) return serialized;
  const said =
    (error as { sqlMessage?: string }).sqlMessage ??
    String(serialized.message ?? '')
      .split(' - ')
      .at(-1);
  // PostgreSQL quotes the offending value in its message ("invalid input syntax …: "<value>"").
  const message = (said ?? '').replace(/"[^"]*"/g, '"…"');
  const kept = ['type', 'name', 'code', 'severity', 'routine', 'table', 'column', 'constraint'];
  return {
    ...Object.fromEntries(
      kept.filter((key) => serialized[key] !== undefined).map((key) => [key, serialized[key]]),
    ),
    message,
    stack: String(serialized.stack ?? '')
      .split('\n')
      .filter((line) => line.trimStart().startsWith('at '))
      .join('\n'),
  };
}

/**
 * The trace a line was logged in (with tracing on, see tracing.ts), under the names OpenTelemetry's
 * log data model gives them, so a log search and a trace view lead to each other. Tracing off, no
 * span is ever active and lines carry nothing more.
 */
export function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) };
}

/** A path may name an API key (`/api-keys/ferry_sk_…`): logged cut to its prefix, whoever logs it. */
export function serializePath(path: unknown): unknown {
  return typeof path === 'string' ? maskApiKeys(path) : path;
}

/** Logs go to stderr, so CLI commands can print machine-readable JSON on stdout. */
export const logger = pino(
  {
    level: config().logLevel,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    serializers: { err: serializeError, path: serializePath },
    base: { service: 'ferry' },
    mixin: traceFields,
  },
  pino.destination(2),
);

export type Logger = typeof logger;
