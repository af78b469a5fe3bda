import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, with whether its Standard Webhooks signature checked out. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: any;
  /** `webhook-id`: stable across redeliveries of one message. */
  messageId: string;
  /** The signature matched one of the receiver's secrets (webhook-* headers and svix-* alike). */
  verified: boolean;
  /** What the receiver answered. */
  status: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

type Responder = (request: Omit<ReceivedRequest, 'status'>, index: number) => Reply | Promise<Reply>;

function verify(secrets: readonly string[], rawBody: string, headers: IncomingHttpHeaders): boolean {
  const webhookHeaders = {
    'webhook-id': String(headers['webhook-id'] ?? ''),
    'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
    'webhook-signature': String(headers['webhook-signature'] ?? ''),
  };
  // Receivers written for Svix read the svix-* names; they must carry the same values.
  const svixHeaders = {
    'webhook-id': String(headers['svix-id'] ?? ''),
    'webhook-timestamp': String(headers['svix-timestamp'] ?? ''),
    'webhook-signature': String(headers['svix-signature'] ?? ''),
  };
  return secrets.some((secret) => {
    try {
      const webhook = new Webhook(secret);
      webhook.verify(rawBody, webhookHeaders);
      webhook.verify(rawBody, svixHeaders);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * A local webhook receiver on 127.0.0.1 that verifies every request with the `standardwebhooks`
 * package and answers as the test says (200 by default; 503s while a test plays "down").
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  secrets: string[] = [];
  #responder: Responder = () => ({ status: 200 });
  readonly #server: Server;

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on(
        'end',
        () => void this.#handle(req.url ?? '/', req.headers, Buffer.concat(chunks).toString(), res),
      );
    });
    this.#server.keepAliveTimeout = 30_000;
  }

  static async start(secrets: string[] = []): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    receiver.secrets = secrets;
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  async #handle(path: string, headers: IncomingHttpHeaders, rawBody: string, res: ServerResponse) {
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = rawBody;
    }
    const request = {
      path,
      headers,
      rawBody,
      body,
      messageId: String(headers['webhook-id'] ?? ''),
      verified: verify(this.secrets, rawBody, headers),
    };
    let reply: Reply;
    try {
      reply = await this.#responder(request, this.requests.length);
    } catch {
      reply = { status: 500 };
    }
    this.requests.push({ ...request, status: reply.status });
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body ?? '');
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  respond(responder: Responder): void {
    this.#responder = responder;
  }

  /** Requests answered 2xx: what the receiver accepted. */
  accepted(): ReceivedRequest[] {
    return this.requests.filter((request) => request.status >= 200 && request.status < 300);
  }

  /** Every record id accepted in read messages, duplicates included. */
  acceptedRecordIds(): string[] {
    return this.accepted().flatMap((request) =>
      Array.isArray(request.body?.result)
        ? request.body.result.map((entry: any) => String(entry.raw?.id))
        : [],
    );
  }

  async waitFor(condition: () => boolean, timeoutMs = 30_000, what = 'the receiver'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}; ${this.requests.length} requests so far`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
