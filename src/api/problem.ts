import { echoable } from '../core/input-limits.js';
import type { ProblemError } from '../core/problem.js';

/** The problem-details body of an error response; `instance` and `requestId` are the request id. */
export function problemBody(error: ProblemError, instance: string): Record<string, unknown> {
  return {
    type: error.type,
    title: error.title,
    status: error.status,
    ...(error.detail !== undefined && { detail: error.detail }),
    instance,
    ...(error.issues && {
      issues: error.issues.map((issue) =>
        'value' in issue ? { ...issue, value: echoable(issue.value) } : issue,
      ),
    }),
    ...(error.remedy && { remedy: error.remedy }),
    ...(error.retryable !== undefined && { retryable: error.retryable }),
    ...(error.retryAfter !== undefined && { retryAfter: error.retryAfter }),
    ...(error.context && { context: error.context }),
    requestId: instance,
    time: new Date().toISOString(),
  };
}
