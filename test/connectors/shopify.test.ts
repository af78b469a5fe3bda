import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ConnectorInputError, ProviderError } from '../../src/providers/errors.js';
import { startFakeShopify, type FakeShopify } from './fakes/shopify.js';

/**
 * What Shopify's GraphQL API does that the conformance suite does not cover: failures inside a 200
 * answer (a throttled query, a query error, a mutation's userErrors) become provider errors with the
 * status they stand for, the token travels in X-Shopify-Access-Token, field names cannot reach the
 * query text unchecked, and custom fields (metafields) are written and read as `namespace.key`.
 */

let fake: FakeShopify;
let connector: Connector;
const fastRetry = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2_000 };

beforeAll(async () => {
  fake = await startFakeShopify();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ shopify: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor(
    {
      provider: 'shopify',
      templateVars: { workspace: 'acme' },
      auth: async () => ({ type: 'oauth2', accessToken: fake.credential }),
    },
    { retry: fastRetry },
  );
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('Shopify', () => {
  it('sends the token in X-Shopify-Access-Token, never as a Bearer token', async () => {
    fake.seed('customers', [Date.UTC(2025, 0, 1)]);
    const before = fake.requests.length;
    await connector.readPage({ objectName: 'customers', pageSize: 5 });
    const request = fake.requests[before];
    expect(request.path).toBe('/admin/api/2025-10/graphql.json');
    expect(request.headers['x-shopify-access-token']).toBe(fake.credential);
    expect(request.headers.authorization).toBeUndefined();
  });

  it('retries a query throttled inside a 200 answer, as a 429', async () => {
    fake.throttleNext(1);
    const before = fake.requests.length;
    // Chosen fields without metafields: the read needs no metafield definitions first.
    const page = await connector.readPage({ objectName: 'customers', pageSize: 5, fields: ['firstName'] });
    expect(page.records.length).toBeGreaterThan(0);
    expect(fake.requests.length - before).toBe(2);
  });

  it('fails retryable with 429 when throttling outlasts the retries', async () => {
    fake.throttleNext(3);
    const error = await failure(connector.readPage({ objectName: 'customers', pageSize: 5 }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryable: true, providerMessage: 'Throttled' });
  });

  it('turns a query error inside a 200 answer into a 400 naming it, not retried', async () => {
    const before = fake.requests.length;
    const error = await failure(
      connector.readPage({ objectName: 'customers', pageSize: 5, fields: ['nickname'] }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as ProviderError).message).toMatch(/Field 'nickname' doesn't exist on type 'Customer'/);
    expect(fake.requests.length - before).toBe(1);
  });

  it('turns a mutation’s userErrors into a 422 with their message, and writes nothing', async () => {
    const before = fake.requests.length;
    const error = await failure(
      connector.write({ objectName: 'products', type: 'create', record: { vendor: 'Acme' } }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 422, retryable: false, providerMessage: "Title can't be blank" });
    expect(fake.requests.length - before).toBe(1);
    const missing = await failure(
      connector.write({
        objectName: 'customers',
        type: 'update',
        recordId: 'gid://shopify/Customer/999999',
        record: { note: 'x' },
      }),
    );
    expect(missing).toMatchObject({ status: 422, providerMessage: 'Customer does not exist' });
  });

  it('refuses a field name that is not a GraphQL name before asking Shopify', async () => {
    const before = fake.requests.length;
    const error = await failure(
      connector.readPage({
        objectName: 'customers',
        pageSize: 5,
        fields: ['id } } mutation { customerDelete'],
      }),
    );
    expect(error).toBeInstanceOf(ConnectorInputError);
    expect(fake.requests.length).toBe(before);
  });

  it('writes custom fields as metafields and reads them back as namespace.key', async () => {
    const created = await connector.write({
      objectName: 'customers',
      type: 'create',
      record: { firstName: 'Grace', 'custom.loyalty_tier': 'Silver', 'custom.birthday': '1906-12-09' },
    });
    expect(fake.stored('customers', created.recordId)!.metafields).toEqual([
      { namespace: 'custom', key: 'loyalty_tier', value: 'Silver' },
      { namespace: 'custom', key: 'birthday', value: '1906-12-09' },
    ]);
    const all = await connector.readPage({ objectName: 'customers', pageSize: 10 });
    const read = all.records.find((record) => record.id === created.recordId)!;
    expect(read.values).toMatchObject({ firstName: 'Grace', 'custom.loyalty_tier': 'Silver' });
    const chosen = await connector.readPage({
      objectName: 'customers',
      pageSize: 10,
      fields: ['custom.birthday'],
    });
    const picked = chosen.records.find((record) => record.id === created.recordId)!;
    expect(picked.raw.firstName).toBeUndefined();
    // Only the chosen metafield is asked for, by key.
    const sent = fake.requests.at(-1)!.body as { query: string; variables: { first: number } };
    expect(sent.query).toContain('metafields(first: 1, keys: ["custom.birthday"])');
    expect(sent.variables.first).toBe(10);
    expect(picked.values).toHaveProperty(['custom.birthday']);
  });

  it('asks for the largest page whose query costs at most 1,000 points', async () => {
    const firsts = async (fields?: string[]) => {
      await connector.readPage({ objectName: 'customers', ...(fields && { fields }) });
      return (fake.requests.at(-1)!.body as { variables: { first: number } }).variables.first;
    };
    // No metafields: 3 + 250 × 1. Both defined metafields: a record costs 1 + 2 + 2, 3 + 199 × 5 = 998.
    expect(await firsts(['firstName'])).toBe(250);
    expect(await firsts()).toBe(199);
    expect(await firsts(['custom.birthday'])).toBe(249);
  });

  it('relays a throttled answer through the proxy as Shopify sent it, a 200', async () => {
    fake.throttleNext(1);
    const before = fake.requests.length;
    const response = await connector.proxy({
      method: 'POST',
      path: '/admin/api/2025-10/graphql.json',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ query: '{ customers(first: 1) { nodes { id } } }' })),
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toMatchObject({
      errors: [{ extensions: { code: 'THROTTLED' } }],
    });
    expect(fake.requests.length - before).toBe(1);
  });

  it('updates an order, and cannot create or delete one', async () => {
    const [id] = fake.seed('orders', [Date.UTC(2025, 4, 1)]);
    await connector.write({
      objectName: 'orders',
      type: 'update',
      recordId: id,
      record: { note: 'Leave at the door' },
    });
    expect(fake.stored('orders', id)!.note).toBe('Leave at the door');
    expect(
      await failure(connector.write({ objectName: 'orders', type: 'create', record: { note: 'x' } })),
    ).toMatchObject({
      name: 'CapabilityNotSupportedError',
    });
    expect(
      await failure(connector.write({ objectName: 'orders', type: 'delete', recordId: id })),
    ).toMatchObject({
      name: 'CapabilityNotSupportedError',
    });
  });

  it('reads one record by id, and none for an id it does not have', async () => {
    const [id] = fake.seed('products', [Date.UTC(2025, 2, 1)]);
    expect(await connector.readRecord('products', id)).toMatchObject({
      id,
      raw: { title: expect.any(String) },
    });
    expect(await connector.readRecord('products', 'gid://shopify/Product/999999')).toBeUndefined();
  });

  it('searches by snake_case search names, with metafields on the records, and refuses metafield filters', async () => {
    const [id] = fake.seed('customers', [Date.UTC(2025, 3, 1)]);
    fake.edit('customers', id, { firstName: 'Zélie "Z" O\'Neil' });
    const before = fake.requests.length;
    const page = await connector.search({
      objectName: 'customers',
      filters: [{ fieldName: 'firstName', value: 'Zélie "Z" O\'Neil' }],
      pageSize: 10,
    });
    expect(page.records.map((record) => record.id)).toEqual([id]);
    expect(page.records[0].values).toMatchObject({ 'custom.loyalty_tier': 'Gold' });
    // The metafield definitions first, then the search.
    const sent = fake.requests[before + 1].body as { variables: { query: string } };
    expect(sent.variables.query).toBe(`first_name:'Zélie \\"Z\\" O\\'Neil'`);

    const refused = await failure(
      connector.search({
        objectName: 'customers',
        filters: [{ fieldName: 'custom.loyalty_tier', value: 'Gold' }],
        pageSize: 10,
      }),
    );
    expect(refused).toBeInstanceOf(ConnectorInputError);
    expect(fake.requests.length).toBe(before + 2);
  });
});
