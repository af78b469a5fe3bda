import { isIP } from 'node:net';
import type { ProblemIssue } from '../../core/problem.js';
import { assertDeliverableAddress, type DestinationPolicy } from '../url-guard.js';

/**
 * Broker URLs that are not http (`redis://`, `mqtt://`): the scheme, a host, and no credentials in
 * the URL (they go in `secrets`, so the URL can be shown). An IP literal is checked against the
 * private-address policy here, since connecting to one skips the guarded DNS lookup; host names are
 * checked at connect time by `guardedLookup`. An unresolvable host is fine: it may come up later.
 */

export function serverUrlIssues(
  name: string,
  value: string,
  schemes: readonly string[],
  policy: DestinationPolicy,
): ProblemIssue[] {
  const issue = (detail: string): ProblemIssue[] => [{ in: 'body', name, detail }];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return issue(`${name} is not a URL`);
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (!schemes.includes(scheme))
    return issue(`${name} must start with ${schemes.map((s) => `${s}://`).join(' or ')}`);
  if (url.username || url.password)
    return issue(`credentials go in secrets.username and secrets.password, not in ${name}`);
  if (!url.hostname) return issue(`${name} has no host`);
  if (url.port === '0') return issue(`${name} names port 0`);
  try {
    assertServerAddress(url, policy);
  } catch (error) {
    return issue((error as Error).message);
  }
  return [];
}

/** Throws a DestinationUrlError when the URL's host is an IP literal the policy refuses. */
export function assertServerAddress(url: URL, policy: DestinationPolicy): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) assertDeliverableAddress(host, policy);
}

/** The URL as events and the ledger show it: scheme, host and port. */
export function describeServer(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}`;
  } catch {
    return '(invalid URL)';
  }
}
