/** Reading a provider's answers and failures: bodies, headers, its own error words, network faults. */

export function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
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
export function isNetworkFailure(error: unknown): boolean {
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
export function isUnsendable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === 'UND_ERR_INVALID_ARG' &&
    typeof message === 'string' &&
    /^invalid (?!host |content-length |upgrade |request )\S+ header$/.test(message)
  );
}

export function isConnectionRefused(error: unknown): boolean {
  const code = (error as { code?: string; cause?: { code?: string } })?.code;
  const causeCode = (error as { cause?: { code?: string } })?.cause?.code;
  return code === 'ECONNREFUSED' || causeCode === 'ECONNREFUSED';
}

export class AttemptTimeout extends Error {}
