import type { ConnectorDeclaration } from '../../schemas/connector-declaration.js';

type RateLimit = NonNullable<ConnectorDeclaration['rateLimit']>;

/**
 * How long until the provider's rate limit resets, from the headers it declares: used after a 429
 * that carries no Retry-After. Undefined when the headers say nothing usable.
 */
export function rateLimitWait(
  rateLimit: RateLimit,
  headers: Record<string, string>,
  now = Date.now(),
): number | undefined {
  const raw = headers[rateLimit.reset.toLowerCase()];
  if (raw === undefined) return undefined;
  if (rateLimit.remaining !== undefined && Number(headers[rateLimit.remaining.toLowerCase()]) > 0)
    return undefined;
  let waitMs: number;
  switch (rateLimit.resetFormat) {
    case 'seconds':
      waitMs = Number(raw) * 1000;
      break;
    case 'milliseconds':
      waitMs = Number(raw);
      break;
    case 'unixSeconds':
      waitMs = Number(raw) * 1000 - now;
      break;
    case 'unixMs':
      waitMs = Number(raw) - now;
      break;
    case 'httpDate':
      waitMs = Date.parse(raw) - now;
      break;
  }
  return Number.isFinite(waitMs) ? Math.max(0, Math.ceil(waitMs)) : undefined;
}
