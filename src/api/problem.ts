import { echoable } from '../core/input-limits.js';
import type { ProblemError, ProblemIssue } from '../core/problem.js';

const issueTitles: Record<ProblemIssue['in'], string> = {
  path: 'Invalid path parameter',
  query: 'Invalid query parameter',
  body: 'Invalid request body',
  header: 'Invalid header',
};

/** The guide to a problem of type `about:blank`: what its HTTP status means. */
export function statusGuide(status: number): string {
  return `https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/${status}`;
}

/**
 * An issue as the spec's Errors section lists its fields, every one present: `value` is null where
 * the offending property is missing (or is a secret, never echoed).
 */
function issueBody(issue: ProblemIssue): Required<ProblemIssue> {
  return {
    type: issue.type ?? 'about:blank',
    title: issue.title ?? issueTitles[issue.in],
    detail: issue.detail,
    in: issue.in,
    name: issue.name,
    value: 'value' in issue && issue.value !== undefined ? echoable(issue.value) : null,
  };
}

/**
 * The problem-details body of an error response. `requestId` is the request id; `instance` names
 * the same request as a URI (`urn:ferry:request:<id>`), the type RFC 9457 and the public document
 * give it, so a client that checks formats accepts it.
 */
export function problemBody(error: ProblemError, requestId: string): Record<string, unknown> {
  const instance = `urn:ferry:request:${requestId}`;
  return {
    type: error.type,
    href: error.type === 'about:blank' ? statusGuide(error.status) : error.type,
    title: error.title,
    status: error.status,
    ...(error.detail !== undefined && { detail: error.detail }),
    instance,
    ...(error.issues && { issues: error.issues.map(issueBody) }),
    ...(error.remedy && { remedy: error.remedy }),
    ...(error.retryable !== undefined && { retryable: error.retryable }),
    // A time, as the public API gives it; the Retry-After header carries the same wait in seconds.
    ...(error.retryAfter !== undefined && {
      retryAfter: new Date(Date.now() + error.retryAfter * 1000).toISOString(),
    }),
    ...(error.context && { context: error.context }),
    requestId,
    time: new Date().toISOString(),
  };
}
