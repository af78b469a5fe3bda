import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import {
  deliverMessage,
  parseRetryAfter,
  RESPONSE_BODY_LIMIT,
  type DeliveryRequest,
} from '../../src/delivery/deliver.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { closeGuardedDispatchers } from '../../src/delivery/url-guard.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local webhook receiver answering with `handler` and remembering every request. */
class Receiver {
  readonly received: Received[] = [];
  readonly #server: Server;

  constructor(handler: (request: Received, response: ServerResponse) => void) {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        };
        this.received.push(request);
        handler(request, res);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const receivers: Receiver[] = [];

async function receiver(handler: (request: Received, response: ServerResponse) => void): Promise<Receiver> {
  const started = await new Receiver(handler).start();
  receivers.push(started);
  return started;
}

function answer(status: number, body = '', headers: Record<string, string> = {}) {
  return (_request: Received, response: ServerResponse) => {
    response.writeHead(status, headers);
    response.end(body);
  };
}

const secret = generateSigningSecret();
const body = JSON.stringify({ action: 'read', result: [{ fields: { id: '1' } }] });

function message(url: string, overrides: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    url,
    body,
    messageId: 'msg_test',
    secrets: [secret],
    timeoutMs: 5000,
    allowPrivate: true,
    ...overrides,
  };
}

afterAll(async () => {
  await Promise.all(receivers.map((started) => started.stop()));
  await closeGuardedDispatchers();
});

describe('deliverMessage', () => {
  it('POSTs the signed JSON body and reports a 2xx as delivered', async () => {
    const hook = await receiver(answer(200, 'thanks'));
    // Reserved names are ignored whatever their case: a duplicate Webhook-Id would confuse receivers.
    const headers = {
      Authorization: 'Bearer destination-token',
      'Webhook-Id': 'forged',
      'Content-Type': 'text/plain',
    };
    const result = await deliverMessage(message(hook.url(), { headers }));

    expect(result).toMatchObject({
      ok: true,
      status: 200,
      responseBody: 'thanks',
      retryable: false,
      gone: false,
    });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const [received] = hook.received;
    expect(received.method).toBe('POST');
    expect(received.body).toBe(body);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers.authorization).toBe('Bearer destination-token');
    expect(received.headers['webhook-id']).toBe('msg_test');
    expect(received.headers['svix-id']).toBe('msg_test');
    const signed = {
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    };
    expect(new Webhook(secret).verify(received.body, signed)).toEqual(JSON.parse(body));
  });

  it('reports a 500 as retryable', async () => {
    const hook = await receiver(answer(500, 'boom'));
    const result = await deliverMessage(message(hook.url()));
    expect(result).toMatchObject({
      ok: false,
      status: 500,
      retryable: true,
      gone: false,
      failure: 'status',
      responseBody: 'boom',
    });
    expect(result.error).toBe(`${hook.url()} answered 500`);
  });

  it('reports a 429 as retryable and honours Retry-After in seconds', async () => {
    const hook = await receiver(answer(429, '', { 'retry-after': '120' }));
    const result = await deliverMessage(message(hook.url()));
    expect(result).toMatchObject({ ok: false, status: 429, retryable: true, retryAfterMs: 120_000 });
  });

  it('honours Retry-After given as an HTTP date', async () => {
    const hook = await receiver(
      answer(503, '', { 'retry-after': new Date(Date.now() + 90_000).toUTCString() }),
    );
    const result = await deliverMessage(message(hook.url()));
    expect(result.retryable).toBe(true);
    expect(result.retryAfterMs).toBeGreaterThan(85_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(90_000);
  });

  it('reports a 410 as gone and not retryable', async () => {
    const hook = await receiver(answer(410));
    expect(await deliverMessage(message(hook.url()))).toMatchObject({
      ok: false,
      status: 410,
      gone: true,
      retryable: false,
    });
  });

  it('reports a 400 as not retryable', async () => {
    const hook = await receiver(answer(400, '{"error":"bad"}'));
    const result = await deliverMessage(message(hook.url()));
    expect(result).toMatchObject({
      ok: false,
      status: 400,
      retryable: false,
      gone: false,
      responseBody: '{"error":"bad"}',
    });
    expect(result.retryAfterMs).toBeUndefined();
  });

  it('times out a receiver that does not answer, as retryable', async () => {
    const hook = await receiver(() => undefined);
    const result = await deliverMessage(message(hook.url(), { timeoutMs: 300 }));
    expect(result).toMatchObject({
      ok: false,
      retryable: true,
      failure: 'timeout',
      error: 'no response within 300 ms',
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
  });

  it('reports a refused connection as retryable', async () => {
    const hook = await receiver(answer(200));
    const url = hook.url();
    await hook.stop();
    const result = await deliverMessage(message(url));
    expect(result).toMatchObject({
      ok: false,
      retryable: true,
      failure: 'network',
      error: 'connection failed (ECONNREFUSED)',
    });
  });

  it('keeps at most 2 KB of the response body, cut at a character boundary', async () => {
    const hook = await receiver(answer(200, 'é'.repeat(5000)));
    const result = await deliverMessage(message(hook.url()));
    expect(Buffer.byteLength(result.responseBody)).toBeLessThanOrEqual(RESPONSE_BODY_LIMIT);
    expect(result.responseBody).toBe('é'.repeat(RESPONSE_BODY_LIMIT / 2));
  });

  it('refuses a loopback destination when private destinations are not allowed, without sending', async () => {
    const hook = await receiver(answer(200));
    const result = await deliverMessage(message(hook.url(), { allowPrivate: false }));
    expect(result).toMatchObject({ ok: false, retryable: false, failure: 'refused' });
    expect(result.error).toBe(
      '127.0.0.1 is a loopback address; webhook destinations must be public internet addresses',
    );
    const viaName = await deliverMessage(
      message(hook.url().replace('127.0.0.1', 'localhost'), { allowPrivate: false }),
    );
    expect(viaName.error).toMatch(/^localhost resolves to .*, which is a loopback address/);
    expect(hook.received).toHaveLength(0);
  });

  it('follows redirects, repeating the POST, and drops destination headers when the origin changes', async () => {
    const final = await receiver(answer(202, 'accepted'));
    const hop = await receiver((_request, response) => {
      response.writeHead(308, { location: final.url('/final') });
      response.end();
    });
    // The entry redirects to itself once (same origin, relative Location), then hands over to `hop`.
    const entry = await receiver((request, response) => {
      response.writeHead(request.url === '/moved' ? 307 : 301, {
        location: request.url === '/moved' ? hop.url() : '/moved',
      });
      response.end();
    });

    const result = await deliverMessage(
      message(entry.url(), { headers: { authorization: 'Bearer destination-token' } }),
    );
    expect(result).toMatchObject({ ok: true, status: 202, responseBody: 'accepted' });
    expect(
      entry.received.map((request) => [request.method, request.url, request.headers.authorization]),
    ).toEqual([
      ['POST', '/hook', 'Bearer destination-token'],
      ['POST', '/moved', 'Bearer destination-token'],
    ]);
    const [delivered] = final.received;
    expect(delivered).toMatchObject({ method: 'POST', url: '/final', body });
    expect(delivered.headers.authorization).toBeUndefined();
    expect(delivered.headers['webhook-signature']).toBeDefined();
  });

  it('follows a 303 with a GET', async () => {
    const result = await receiver(answer(200, 'done'));
    const entry = await receiver((_request, response) => {
      response.writeHead(303, { location: result.url('/status') });
      response.end();
    });
    expect(await deliverMessage(message(entry.url()))).toMatchObject({ ok: true, status: 200 });
    expect(result.received[0]).toMatchObject({ method: 'GET', body: '' });
  });

  it('gives up after 5 redirects', async () => {
    const loop = await receiver((request, response) => {
      response.writeHead(302, { location: `/again${request.url}` });
      response.end();
    });
    const result = await deliverMessage(message(loop.url()));
    expect(result).toMatchObject({
      ok: false,
      status: 302,
      retryable: false,
      error: 'more than 5 redirects',
    });
    expect(loop.received).toHaveLength(6);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/internal',
    'http://[::1]:9/',
    'http://127.0.0.2:9/',
    'http://[::ffff:7f00:2]:9/',
  ])('re-checks every redirect: an allowed first hop redirecting to %s is refused', async (target) => {
    const entry = await receiver((_request, response) => {
      response.writeHead(302, { location: target });
      response.end();
    });
    // Only the first hop's address is allowed, standing in for a public receiver.
    const result = await deliverMessage(
      message(entry.url(), { allowPrivate: false, allowedAddresses: ['127.0.0.1'] }),
    );
    expect(entry.received).toHaveLength(1);
    expect(result).toMatchObject({ ok: false, status: 302, retryable: false, failure: 'refused' });
    expect(result.error).toMatch(
      new RegExp(`^redirect from ${entry.url()} refused: .* is an? [a-z-]+ address`),
    );
  });

  it('keeps query strings and bad secrets out of error messages', async () => {
    const hook = await receiver(answer(500));
    const result = await deliverMessage(message(`${hook.url()}?token=query-secret`));
    expect(result.error).toBe(`${hook.url()} answered 500`);
    const badSecret = await deliverMessage(
      message(hook.url(), { secrets: ['whsec_!!!not-base64-secret!!!'] }),
    );
    expect(badSecret).toMatchObject({ ok: false, retryable: false, failure: 'invalid-request' });
    expect(badSecret.error).toBe('signing secret #1 is not a whsec_<base64> secret');
  });

  it('refuses a non-http URL without throwing', async () => {
    const result = await deliverMessage(message('ftp://example.com/hook'));
    expect(result).toMatchObject({ ok: false, retryable: false, failure: 'refused' });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');

  it('reads delay-seconds and HTTP dates, and ignores anything else', () => {
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
    expect(parseRetryAfter(' 2026 ', now)).toBe(2_026_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:02:00 GMT', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('Sunday, 01-Mar-26 12:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
