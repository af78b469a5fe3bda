import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectorFor, hasDeepConnector } from '../../src/providers/connectors/index.js';
import { CapabilityNotSupportedError, toProblem } from '../../src/providers/errors.js';
import { ProblemError } from '../../src/core/problem.js';
import { startEchoServer } from './support.js';

let echo: Awaited<ReturnType<typeof startEchoServer>>;

beforeAll(async () => {
  echo = await startEchoServer();
});
afterAll(() => echo.close());

/** OpenAI stays in the catalog without a declaration, so it has only the generic connector. */
const catalogOnly = () =>
  connectorFor(
    {
      provider: 'openAI',
      templateVars: {},
      auth: async () => ({ type: 'apiKey', apiKey: 'sk-test-123456' }),
    },
    { baseUrl: echo.url },
  );

describe('a provider known only from the catalog', () => {
  it('gets the generic connector, which can only proxy', () => {
    expect(hasDeepConnector('openAI')).toBe(false);
    expect(hasDeepConnector('hubspot')).toBe(true);
    expect(catalogOnly().capabilities).toEqual({
      read: false,
      write: false,
      delete: false,
      objectMetadata: false,
      customFields: false,
      subscribe: false,
      count: false,
      search: false,
      proxy: true,
    });
  });

  it('answers every record method with CapabilityNotSupportedError naming the provider', async () => {
    const source = catalogOnly();
    const attempts: Promise<unknown>[] = [
      source.readPage({ objectName: 'customers', pageSize: 10 }),
      source.write({ objectName: 'customers', type: 'create', record: {} }),
      source.listObjectMetadata('customers'),
      source.search({
        objectName: 'customers',
        filters: [{ fieldName: 'email', value: 'a@b.c' }],
        pageSize: 10,
      }),
      source.upsertCustomFields('customers', []),
      source.subscribe({ objectName: 'customers', events: ['create'], webhookUrl: 'http://127.0.0.1/x' }),
      source.deleteSubscription('x'),
    ];
    for (const attempt of attempts) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CapabilityNotSupportedError);
      expect((error as Error).message).toContain('"openAI"');
    }
    expect(() => source.verifyWebhook({}, '', 'secret')).toThrow(CapabilityNotSupportedError);
    expect(await source.estimateCount({ objectName: 'customers' })).toBeUndefined();
  });

  it('maps an unsupported capability to a 422 problem', async () => {
    const error = await catalogOnly()
      .listObjectMetadata('customers')
      .catch((e: unknown) => e);
    const problem = toProblem(error) as ProblemError;
    expect(problem).toBeInstanceOf(ProblemError);
    expect(problem.status).toBe(422);
    expect(problem.detail).toBe('Provider "openAI" does not support describing objects in Ferry.');
  });

  it('proxies with the connection’s credentials, never the caller’s', async () => {
    const response = await catalogOnly().proxy({
      method: 'post',
      path: '/v1/customers?expand[]=a&expand[]=b',
      headers: {
        authorization: 'Bearer caller-token',
        'x-api-key': 'ferry-key',
        'content-type': 'text/plain',
      },
      body: 'name=x',
    });
    expect(response.status).toBe(200);
    const received = echo.received.at(-1)!;
    expect(received).toMatchObject({
      method: 'POST',
      url: '/v1/customers?expand[]=a&expand[]=b',
      body: 'name=x',
    });
    expect(received.headers.authorization).toBe('Bearer sk-test-123456');
    expect(received.headers['x-api-key']).toBeUndefined();
    expect(received.headers['content-type']).toBe('text/plain');
  });

  it('relays the provider’s error statuses through the proxy unchanged', async () => {
    echo.statuses.push(404);
    const response = await catalogOnly().proxy({ method: 'GET', path: '/v1/missing' });
    expect(response.status).toBe(404);
  });

  it('has no connector for a provider missing from the catalog', () => {
    expect(() =>
      connectorFor({ provider: 'nope', templateVars: {}, auth: async () => ({ type: 'none' }) }),
    ).toThrow(/not in Ferry's catalog/);
  });
});
