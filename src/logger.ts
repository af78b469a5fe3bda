import { pino } from 'pino';
import { config } from './config.js';

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

/** Logs go to stderr, so CLI commands can print machine-readable JSON on stdout. */
export const logger = pino(
  {
    level: config().logLevel,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    base: { service: 'ferry' },
  },
  pino.destination(2),
);

export type Logger = typeof logger;
