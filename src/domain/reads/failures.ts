import { ProblemError } from '../../core/problem.js';
import { MessageTooLargeError } from '../../delivery/messages.js';
import { ProviderTemplateError } from '../../providers/catalog/index.js';
import { ConnectorError, ProviderError, describeError } from '../../providers/errors.js';

/** The read cannot run as configured (object not read, destination missing); retrying will not help. */
export class ReadSetupError extends Error {
  override readonly name = 'ReadSetupError';
}

export interface ReadFailure {
  message: string;
  /** Trying the same step again later may succeed. */
  retryable: boolean;
  /** The provider refused the connection's credentials. */
  authFailure: boolean;
  /** The provider asked that nothing be sent before this long (its `Retry-After`). */
  waitMs?: number;
}

const BAD_CREDENTIALS = 'urn:ferry:problem:connection-bad-credentials';

/**
 * How a failed read step should be treated: retried (after the provider's `Retry-After`, when it
 * gave one no longer than `maxWaitMs`), given up on, and whether credentials are to blame.
 */
export function classifyReadError(error: unknown, maxWaitMs = Infinity): ReadFailure {
  const message = describeError(error);
  if (error instanceof ProviderError) {
    const authFailure = error.status === 401 || error.status === 403;
    const waitMs = error.retryAfterSeconds === undefined ? undefined : error.retryAfterSeconds * 1000;
    if (waitMs !== undefined && waitMs > maxWaitMs) {
      return {
        message: `${message} The provider asked Ferry to wait ${error.retryAfterSeconds} s before calling again, longer than Ferry waits (${Math.round(maxWaitMs / 1000)} s, FERRY_PROVIDER_MAX_WAIT_SECONDS).`,
        retryable: false,
        authFailure,
      };
    }
    return {
      message,
      retryable: error.retryable && !authFailure,
      authFailure,
      ...(waitMs !== undefined && error.retryable && { waitMs }),
    };
  }
  if (error instanceof ProblemError) {
    const authFailure = error.type === BAD_CREDENTIALS;
    return { message, retryable: !authFailure && (error.retryable ?? false), authFailure };
  }
  if (
    error instanceof ReadSetupError ||
    error instanceof ConnectorError ||
    error instanceof ProviderTemplateError ||
    error instanceof MessageTooLargeError
  ) {
    return { message, retryable: false, authFailure: false };
  }
  // Database hiccups and the like: the next attempt may well succeed.
  return { message, retryable: true, authFailure: false };
}
