import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_JSON_DEPTH } from '../../src/core/input-limits.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { projectJwtMinter } from '../support/project-jwt.js';

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
  // A path outside the API (`/console/...`) is taken from the listener's root.
  const url = new URL(
    path.startsWith('/v1/') || !path.startsWith('/console')
      ? `${stack.urls.api}${path}`
      : `${new URL(stack.urls.api).origin}${path}`,
  );
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
    expect(inName.body.issues[0]).toMatchObject({ name: 'name', detail: expect.stringMatching(/NUL/) });
    const inKey = await stack.api('POST', `${base}/destinations`, {
      body: { name: 'ok', type: 'webhook', metadata: { url: 'https://example.com', ['x\u0000']: 1 } },
    });
    expect(inKey.status).toBe(400);
    // Named as every other issue names a property: dotted, not a JSON pointer.
    expect(inKey.body.issues[0]).toMatchObject({ in: 'body', name: 'metadata.x\u0000' });
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
    const notBrotli = await raw('POST', `${base}/destinations`, {
      headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
      body: 'xxxxxxxxxxxx',
    });
    expect(notBrotli.status).toBe(400);
    expect(notBrotli.type).toMatch(/application\/problem\+json/);
  });

  it('answers CONNECT with a 405 problem, not a closed socket', async () => {
    const { port } = new URL(stack.urls.api);
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write('CONNECT 127.0.0.1:5432 HTTP/1.1\r\nHost: 127.0.0.1:5432\r\n\r\n'),
      );
      socket.on('data', (chunk) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(answer).toContain('application/problem+json');
  });

  it('takes a Host header shaped like an address but none as no host at all', async () => {
    for (const host of ['[:::]', '[1:2:3:4:5:6:7:8:9]', '[::1]:99999999']) {
      const response = await raw('GET', '/console/config.json', { headers: { host } });
      expect([host, response.status]).toEqual([host, 200]);
      expect(response.body).toContain('localhost');
    }
  });

  it('refuses page tokens that decode to values the database cannot hold', async () => {
    const eventsToken = (time: string) =>
      Buffer.from(JSON.stringify([time, '00000000-0000-0000-0000-000000000000'])).toString('base64url');
    for (const time of ['2024-99-99T99:99:99.000000Z', '2024-02-30T00:00:00.000000Z']) {
      const response = await stack.api('GET', `${base}/events?pageToken=${eventsToken(time)}`);
      expect([time, response.status]).toEqual([time, 400]);
    }
    const destination = await stack.api('POST', `${base}/destinations`, {
      body: { name: 'attempts-hook', type: 'webhook', metadata: { url: 'http://127.0.0.1:9/hook' } },
    });
    for (const [token, status] of [
      ['9999999999999999999', 400],
      ['9223372036854775808', 400],
      ['9223372036854775807', 200],
    ] as const) {
      const response = await stack.api(
        'GET',
        `${base}/destinations/${destination.body.id}/attempts?pageToken=${token}`,
      );
      expect([token, response.status]).toEqual([token, status]);
    }
  });

  it('refuses a time no calendar has, such as a leap second, where a date-time is due', async () => {
    const response = await stack.api('POST', `${base}/connections:generate`, {
      body: {
        provider: 'sandboxOAuth',
        groupRef: 'leap',
        consumerRef: 'leap',
        oauth2AuthorizationCode: { accessToken: { token: 't', expiresAt: '2024-12-31T23:59:60Z' } },
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0].name).toMatch(/accessToken/);
  });

  it('refuses credentials and header values an HTTP client could not send', async () => {
    for (const apiKey of ['key\r\nX-Evil: 1', 'ключ']) {
      const response = await stack.api('POST', `${base}/connections:generate`, {
        body: { provider: 'sandboxApiKey', groupRef: 'crlf', consumerRef: 'crlf', apiKey },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0].name).toBe('apiKey');
      // Named, never echoed: a credential refused for a stray character is still a credential.
      expect(response.body.issues[0].value).toBeNull();
      expect(JSON.stringify(response.body)).not.toContain(apiKey);
    }
    const secrets = [
      { basicAuth: { username: 'u', password: 'p'.repeat(8001) } },
      { oauth2AuthorizationCode: { accessToken: 'tok\nen-secret' } },
      { oauth2AuthorizationCode: { accessToken: { token: 'tok\nen-secret' } } },
      { oauth2ClientCredentials: { clientId: 'c', clientSecret: 's'.repeat(4001) } },
      { customAuth: { token: 'x'.repeat(8001) } },
    ];
    for (const credential of secrets) {
      const response = await stack.api('POST', `${base}/connections:generate`, {
        body: { provider: 'sandboxApiKey', groupRef: 'crlf', consumerRef: 'crlf', ...credential },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues.map((issue: { value: unknown }) => issue.value)).toEqual(
        response.body.issues.map(() => null),
      );
      expect(JSON.stringify(response.body)).not.toMatch(/ppppp|sssss|xxxxx|en-secret/);
    }
    for (const value of ['ключ', 'a\u007fb', 'a\r\nb']) {
      const response = await stack.api('POST', `${base}/destinations`, {
        body: {
          name: 'bad-header',
          type: 'webhook',
          metadata: { url: 'https://example.com', headers: { 'X-Token': value } },
        },
      });
      expect(response.status).toBe(400);
      expect(response.body.issues[0].name).toBe('metadata.headers.X-Token');
      expect(response.body.issues[0].value).toBeNull();
    }
    const tooLong = await stack.api('POST', `${base}/destinations`, {
      body: {
        name: 'long-header',
        type: 'webhook',
        metadata: { url: 'https://example.com', headers: { Authorization: `Bearer ${'h'.repeat(8200)}` } },
      },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.issues[0]).toMatchObject({ name: 'metadata.headers.Authorization', value: null });
  });

  it('bounds an update mask', async () => {
    const path = `${base}/integrations/nope/installations/00000000-0000-0000-0000-000000000000`;
    const long = await stack.api('PATCH', path, {
      body: { updateMask: Array(101).fill('config.content'), installation: {} },
    });
    expect(long.status).toBe(400);
    expect(long.body.issues[0].name).toBe('updateMask');
  });

  it('refuses a project token whose group claim is not a group reference', async () => {
    const mint = await projectJwtMinter(stack);
    for (const groupRef of [123, ['g'], null, '']) {
      const token = await mint({ groupRef: groupRef as unknown as string });
      const response = await stack.api('GET', `${base}/installations`, { apiKey: undefined, bearer: token });
      expect([groupRef, response.status]).toEqual([groupRef, 401]);
    }
    const scoped = await mint({ groupRef: 'g' });
    expect(
      (await stack.api('GET', `${base}/installations`, { apiKey: undefined, bearer: scoped })).status,
    ).toBe(200);
  });

  it('answers headers over 16 KB with a 431 problem, not an empty reply', async () => {
    const response = await raw('GET', `${base}/integrations`, {
      headers: { 'x-padding': 'p'.repeat(17_000) },
    });
    expect(response.status).toBe(431);
    expect(response.type).toBe('application/problem+json');
    expect(JSON.parse(response.body)).toMatchObject({
      status: 431,
      href: 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/431',
    });
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
