/**
 * What Node's HTTP client sends as a header value: tab, visible ASCII and Latin-1. A value with a line
 * break, a control character or text beyond Latin-1 is refused by the client, so it would fail every
 * call made with it: such values are refused when they are stored.
 */
export function isSendableHeaderValue(value: string): boolean {
  return /^[\t\x20-\x7E\x80-\xFF]*$/.test(value);
}
