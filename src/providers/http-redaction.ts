/** What logs and errors may show of a provider request: no credential anywhere. */

/** Query parameter names that carry credentials at one provider or another. */
const secretQueryNames = new Set([
  'access_token',
  'api_key',
  'apikey',
  'api-key',
  'auth',
  'authorization',
  'client_secret',
  'code',
  'hapikey',
  'id_token',
  'key',
  'password',
  'refresh_token',
  'secret',
  'sig',
  'signature',
  'token',
]);

export const REDACTED = '[redacted]';

export function scrub(text: string, secrets: string[]): string {
  let result = text;
  for (const secret of secrets) {
    result = result.split(secret).join(REDACTED);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) result = result.split(encoded).join(REDACTED);
  }
  return result;
}

/** The URL as logs may show it: no user info, no credential-like query values, no known secret anywhere. */
export function redactUrl(url: URL, secrets: string[] = []): string {
  const copy = new URL(url.toString());
  if (copy.username || copy.password) {
    copy.username = '';
    copy.password = '';
  }
  for (const name of [...new Set(copy.searchParams.keys())]) {
    if (secretQueryNames.has(name.toLowerCase())) copy.searchParams.set(name, REDACTED);
  }
  return scrub(copy.toString(), secrets).replaceAll(encodeURIComponent(REDACTED), REDACTED);
}
