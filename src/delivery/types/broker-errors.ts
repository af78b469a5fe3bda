/**
 * How a broker client's failure is classified for every queue-like type: no connection, a reset, a
 * timeout and the server being busy are worth another attempt; refused credentials, a missing
 * exchange or stream and a refused body are not. Messages keep to codes and the client's own words,
 * which never hold the password (credentials are passed apart from the URL).
 */

const RETRYABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

export function errorCode(error: unknown): string | undefined {
  const own = (error as { code?: unknown })?.code;
  if (typeof own === 'string' || typeof own === 'number') return String(own);
  const cause = (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}

export function isRetryableCode(code: string | undefined): boolean {
  return code !== undefined && RETRYABLE_CODES.has(code);
}

/** A short reason for the ledger: the code, else the first line of the message, capped. */
export function shortReason(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 300);
}
