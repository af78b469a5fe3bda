import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Type from 'typebox';
import { config } from '../../src/config.js';
import { MAX_JSON_DEPTH } from '../../src/core/input-limits.js';
import { pageTokenCodec } from '../../src/crypto/page-token.js';
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

  it('refuses a body that is not UTF-8 on every listener, saying so, where it once kept U+FFFD', async () => {
    const notUtf8 = (name: string, bad: number) =>
      Buffer.concat([Buffer.from(`{"name":"${name}`), Buffer.from([bad]), Buffer.from('"}')]);
    for (const bad of [0xff, 0xfe, 0xc3]) {
      const response = await stack.api('POST', `${base}/topics`, {
        rawBody: notUtf8('café', bad),
        headers: { 'content-type': 'application/json' },
      });
      expect([bad, response.status]).toEqual([bad, 400]);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(response.body.detail).toMatch(/not valid UTF-8/);
    }
    expect((await stack.api('GET', `${base}/topics`)).body).toEqual([]);
    const integration = `${base}/integrations/${randomUUID()}`;
    for (const [host, path] of [
      ['read', `${integration}/objects/contacts`],
      ['write', `${integration}/objects/contacts`],
      ['search', `${integration}?groupRef=g`],
    ] as const) {
      const response = await stack[host]('POST', path, {
        rawBody: notUtf8('x', 0xff),
        headers: { 'content-type': 'application/json' },
      });
      expect([host, response.status, response.body.detail]).toEqual([
        host,
        400,
        expect.stringMatching(/not valid UTF-8/),
      ]);
    }
  });

  it('refuses a lone surrogate in a body string or key, naming where it is, and keeps a pair', async () => {
    const send = (json: string) =>
      stack.api('POST', `${base}/topics`, { rawBody: json, headers: { 'content-type': 'application/json' } });
    for (const escaped of ['\\ud800', '\\udfff', 'a\\ud83d', '\\ude00b']) {
      const response = await send(`{"name":"${escaped}"}`);
      expect([escaped, response.status]).toEqual([escaped, 400]);
      expect(response.body.issues[0]).toMatchObject({
        in: 'body',
        name: 'name',
        detail: expect.stringMatching(/name contains a lone surrogate \(\\uD[89A-F][0-9A-F]{2}\)/),
      });
    }
    const inKey = await stack.api('POST', `${base}/destinations`, {
      rawBody:
        '{"name":"s","type":"webhook","metadata":{"url":"https://example.com","headers":{"X-\\ud800":"v"}}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(inKey.status).toBe(400);
    expect(inKey.body.issues[0]).toMatchObject({
      in: 'body',
      detail: expect.stringMatching(/lone surrogate/),
    });
    expect((await stack.api('GET', `${base}/topics`)).body).toEqual([]);
    // A surrogate pair is one character (😀), and U+FFFD sent as itself is a character like any other.
    const pair = await send('{"name":"smile \\ud83d\\ude00"}');
    expect(pair.status).toBe(201);
    expect(pair.body.name).toBe('smile 😀');
    expect((await stack.api('GET', `${base}/topics/${pair.body.id}`)).body.name).toBe('smile 😀');
    const replacement = await send('{"name":"\u{FFFD}"}');
    expect(replacement.status).toBe(201);
    await stack.api('DELETE', `${base}/topics/${pair.body.id}`);
    await stack.api('DELETE', `${base}/topics/${replacement.body.id}`);
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

  it('reads a compressed JSON body, and holds its decompressed size to the limit', async () => {
    const json = (name: string) => Buffer.from(JSON.stringify({ name }));
    for (const [encoding, compress] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const) {
      const response = await stack.api('POST', `${base}/topics`, {
        rawBody: compress(json(`zipped ${encoding}`)),
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      });
      expect([encoding, response.status, response.body.name]).toEqual([encoding, 201, `zipped ${encoding}`]);
      await stack.api('DELETE', `${base}/topics/${response.body.id}`);
    }
    const notUtf8 = await stack.api('POST', `${base}/topics`, {
      rawBody: gzipSync(Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(notUtf8.status).toBe(400);
    expect(notUtf8.body.detail).toMatch(/not valid UTF-8/);
    // 11 MB of spaces, a few KB compressed: the limit (10 MB) counts what the body decompresses to.
    const bomb = await stack.api('POST', `${base}/topics`, {
      rawBody: gzipSync(
        Buffer.concat([Buffer.from('{"name":"x"'), Buffer.alloc(11 * 1024 * 1024, 0x20), Buffer.from('}')]),
      ),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(bomb.status).toBe(413);
    expect((await stack.api('GET', `${base}/topics`)).body).toEqual([]);
  });

  it('answers a body sent in chunks past the limit with 413, not a closed connection', async () => {
    const response = await new Promise<{ status: number; type: string }>((resolve, reject) => {
      const req = httpRequest(
        `${stack.urls.api}${base}/topics`,
        {
          method: 'POST',
          headers: { 'x-api-key': stack.project.apiKey, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode!, type: String(res.headers['content-type']) });
        },
      );
      req.on('error', reject);
      req.write(`{"name":"${'x'.repeat(1024 * 1024)}`);
      // Chunks keep coming until the answer arrives, as a client streaming a large upload does.
      const more = setInterval(() => req.write('x'.repeat(1024 * 1024)), 5);
      req.on('response', () => {
        clearInterval(more);
        req.destroy();
      });
    });
    expect(response).toEqual({ status: 413, type: expect.stringMatching(/application\/problem\+json/) });
  });

  it('keeps serving after clients leave halfway through a body, plain or compressed', async () => {
    const { port } = new URL(stack.urls.api);
    for (const encoding of ['identity', 'gzip']) {
      const partial =
        encoding === 'gzip' ? gzipSync(Buffer.from('{"name":"gone"}')).subarray(0, 8) : '{"name":';
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(
            `POST /v1${base}/topics HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${stack.project.apiKey}\r\n` +
              `Content-Type: application/json\r\nContent-Encoding: ${encoding}\r\nContent-Length: 1000\r\n\r\n`,
          );
          socket.write(partial);
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    }
    expect((await stack.api('GET', `${base}/topics`)).status).toBe(200);
  });

  it('refuses a "__proto__" key in a body, however it is escaped', async () => {
    for (const key of ['__proto__', '\\u005f_proto__']) {
      const response = await stack.api('POST', `${base}/destinations`, {
        rawBody: `{"name":"p","type":"webhook","metadata":{"url":"https://example.com","${key}":{"x":1}}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect([key, response.status]).toEqual([key, 400]);
      expect(response.body.detail).toMatch(/__proto__/);
    }
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

  it('refuses page tokens it did not sign, and signed ones whose values the database cannot hold', async () => {
    // Tokens signed as the listings sign theirs (crypto/page-token): only their positions are wrong.
    const eventsToken = (time: string) =>
      pageTokenCodec('events', Type.Unknown()).encode(
        stack.project.id,
        { time, id: '00000000-0000-0000-0000-000000000000' },
        config().encryptionKey,
      );
    for (const time of ['2024-99-99T99:99:99.000000Z', '2024-02-30T00:00:00.000000Z']) {
      const response = await stack.api('GET', `${base}/events?pageToken=${eventsToken(time)}`);
      expect([time, response.status]).toEqual([time, 400]);
    }
    const unsigned = Buffer.from(
      JSON.stringify(['2024-01-01T00:00:00.000000Z', '00000000-0000-0000-0000-000000000000']),
    ).toString('base64url');
    expect((await stack.api('GET', `${base}/events?pageToken=${unsigned}`)).status).toBe(400);

    const destination = await stack.api('POST', `${base}/destinations`, {
      body: { name: 'attempts-hook', type: 'webhook', metadata: { url: 'http://127.0.0.1:9/hook' } },
    });
    const attemptsToken = (id: string) =>
      pageTokenCodec('delivery-attempts', Type.Unknown()).encode(
        `${stack.project.id}/${destination.body.id}`,
        { id },
        config().encryptionKey,
      );
    for (const [token, status] of [
      ['9223372036854775807', 400],
      [attemptsToken('9999999999999999999'), 400],
      [attemptsToken('9223372036854775808'), 400],
      [attemptsToken('9223372036854775807'), 200],
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
      expect(response.body.detail).toMatch(/"groupRef" claim must be a group reference/);
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
