import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request, startTestStack, type TestStack } from '../support/stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack.close();
});

describe('provider discovery', () => {
  it('lists every catalog provider, keyed by name, without credentials', async () => {
    const response = await request('GET', `${stack.urls.api}/providers`);
    expect(response.status).toBe(200);
    expect(response.body.hubspot).toMatchObject({ name: 'hubspot', authType: 'oauth2' });
    expect(response.body.sandbox.support.read).toBe(true);
    for (const [name, provider] of Object.entries<any>(response.body)) expect(provider.name).toBe(name);
  });

  it('describes one provider', async () => {
    const response = await request('GET', `${stack.urls.api}/providers/hubspot`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'hubspot',
      authType: 'oauth2',
      oauth2Opts: expect.objectContaining({ tokenURL: expect.stringContaining('hubapi.com') }),
    });
  });

  it('answers 404 for a provider not in the catalog', async () => {
    const response = await request('GET', `${stack.urls.api}/providers/no-such-provider`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body.detail).toContain('no-such-provider');
  });
});
