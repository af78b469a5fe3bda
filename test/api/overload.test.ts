import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import Koa from 'koa';
import { problems, requestId } from '../../src/api/middleware.js';

/**
 * Every database connection busy for the pool's whole wait (what `bench:api` hit with 50 clients
 * listing 10,000 rows each) is an overload: 503 with Retry-After, never a 500.
 */
let server: Server;
let url: string;

beforeAll(async () => {
  const app = new Koa();
  app.use(requestId);
  app.use(problems);
  app.use(() => {
    // What knex (under MikroORM) throws when no pooled connection frees up in time.
    throw Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
      name: 'KnexTimeoutError',
    });
  });
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/anything`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('answers an exhausted database pool with 503, Retry-After and a problem detail', async () => {
  const response = await fetch(url);
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('5');
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(await response.json()).toMatchObject({ status: 503, retryable: true });
});
