import { describe, expect, it } from '@jest/globals';
import { githubHooks } from '../../src/providers/connectors/github.js';
import type { HookContext } from '../../src/providers/declarative/context.js';
import { ProviderError } from '../../src/providers/errors.js';

/** What the conformance suite does not see of GitHub's hook: rate limits answered 403. */
describe('GitHub 403 rate limits', () => {
  const connector = { provider: 'github' } as HookContext;
  const refused = (providerMessage: string, retryAfterSeconds?: number) =>
    new ProviderError('github', `Provider "github" refused access: ${providerMessage}`, {
      status: 403,
      retryable: false,
      providerMessage,
      ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
    });

  it('makes a primary or secondary rate limit a retryable 429, keeping its Retry-After', () => {
    const primary = githubHooks.providerError!(
      connector,
      'issues',
      refused('API rate limit exceeded for user.'),
    );
    expect(primary).toMatchObject({ status: 429, retryable: true });
    const secondary = githubHooks.providerError!(
      connector,
      'issues',
      refused('You have exceeded a secondary rate limit.', 60),
    );
    expect(secondary).toMatchObject({ status: 429, retryable: true, retryAfterSeconds: 60 });
  });

  it('leaves a 403 that is not a rate limit a refusal', () => {
    const error = refused('Resource not accessible by integration');
    expect(githubHooks.providerError!(connector, 'issues', error)).toBe(error);
  });
});
