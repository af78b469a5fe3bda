import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_JSON_DEPTH } from '../../src/core/input-limits.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Hostile input meets a problem-details 4xx, never a 5xx: NUL characters, deep nesting, huge values,
 * unknown methods and encodings, oversized headers. Each class is bounded in one place (the input
 * middleware, the listener), so every route is covered by the same checks.
 */

let stack: TestStack;
let base: string;

beforeAll(async () => {
  stack = await startTestStack();
  base = `/projects/${stack.project.name}`;
});
afterAll(() => stack?.close());

/** A raw request, for what fetch refuses to send (TRACE, made-up encodings, huge headers). */
function raw(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(`${stack.urls.api}${path}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, headers: { 'x-api-key': stack.project.apiKey, ...options.headers } },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, type: String(res.headers['content-type'] ?? ''), body }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('hostile input', () => {
  it('refuses a NUL character in a body string or key, naming where it is', async () => {
    const inName = await stack.api('POST', `${base}/destinations`, {
      body: { name: 'bad\u0000name', type: 'webhook', metadata: { url: 'https://example.com' } },
    });
    expect(inName.status).toBe(400);
    expect(inName.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(inName.body.issues[0]).toMatchObject({ name: '/name', detail: expect.stringMatching(/NUL/) });
    const inKey = await stack.api('POST', `${base}/destinations`, {
      body: { name: 'ok', type: 'webhook', metadata: { url: 'https://example.com', ['x\u0000']: 1 } },
    });
    expect(inKey.status).toBe(400);
    expect((await stack.api('GET', `${base}/destinations`)).body.results ?? []).toEqual([]);
  });

  it('refuses a NUL character in a path id or a query value', async () => {
    const inPath = await stack.api('GET', `${base}/integrations/abc%00def`);
    expect(inPath.status).toBe(400);
    expect(inPath.body.detail).toMatch(/NUL/);
    const inQuery = await stack.api('GET', `${base}/integrations?pageToken=a%00b`);
    expect(inQuery.status).toBe(400);
  });

  it('refuses JSON nested deeper than the bound with a short answer, however deep', async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const response = await stack.api('POST', `${base}/destinations`, {
        rawBody: `{"name":"deep","type":"webhook","metadata":{"url":"https://example.com","headers":${nested(depth)}}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0].detail).toMatch(/nested deeper than/);
      expect(JSON.stringify(response.body).length).toBeLessThan(2_000);
    }
  });

  it('echoes at most a short part of a huge value in an error', async () => {
    const huge = 'x'.repeat(1_000_000);
    const response = await stack.api('POST', `${base}/destinations`, {
      body: { name: huge, type: 'webhook', metadata: { url: 'https://example.com' } },
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body).length).toBeLessThan(5_000);
  });

  it('answers unknown methods with 405 problem details', async () => {
    for (const method of ['TRACE', 'PROPFIND']) {
      const response = await raw(method, `${base}/integrations`);
      expect(response.status).toBe(405);
      expect(response.type).toMatch(/application\/problem\+json/);
    }
  });

  it('answers a body in an unknown Content-Encoding with 415', async () => {
    const response = await raw('POST', `${base}/destinations`, {
      headers: { 'content-type': 'application/json', 'content-encoding': 'bogus' },
      body: '{}',
    });
    expect(response.status).toBe(415);
    expect(response.type).toMatch(/application\/problem\+json/);
    const broken = await raw('POST', `${base}/destinations`, {
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: 'not gzip at all',
    });
    expect(broken.status).toBe(400);
    expect(broken.type).toMatch(/application\/problem\+json/);
  });

  it('answers headers over 16 KB with a 431 problem, not an empty reply', async () => {
    const response = await raw('GET', `${base}/integrations`, {
      headers: { 'x-padding': 'p'.repeat(17_000) },
    });
    expect(response.status).toBe(431);
    expect(response.type).toBe('application/problem+json');
    expect(JSON.parse(response.body)).toMatchObject({ status: 431 });
  });

  it('answers 404, not 500, for ids that are no UUID in every kind of path', async () => {
    for (const path of [`${base}/operations/0:retry`, `${base}/events/0:retry`]) {
      const response = await stack.api('POST', path);
      expect([path, response.status]).toEqual([path, 404]);
    }
  });

  it('refuses a manifest whose aliases expand without bound', async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    ].join('\n');
    const response = await stack.api('PUT', `${base}/integrations:batch`, { body: { sourceYaml: bomb } });
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/YAML/);
  });
});
