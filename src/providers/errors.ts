import { ProblemError } from '../core/problem.js';
import type { Capability } from '../schemas/capabilities.js';
import { ProviderTemplateError } from './catalog/index.js';

/** Everything a connector throws on purpose; `provider` names the catalog provider. */
export class ConnectorError extends Error {
  constructor(
    message: string,
    readonly provider: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

const capabilityNames: Record<Capability | string, string> = {
  read: 'reading records',
  write: 'writing records',
  delete: 'deleting records',
  objectMetadata: 'describing objects',
  customFields: 'creating custom fields',
  subscribe: 'subscribing to record changes',
  count: 'counting records',
  search: 'searching records',
  proxy: 'proxying requests',
};

/** The provider (or Ferry's connector for it) cannot do this; asking again will not help. */
export class CapabilityNotSupportedError extends ConnectorError {
  constructor(
    provider: string,
    readonly capability: Capability | string,
    detail?: string,
  ) {
    super(
      detail ??
        `Provider "${provider}" does not support ${capabilityNames[capability] ?? capability} in Ferry.`,
      provider,
    );
  }
}

/** The connection lacks something the provider's URLs or auth need (e.g. a workspace name). */
export class ConnectionSetupError extends ConnectorError {}

/**
 * The provider answered with an error, or did not answer (status undefined: network failure or
 * timeout), after the HTTP layer's retries. `retryable` says whether trying later may succeed.
 */
export class ProviderError extends ConnectorError {
  readonly status?: number;
  readonly retryable: boolean;
  readonly retryAfterSeconds?: number;
  /** The provider's own error message, when its body had one (bounded in length). */
  readonly providerMessage?: string;
  /**
   * What the provider's error body details beyond its message (Zendesk's per-field `details`,
   * Salesforce's `errorCode` and `fields`), as the provider wrote it, where its declaration says.
   */
  readonly details?: unknown;
  /** Method and secret-free URL of the failed request. */
  readonly request?: { method: string; url: string };

  constructor(
    provider: string,
    message: string,
    init: {
      status?: number;
      retryable: boolean;
      retryAfterSeconds?: number;
      providerMessage?: string;
      details?: unknown;
      request?: { method: string; url: string };
    },
  ) {
    super(message, provider);
    this.details = init.details;
    this.status = init.status;
    this.retryable = init.retryable;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.providerMessage = init.providerMessage;
    this.request = init.request;
  }

  get isNotFound(): boolean {
    return this.status === 404;
  }
}

/**
 * Input the connector cannot send: an update without a record id, a page token it did not mint,
 * a field name the provider's rules refuse. Caught before any provider call, so nothing changed.
 */
export class ConnectorInputError extends ConnectorError {}

/** A webhook delivery whose signature is missing, wrong or too old: answer 401, process nothing. */
export class WebhookVerificationError extends ConnectorError {}

/**
 * Translates connector failures into API problems:
 * - unsupported capability or incomplete connection → 422, naming the provider;
 * - the provider has no such object or record → 404;
 * - the provider rejected the request's content (400, 409, 422) → 422 with its message;
 * - anything else from the provider (auth refused, 429, 5xx, network) → 502 with `retryable`.
 * Other errors are returned unchanged (a `ProblemError` stays as it is; a bug stays a 500).
 */
export function toProblem(error: unknown): unknown {
  if (error instanceof ProblemError) return error;
  if (error instanceof CapabilityNotSupportedError) {
    return new ProblemError({
      status: 422,
      detail: error.message,
      retryable: false,
      context: { provider: error.provider, capability: error.capability },
    });
  }
  if (error instanceof ConnectorInputError) {
    return new ProblemError({ status: 400, detail: error.message, context: { provider: error.provider } });
  }
  if (error instanceof ConnectionSetupError) {
    return new ProblemError({
      status: 422,
      detail: error.message,
      retryable: false,
      context: { provider: error.provider },
    });
  }
  if (error instanceof ProviderTemplateError) {
    return new ProblemError({
      status: 422,
      detail: `The connection lacks values the provider's URLs need: ${error.missing.join(', ')}.`,
      retryable: false,
    });
  }
  if (error instanceof ProviderError) {
    const context = {
      provider: error.provider,
      ...(error.status !== undefined && { providerStatus: error.status }),
      ...(error.providerMessage && { providerMessage: error.providerMessage }),
      ...(error.details !== undefined && { providerDetails: error.details }),
    };
    if (error.status === 404) return new ProblemError({ status: 404, detail: error.message, context });
    if (error.status === 400 || error.status === 409 || error.status === 422) {
      return new ProblemError({ status: 422, detail: error.message, retryable: false, context });
    }
    return new ProblemError({
      status: 502,
      detail: error.message,
      retryable: error.retryable,
      ...(error.retryAfterSeconds !== undefined && { retryAfter: error.retryAfterSeconds }),
      context,
    });
  }
  return error;
}

/** The provider's error details as one bounded line of JSON. */
function detailsText(details: unknown): string {
  const text = typeof details === 'string' ? details : JSON.stringify(details);
  return text.length > 1000 ? `${text.slice(0, 997)}...` : text;
}

/**
 * One line for logs and per-object `error` strings: the message, never a stack; a provider's error
 * details follow it, since they say which field was wrong.
 */
export function describeError(error: unknown): string {
  if (error instanceof ProblemError) return error.detail ?? error.title;
  if (error instanceof ProviderError && error.details !== undefined)
    return `${error.message} Details: ${detailsText(error.details)}`;
  if (error instanceof Error) return error.message;
  return String(error);
}
