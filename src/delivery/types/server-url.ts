import { isIP } from 'node:net';
import type { ProblemIssue } from '../../core/problem.js';
import { assertDeliverableAddress, type DestinationPolicy } from '../url-guard.js';
import { serverUrlIssues as brokerUrlIssues } from './network.js';

/**
 * Broker URLs that are not http (`redis://`, `mqtt://`): network.ts's checks (the scheme, a host,
 * no credentials in the URL), then an IP literal against the private-address policy, since
 * connecting to one skips the guarded DNS lookup; host names are checked at connect time by
 * `guardedLookup`. An unresolvable host is fine: it may come up later.
 */

export function serverUrlIssues(
  name: string,
  value: string,
  schemes: readonly string[],
  policy: DestinationPolicy,
): ProblemIssue[] {
  const shape = brokerUrlIssues(value, schemes, name);
  if (shape.length) return shape;
  const url = new URL(value);
  const issue = (detail: string): ProblemIssue[] => [{ in: 'body', name, detail }];
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
