import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

/** A webhook receiver on 127.0.0.1 that records every request and answers as the test tells it. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Answers by path; 204 when nothing was set for the path. */
  answer(path: string, answers: Answer | ((request: ReceivedRequest, index: number) => Answer)): void;
  /** Resolves with the requests to `path` once `count` arrived, or rejects after `timeoutMs`. */
  waitFor(path: string, count?: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const answers = new Map<string, (request: ReceivedRequest, index: number) => Answer>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const path = req.url ?? '/';
      const request = { path, headers: req.headers, body, json };
      requests.push(request);
      const index = requests.filter((other) => other.path === path).length - 1;
      const answer = answers.get(path)?.(request, index) ?? { status: 204 };
      res.writeHead(answer.status, answer.headers);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer(path, answer) {
      answers.set(path, typeof answer === 'function' ? answer : () => answer);
    },
    async waitFor(path, count = 1, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = requests.filter((request) => request.path === path);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) {
          throw new Error(
            `expected ${count} request(s) to ${path} within ${timeoutMs} ms, got ${matching.length}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
