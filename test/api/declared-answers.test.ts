import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { createApp } from '../../src/api/app.js';
import { defineRoute } from '../../src/api/route.js';
import { allRoutes } from '../../src/api/routes.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

/**
 * What the OpenAPI document promises is what the code sends. Handlers are typed against their
 * declared responses; in tests every answer is also checked at run time (FERRY_CHECK_RESPONSES),
 * and the test run fails when some route never had a success checked (test/setup/global-teardown.js).
 * Here: the run-time check itself, and every route's error answers against the document.
 */

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack.close();
});

describe('the run-time check of answers', () => {
  const drifted = defineRoute({
    method: 'GET',
    path: '/drifted',
    operationId: 'drifted',
    summary: 'Answers a shape it does not declare',
    tags: ['Test'],
    auth: ['none'],
    responses: { 200: { description: 'A number', schema: Type.Object({ count: Type.Integer() }) } },
  }).handle(async () => ({ status: 200, body: JSON.parse('{"count":"three"}') as { count: number } }));

  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createApp('api', [drifted]).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/drifted`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fails a request whose answer its schema refuses, instead of sending it', async () => {
    const response = await request('GET', url);
    expect(response.status).toBe(500);
    expect(JSON.stringify(response.body)).not.toContain('three');
  });
});

describe('error answers of every route', () => {
  const hosts = ['api', 'read', 'write', 'search'] as const;
  const documents: Record<string, any> = {};
  beforeAll(async () => {
    for (const host of hosts)
      documents[host] = (await request('GET', `${stack.urls[host]}/openapi.json`)).body;
  });

  /** The document's problem schema, compiled from the served JSON rather than from Ferry's own TypeBox. */
  function problemCheck(host: string, path: string, method: string) {
    const operation = documents[host].paths[path][method];
    const content = operation.responses.default.content['application/problem+json'];
    return Compile(content.schema);
  }

  const concrete = (path: string) =>
    path.replace(/\{projectIdOrName\}/g, 'no-such-project').replace(/\{(\w+)\}/g, 'missing-$1');

  const cases = allRoutes().flatMap((route) =>
    (route.hosts ?? ['api']).map((host) => [host, route.method, route.path, route.auth] as const),
  );

  it.each(cases)(
    '%s %s %s answers a documented problem without credentials',
    async (host, method, path, auth) => {
      if (auth.includes('none')) return; // public: nothing to refuse
      const response = await request(method, `${stack.urls[host]}${concrete(path)}`, {
        ...(['POST', 'PUT', 'PATCH'].includes(method) && { body: {} }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      const check = problemCheck(host, `/v1${path}`, method.toLowerCase());
      expect([...check.Errors(response.body)]).toEqual([]);
    },
  );

  it.each(cases)(
    '%s %s %s answers a documented problem for a project the caller cannot see',
    async (host, method, path) => {
      if (!path.includes('{projectIdOrName}')) return;
      const response = await request(method, `${stack.urls[host]}${concrete(path)}`, {
        apiKey: stack.project.apiKey,
        ...(['POST', 'PUT', 'PATCH'].includes(method) && { body: {} }),
      });
      // Either the body is refused first (400) or the project is not found (404); never a 5xx.
      expect([400, 404]).toContain(response.status);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      const check = problemCheck(host, `/v1${path}`, method.toLowerCase());
      expect([...check.Errors(response.body)]).toEqual([]);
    },
  );
});
