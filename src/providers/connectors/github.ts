import type { ConnectorHooks } from '../declarative/connector.js';
import { ProviderError } from '../errors.js';

/**
 * GitHub's quirks (the rest is `catalog/connectors/github.json`):
 *
 * - A rate limit, primary or secondary, may be answered 403 rather than 429 ("API rate limit
 *   exceeded", "You have exceeded a secondary rate limit", with `Retry-After` for the secondary
 *   one): it is a wait, not a refusal, so it is made a retryable 429.
 * - A label is renamed by `new_name`; `name` in an update's body is not read. A caller writing
 *   `name` means the label's name, so the update sends it as `new_name`.
 */
export const githubHooks: ConnectorHooks = {
  write(connector, input, declared) {
    if (input.objectName !== 'labels' || input.type !== 'update' || input.record?.name === undefined)
      return declared();
    const { name, ...rest } = input.record;
    return connector.writeDeclared({ ...input, record: { ...rest, new_name: name } });
  },

  providerError(connector, _objectName, error) {
    const rateLimited =
      error.status === 403 &&
      (error.retryAfterSeconds !== undefined || /rate limit/i.test(error.providerMessage ?? ''));
    if (!rateLimited) return error;
    return new ProviderError(connector.provider, error.message, {
      status: 429,
      retryable: true,
      ...(error.retryAfterSeconds !== undefined && { retryAfterSeconds: error.retryAfterSeconds }),
      providerMessage: error.providerMessage,
      details: error.details,
      request: error.request,
    });
  },
};
