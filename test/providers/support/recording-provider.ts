import { afterAll, beforeAll } from '@jest/globals';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a recording provider was asked: the request line, the parsed JSON body, and when. */
export interface RecordedRequest {
  method: string;
  url: URL;
  /** The path and query as sent. */
  path: string;
  body: unknown;
  at: number;
}

export interface ProviderAnswer {
  status?: number;
  body?: unknown;
}

export interface RecordingProvider {
  /** `http://127.0.0.1:<port>`, the base URL a connector under test is pointed at. */
  url: string;
  seen: RecordedRequest[];
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) text += chunk;
  return text ? (JSON.parse(text) as unknown) : undefined;
}

/**
 * A tiny local provider for connector unit tests: it records each request and answers with what
 * `answer` makes of it (JSON, status 200 unless told).
 */
export async function startRecordingProvider(
  answer: (request: RecordedRequest) => ProviderAnswer | Promise<ProviderAnswer>,
): Promise<RecordingProvider> {
  const seen: RecordedRequest[] = [];
  const server = createServer(async (request, response) => {
    const recorded = {
      method: request.method ?? '',
      url: new URL(request.url ?? '/', 'http://localhost'),
      path: request.url ?? '/',
      body: await readBody(request),
      at: Date.now(),
    };
    seen.push(recorded);
    const { status = 200, body } = await answer(recorded);
    response
      .writeHead(status, { 'content-type': 'application/json' })
      .end(body === undefined ? '' : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A test file's recording provider: what it was asked, and how it answers (reassignable per test). */
export interface LocalProvider {
  url: string;
  /** One array for the whole file: empty it (`seen.length = 0`) to start a test afresh. */
  readonly seen: RecordedRequest[];
  answer: (request: RecordedRequest) => ProviderAnswer | Promise<ProviderAnswer>;
}

/** Starts a recording provider before the file's tests and closes it after them. */
export function useRecordingProvider(): LocalProvider {
  const local: LocalProvider = { url: '', seen: [], answer: () => ({ body: {} }) };
  let provider: RecordingProvider | undefined;
  beforeAll(async () => {
    provider = await startRecordingProvider((request) => {
      local.seen.push(request);
      return local.answer(request);
    });
    local.url = provider.url;
  });
  afterAll(() => provider?.close());
  return local;
}
