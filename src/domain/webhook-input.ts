import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isSendableHeaderValue } from '../core/header-values.js';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { isReservedHeader } from '../delivery/deliver.js';
import { assertDeliverableUrl, DestinationUrlError, type DestinationPolicy } from '../delivery/url-guard.js';

/**
 * A webhook destination's input checks: its URL (deliverable, resolvable), its headers (valid names,
 * none Ferry sets itself, sendable values) and its signing secret's form.
 */

/** Resolves a host name the way connections will, to refuse a URL nobody could deliver to. */
async function assertResolvable(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return;
  try {
    const addresses = await lookup(host, { all: true });
    if (!addresses.length) throw new Error('no addresses');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new DestinationUrlError('unresolvable', `${host} could not be resolved (${code})`);
  }
}

/**
 * Refuses URLs Ferry could never deliver to: not http(s), credentials in the URL, a host that does
 * not resolve, or (unless private destinations are allowed) one that reaches a private, loopback or
 * link-local address. Deliveries check again at connect time and on every redirect.
 */
export async function checkDestinationUrl(
  url: string,
  name: string,
  policy: DestinationPolicy,
): Promise<void> {
  try {
    const parsed = await assertDeliverableUrl(url, policy);
    if (policy.allowPrivate) await assertResolvable(parsed);
  } catch (error) {
    if (!(error instanceof DestinationUrlError)) throw error;
    throw ProblemError.invalid(
      [{ in: 'body', name, value: redactedInput(url), detail: error.message }],
      error.code === 'unresolvable'
        ? 'The destination URL cannot be reached.'
        : 'The destination URL is not allowed.',
    );
  }
}

/** The URL as echoed in errors: without query string or credentials, which often carry tokens. */
function redactedInput(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return url.slice(0, 200);
  }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function headerIssues(headers: Record<string, string>, prefix: string): ProblemIssue[] {
  const issues: ProblemIssue[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const where = `${prefix}.${name}`;
    if (!HEADER_NAME.test(name)) {
      issues.push({ in: 'body', name: where, value: name, detail: `"${name}" is not a valid header name` });
    } else if (isReservedHeader(name)) {
      issues.push({
        in: 'body',
        name: where,
        value: name,
        detail: `"${name}" is set by Ferry itself and cannot be configured`,
      });
    } else if (!isSendableHeaderValue(value)) {
      issues.push({
        in: 'body',
        name: where,
        detail:
          'header values must be visible ASCII (or Latin-1) text, without line breaks or control characters',
      });
    }
  }
  return issues;
}

export function signingSecretIssues(secret: string | undefined, name: string): ProblemIssue[] {
  if (secret === undefined) return [];
  const valid =
    /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret) && Buffer.from(secret.slice(6), 'base64').length >= 24;
  return valid
    ? []
    : [
        {
          in: 'body',
          name,
          detail: 'a signing secret is "whsec_" followed by at least 24 base64-encoded bytes',
        },
      ];
}
