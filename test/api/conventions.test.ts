import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request, startTestStack, createTestProject, type TestStack } from '../support/stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => stack.close());

describe('API conventions', () => {
  it('serves every host under /v1 with a request id on every response', async () => {
    for (const host of ['api', 'read', 'write', 'search'] as const) {
      const response = await request('GET', `${stack.urls[host]}/health`);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toMatch(/[\w-]{8,}/);
    }
  });

  it('keeps a caller-supplied request id and names it, as a URI, in the problem instance', async () => {
    const response = await request('GET', `${stack.urls.api}/projects/nope`, {
      headers: { 'x-request-id': 'req-abc-12345' },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('x-request-id')).toBe('req-abc-12345');
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body).toMatchObject({
      status: 401,
      title: 'Unauthorized',
      instance: 'urn:ferry:request:req-abc-12345',
      requestId: 'req-abc-12345',
    });
  });

  it('answers 401 for a missing or wrong API key', async () => {
    const missing = await request('GET', `${stack.urls.api}/projects/${stack.project.name}`);
    expect(missing.status).toBe(401);
    const wrong = await request('GET', `${stack.urls.api}/projects/${stack.project.name}`, {
      apiKey: 'ferry_sk_nope',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toMatch(/API key/);
    const badBearer = await request('GET', `${stack.urls.api}/projects/${stack.project.name}`, {
      bearer: 'not-a-jwt',
    });
    expect(badBearer.status).toBe(401);
  });

  it('hides another project behind a 404, as if it did not exist', async () => {
    const other = await createTestProject();
    const byName = await stack.api('GET', `/projects/${other.name}`);
    const byId = await stack.api('GET', `/projects/${other.id}/integrations`);
    const missing = await stack.api('GET', `/projects/does-not-exist`);
    expect([byName.status, byId.status, missing.status]).toEqual([404, 404, 404]);
    expect(byName.body.detail).toBe(`Project "${other.name}" was not found.`);
  });

  it('accepts the project id or name in paths', async () => {
    const byId = await stack.api('GET', `/projects/${stack.project.id}`);
    const byName = await stack.api('GET', `/projects/${stack.project.name}`);
    expect(byId.body).toEqual(byName.body);
    expect(byId.body).toMatchObject({
      id: stack.project.id,
      name: stack.project.name,
      orgId: stack.project.orgId,
    });
    expect(new Date(byId.body.createTime).toISOString()).toBe(byId.body.createTime);
  });

  it('rejects malformed JSON with 400', async () => {
    const response = await stack.api('POST', `/projects/${stack.project.name}/integrations`, {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/not valid JSON/);
  });

  it('gives each problem a guide and each issue every field the spec lists', async () => {
    const response = await stack.api('POST', `/projects/${stack.project.name}/destinations`, {
      // metadata is checked against its type once the body has its shape: here the shape is wrong.
      body: { type: 'webhook', metadata: 42 },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      type: 'about:blank',
      href: 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/400',
      title: 'Bad Request',
      status: 400,
    });
    expect(response.body.issues).toEqual(
      expect.arrayContaining([
        // Missing: no value to echo, so null.
        {
          type: 'about:blank',
          title: 'Invalid request body',
          in: 'body',
          name: 'name',
          value: null,
          detail: expect.any(String),
        },
        {
          type: 'about:blank',
          title: 'Invalid request body',
          in: 'body',
          name: 'metadata',
          value: 42,
          detail: expect.any(String),
        },
      ]),
    );
    const notFound = await stack.api('GET', `/projects/${stack.project.name}/topics/${randomUUID()}`);
    expect(notFound.body.href).toBe('https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/404');
  });

  it('rejects a body that is not JSON with 415', async () => {
    const response = await stack.api('POST', `/projects/${stack.project.name}/integrations`, {
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
  });

  it('rejects a body over the limit with 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(11 * 1024 * 1024) });
    const response = await stack.api('POST', `/projects/${stack.project.name}/integrations`, {
      rawBody: big,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(413);
  });

  it('answers unknown routes with 404 and wrong methods with 405', async () => {
    const unknown = await stack.api('GET', '/no/such/route');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    const wrongMethod = await stack.api('DELETE', `/projects/${stack.project.name}`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
  });

  it('answers CORS preflights for browser clients', async () => {
    const response = await request('OPTIONS', `${stack.urls.api}/projects/x/integrations`, {
      headers: {
        origin: 'http://localhost:3000',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key,x-amp-client,x-amp-client-version',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    // The public React components send these on every request.
    const allowed = response.headers.get('access-control-allow-headers')!.toLowerCase().split(',');
    expect(allowed).toEqual(expect.arrayContaining(['x-api-key', 'x-amp-client', 'x-amp-client-version']));
  });

  it('serves an OpenAPI 3.1 document and a reference page on each host', async () => {
    const api = await request('GET', `${stack.urls.api}/openapi.json`);
    expect(api.body.openapi).toBe('3.1.0');
    expect(api.body.paths['/v1/projects/{projectIdOrName}/integrations'].post.requestBody).toBeDefined();
    expect(api.body.paths['/v1/projects/{projectIdOrName}/integrations:batch'].put).toBeDefined();
    const page = await request('GET', `${stack.urls.api}/docs`);
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain('/v1/openapi.json');
    const read = await request('GET', `${stack.urls.read}/openapi.json`);
    expect(read.body.paths['/v1/projects/{projectIdOrName}/integrations']).toBeUndefined();
  });

  it('documents every error answer as application/problem+json, the type it is sent as', async () => {
    for (const host of ['api', 'read', 'write', 'search'] as const) {
      const document = (await request('GET', `${stack.urls[host]}/openapi.json`)).body;
      for (const [path, operations] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            if (status !== 'default' && Number(status) < 400) continue;
            expect([`${method} ${path} ${status}`, Object.keys(response.content ?? {})]).toEqual([
              `${method} ${path} ${status}`,
              response.content ? ['application/problem+json'] : [],
            ]);
          }
        }
      }
    }
  });
});
