import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { getProvider } from '../../src/providers/catalog/index.js';
import { ProviderError } from '../../src/providers/errors.js';
import {
  backoffDelay,
  ProviderHttpClient,
  redactUrl,
  type RequestLogEntry,
} from '../../src/providers/http.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sandboxApiKeyTarget, sandboxOAuthTarget, startEchoServer } from './support.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 50, companies: 5, deals: 5 });
});
afterAll(() => sandbox.close());
afterEach(() => sandbox.reset({ data: true }));

const fast = { baseDelayMs: 5, maxDelayMs: 20 };

function client(
  log: RequestLogEntry[],
  options: { keys?: string[]; retry?: Record<string, number>; timeoutMs?: number } = {},
) {
  const target = sandboxApiKeyTarget(sandbox, options.keys);
  const http = new ProviderHttpClient(getProvider('sandboxApiKey')!, target, {
    onRequest: (entry) => log.push(entry),
    retry: { ...fast, ...options.retry },
    timeoutMs: options.timeoutMs,
  });
  return { http, target };
}

describe('retries', () => {
  it('waits for Retry-After on a 429 and then succeeds', async () => {
    sandbox.faults.set({ rateLimit: { requests: 1, perSeconds: 1 } });
    const log: RequestLogEntry[] = [];
    const { http } = client(log);
    await http.json({ method: 'GET', path: '/contacts', query: { limit: 1 } });
    const started = Date.now();
    const second = await http.json<{ results: unknown[] }>({
      method: 'GET',
      path: '/contacts',
      query: { limit: 1 },
    });
    expect(second.body.results).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(log.slice(1).map((entry) => [entry.status, entry.attempt])).toEqual([
      [429, 1],
      [200, 2],
    ]);
    expect(log[1].retryInMs).toBe(1000);
    expect(sandbox.faults.stats.rateLimited).toBe(1);
  });

  it('does not wait for a Retry-After beyond its limit: fails retryable, saying when to come back', async () => {
    sandbox.faults.set({ rateLimit: { requests: 1, perSeconds: 60 } });
    const log: RequestLogEntry[] = [];
    const { http } = client(log, { retry: { maxRetryAfterMs: 5_000 } });
    await http.json({ method: 'GET', path: '/contacts' });
    const error = await http.json({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryable: true });
    expect((error as ProviderError).retryAfterSeconds).toBeGreaterThan(5);
    expect(log).toHaveLength(2);
  });

  it('retries injected 500s with backoff until one succeeds', async () => {
    sandbox.faults.set({ errorRate: 0.6 });
    const log: RequestLogEntry[] = [];
    const { http } = client(log, { retry: { maxAttempts: 10 } });
    for (let i = 0; i < 5; i++) {
      const response = await http.json<{ results: unknown[] }>({
        method: 'GET',
        path: '/contacts',
        query: { limit: 2 },
      });
      expect(response.body.results).toHaveLength(2);
    }
    const failed = log.filter((entry) => entry.status === 500);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBe(sandbox.faults.stats.injectedErrors);
    for (const entry of failed) expect(entry.retryInMs).toBeGreaterThan(0);
    expect(log.filter((entry) => entry.status === 200)).toHaveLength(5);
  });

  it('gives up after maxAttempts with a retryable ProviderError carrying the provider’s message', async () => {
    sandbox.faults.set({ errorRate: 1 });
    const log: RequestLogEntry[] = [];
    const { http } = client(log, { retry: { maxAttempts: 3 } });
    const error = await http.json({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 500,
      retryable: true,
      providerMessage: 'Injected fault: the sandbox failed this request on purpose.',
    });
    expect(log.map((entry) => entry.attempt)).toEqual([1, 2, 3]);
    expect(log[2].retryInMs).toBeUndefined();
  });

  it('does not retry a non-idempotent POST after a 500', async () => {
    sandbox.faults.set({ errorRate: 1 });
    const log: RequestLogEntry[] = [];
    const { http } = client(log);
    await expect(
      http.json({ method: 'POST', path: '/contacts', json: { email: 'a@example.com' } }),
    ).rejects.toMatchObject({ status: 500 });
    expect(log).toHaveLength(1);
  });

  it('times out a slow attempt and retries it', async () => {
    sandbox.faults.set({ latencyMs: 300 });
    const log: RequestLogEntry[] = [];
    const { http } = client(log, { timeoutMs: 50, retry: { maxAttempts: 2 } });
    const error = await http.json({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: undefined, retryable: true });
    expect(log.map((entry) => entry.error)).toEqual(['no answer within 50 ms', 'no answer within 50 ms']);
  });

  it('retries a refused connection, then reports the provider unreachable', async () => {
    const echo = await startEchoServer();
    const url = echo.url;
    await echo.close();
    const log: RequestLogEntry[] = [];
    const http = new ProviderHttpClient(
      getProvider('stripe')!,
      sandboxApiKeyTarget(sandbox, ['sk_test_secret']),
      {
        baseUrl: url,
        onRequest: (entry) => log.push(entry),
        retry: { ...fast, maxAttempts: 2 },
      },
    );
    await expect(http.json({ method: 'GET', path: '/v1/customers' })).rejects.toMatchObject({
      status: undefined,
      retryable: true,
      message: expect.stringContaining('could not be reached'),
    });
    expect(log).toHaveLength(2);
  });
});

describe('401 handling', () => {
  it('forces one credential refresh after a 401 and retries with the new API key', async () => {
    const log: RequestLogEntry[] = [];
    const { http, target } = client(log, { keys: ['revoked-key-123', 'sandbox-demo-key'] });
    const response = await http.json<{ authType: string }>({ method: 'GET', path: '/me' });
    expect(response.body.authType).toBe('apiKey');
    expect(target.authCalls).toEqual([{}, { forceRefresh: true }]);
    expect(log.map((entry) => entry.status)).toEqual([401, 200]);
  });

  it('fails a credential no header can carry as the connection’s to fix, at once, for reads and the proxy', async () => {
    for (const key of ['key\r\nX-Evil: 1', 'ключ']) {
      const log: RequestLogEntry[] = [];
      const { http } = client(log, { keys: [key] });
      for (const call of [
        () => http.json({ method: 'GET', path: '/me' }),
        () => http.send({ method: 'GET', path: '/me' }),
        () => http.stream({ method: 'GET', path: '/me' }),
      ]) {
        await expect(call()).rejects.toMatchObject({
          name: 'ConnectionSetupError',
          message: expect.stringMatching(/cannot be built from this connection/),
        });
      }
      expect(log).toEqual([]);
    }
    // What the client refuses for Ferry's own part of the request is not the connection's to fix.
    const { http } = client([], { keys: ['sandbox-demo-key'] });
    const refused = await http
      .json({ method: 'GE T' as 'GET', path: '/me' })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'UND_ERR_INVALID_ARG', message: 'invalid request method' });
  });

  it('refreshes an expired OAuth access token once and goes on with the new one', async () => {
    const target = await sandboxOAuthTarget(sandbox);
    const log: RequestLogEntry[] = [];
    const http = new ProviderHttpClient(getProvider('sandbox')!, target, {
      onRequest: (entry) => log.push(entry),
      retry: fast,
    });
    await http.json({ method: 'GET', path: '/me' });
    sandbox.faults.set({ expireAccessTokens: true });
    const response = await http.json<{ authType: string }>({
      method: 'GET',
      path: '/contacts',
      query: { limit: 1 },
    });
    expect(response.status).toBe(200);
    expect(target.refreshes).toBe(1);
    expect(log.map((entry) => entry.status)).toEqual([200, 401, 200]);
  });

  it('does not refresh twice: a second 401 fails, not retryable', async () => {
    const log: RequestLogEntry[] = [];
    const { http, target } = client(log, { keys: ['bad-key-1', 'bad-key-2'] });
    await expect(http.json({ method: 'GET', path: '/me' })).rejects.toMatchObject({
      status: 401,
      retryable: false,
      message: expect.stringContaining('rejected the connection’s credentials'),
    });
    expect(target.authCalls).toHaveLength(2);
  });
});

describe('request logs', () => {
  it('never contain API keys, tokens or Authorization headers', async () => {
    const echo = await startEchoServer();
    try {
      const log: RequestLogEntry[] = [];
      const secretKey = 'hunter-key-0123456789';
      const hunter = new ProviderHttpClient(
        getProvider('hunter')!,
        sandboxApiKeyTarget(sandbox, [secretKey]),
        {
          baseUrl: echo.url,
          onRequest: (entry) => log.push(entry),
          retry: fast,
        },
      );
      await hunter.json({
        method: 'GET',
        path: '/v2/account',
        query: { token: 'other-secret', domain: 'x.com' },
      });
      expect(echo.received[0].url).toContain(`api_key=${secretKey}`);
      expect(log[0].url).toBe(`${echo.url}/v2/account?token=[redacted]&domain=x.com&api_key=[redacted]`);

      const bearer = 'sk_live_stripe_secret_value';
      const stripe = new ProviderHttpClient(getProvider('stripe')!, sandboxApiKeyTarget(sandbox, [bearer]), {
        baseUrl: echo.url,
        onRequest: (entry) => log.push(entry),
        retry: fast,
      });
      echo.statuses.push(401, 401);
      await expect(stripe.json({ method: 'GET', path: `/v1/echo/${bearer}` })).rejects.toBeInstanceOf(
        ProviderError,
      );
      expect(echo.received[1].headers.authorization).toBe(`Bearer ${bearer}`);

      const oauth = await sandboxOAuthTarget(sandbox);
      const sandboxHttp = new ProviderHttpClient(getProvider('sandbox')!, oauth, {
        onRequest: (entry) => log.push(entry),
        retry: fast,
      });
      sandbox.faults.set({ expireAccessTokens: true });
      await sandboxHttp.json({ method: 'GET', path: '/me' });

      const text = JSON.stringify(log);
      for (const secret of [secretKey, 'other-secret', bearer, ...oauth.tokens])
        expect(text).not.toContain(secret);
      expect(text).not.toMatch(/authorization|bearer/i);
      expect(log.every((entry) => typeof entry.durationMs === 'number' && entry.attempt >= 1)).toBe(true);
    } finally {
      await echo.close();
    }
  });

  it('redacts user info and credential-like query parameters from any URL', () => {
    expect(redactUrl(new URL('https://user:pw@example.com/a?access_token=abc&page=2&client_secret=s'))).toBe(
      'https://example.com/a?access_token=[redacted]&page=2&client_secret=[redacted]',
    );
  });
});

describe('auth injection', () => {
  it('attaches API keys where the catalog says and keeps the caller’s headers', async () => {
    const echo = await startEchoServer();
    try {
      const anthropic = new ProviderHttpClient(
        getProvider('anthropic')!,
        sandboxApiKeyTarget(sandbox, ['ak-1234']),
        {
          baseUrl: echo.url,
        },
      );
      await anthropic.json({
        method: 'POST',
        path: '/v1/messages',
        json: { a: 1 },
        headers: { 'X-Trace': 't1' },
      });
      expect(echo.received[0].headers).toMatchObject({
        'x-api-key': 'ak-1234',
        'x-trace': 't1',
        'content-type': 'application/json',
      });
      expect(echo.received[0].body).toBe('{"a":1}');
    } finally {
      await echo.close();
    }
  });

  it('sends a JSON body as JSON, keeping a JSON media type the request names (JSON:API) and no other', async () => {
    const echo = await startEchoServer();
    try {
      const http = new ProviderHttpClient(getProvider('anthropic')!, sandboxApiKeyTarget(sandbox, ['ak-1']), {
        baseUrl: echo.url,
      });
      const send = (contentType: string) =>
        http.json({ method: 'POST', path: '/x', json: { a: 1 }, headers: { 'Content-Type': contentType } });
      await send('application/vnd.api+json');
      await send('text/plain');
      expect(echo.received.map((request) => request.headers['content-type'])).toEqual([
        'application/vnd.api+json',
        'application/json',
      ]);
    } finally {
      await echo.close();
    }
  });

  it('sends a request with an empty path to the base URL itself (a GraphQL endpoint), with no slash added', async () => {
    const echo = await startEchoServer();
    try {
      const linear = new ProviderHttpClient(
        getProvider('linear')!,
        {
          provider: 'linear',
          templateVars: {},
          auth: async () => ({ type: 'oauth2', accessToken: 'lin-1' }),
        },
        {
          baseUrl: `${echo.url}/graphql`,
        },
      );
      await linear.json({ method: 'POST', path: '', json: { query: '{ viewer { id } }' } });
      await linear.json({ method: 'GET', path: 'health' });
      expect(echo.received.map((request) => request.url)).toEqual(['/graphql', '/graphql/health']);
    } finally {
      await echo.close();
    }
  });

  it('sends a request naming a catalog module to that module’s host (Google’s People API), and refuses an unknown module', () => {
    const google = new ProviderHttpClient(getProvider('google')!, {
      provider: 'google',
      templateVars: {},
      auth: async () => ({ type: 'oauth2', accessToken: 'g-1' }),
    });
    expect(google.baseUrl()).toBe('https://www.googleapis.com');
    expect(google.baseUrl('people')).toBe('https://people.googleapis.com');
    expect(() => google.baseUrl('nope')).toThrow(/no module "nope"/);
  });

  it('fills the sandbox base URL template from the connection’s variables', async () => {
    const { http } = client([]);
    expect(http.baseUrl()).toBe(`${sandbox.url}/api/v1`);
  });
});

describe('timing helpers', () => {
  it('backs off exponentially, with jitter, up to the ceiling', () => {
    const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 0 };
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(3, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1000);
  });
});
