import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import type { Context, Middleware, Next } from 'koa';
import { ProblemError } from '../core/problem.js';

/**
 * How the api, read, write and search listeners read request bodies (the proxy streams its own
 * through unread). A JSON body is decompressed as its Content-Encoding says, held to the size
 * limit, and decoded as UTF-8 strictly (RFC 8259): bytes that are not UTF-8 are refused, never
 * replaced with U+FFFD, which would keep another value than the one sent and make two different
 * inputs one.
 */

const tooLarge = () =>
  new ProblemError({ status: 413, detail: 'The request body is larger than the configured limit.' });

/** The body's bytes, at most `limit` of them; a larger body is refused (413) without reading the rest. */
function readAll(stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: unknown, body?: Buffer) => {
      if (settled) return;
      settled = true;
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      // A failure after the answer (a client leaving during a 413) has nothing left to tell.
      stream.on('error', () => undefined);
      if (error) reject(error);
      else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Left paused, not destroyed: the connection must still carry the 413.
      stream.pause();
      settle(tooLarge());
    };
    const onEnd = () => settle(undefined, Buffer.concat(chunks, size));
    const onError = (error: Error & { code?: string }) =>
      settle(
        // zlib's and Brotli's own errors say the encoding was wrong (the problems middleware maps them).
        /^(Z_|ERR__ERROR_|ERR_BROTLI_)/.test(error.code ?? '')
          ? error
          : ProblemError.badRequest('The request body ended before it was complete.'),
      );
    const onClose = () => settle(ProblemError.badRequest('The request body ended before it was complete.'));
    stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** The request's bytes as its Content-Encoding says to decompress them. */
function decompressed(req: IncomingMessage): Readable {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return req;
  const decompressor =
    encoding === 'gzip' || encoding === 'deflate'
      ? createUnzip()
      : encoding === 'br'
        ? createBrotliDecompress()
        : undefined;
  if (!decompressor) {
    throw new ProblemError({
      status: 415,
      detail: 'The request body’s Content-Encoding is not supported; send gzip, deflate, br or none.',
    });
  }
  // Not `pipeline`: its failure would destroy the request, and with it the socket the 400 goes out on.
  req.pipe(decompressor);
  // A request cut short ends the decompressor too, so reading never waits for bytes that will not come.
  req.once('close', () => {
    if (!req.complete) decompressor.destroy(new Error('the request ended early'));
  });
  return decompressor;
}

/** Reads the exact bytes of a request into `ctx.state.rawBody`, whatever their type: provider webhooks are signed over them. */
export function rawBodyReader(limitBytes: number): Middleware {
  return async function readRawBody(ctx: Context, next: Next): Promise<void> {
    ctx.state.rawBody = await readAll(ctx.req, limitBytes);
    await next();
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Whitespace JSON allows before its first token (RFC 8259), then an object or an array. */
const objectOrArray = /^[ \t\n\r]*[[{]/;
/** A `"__proto__":` key, however its characters are escaped: only then is the parse checked for one. */
const protoKey =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

/** Parses JSON text, refusing a `__proto__` key: merged into an object, it would change its prototype. */
function parseJson(text: string): unknown {
  if (!protoKey.test(text)) return JSON.parse(text);
  return JSON.parse(text, (key, value: unknown) => {
    if (key === '__proto__') {
      throw ProblemError.badRequest('The request body has a "__proto__" key, which is not allowed.');
    }
    return value;
  });
}

/** The JSON value of a body's bytes: an object or an array, `{}` for no bytes at all. */
function jsonOf(bytes: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw ProblemError.badRequest(
      'The request body is not valid UTF-8; send JSON encoded as UTF-8 (RFC 8259).',
    );
  }
  if (!text) return {};
  if (!objectOrArray.test(text)) {
    throw ProblemError.badRequest('The request body is not valid JSON: it must be an object or an array.');
  }
  try {
    return parseJson(text);
  } catch (error) {
    if (error instanceof ProblemError) throw error;
    throw ProblemError.badRequest('The request body is not valid JSON.');
  }
}

const methodsWithBodies = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Reads a POST, PUT or PATCH body into `ctx.request.body`: its JSON value, or `{}` when it has no
 * JSON (no body; `requireJsonBody` has refused any other type).
 */
export function jsonBodyReader(limitBytes: number): Middleware {
  return async function readJsonBody(ctx: Context, next: Next): Promise<void> {
    if (methodsWithBodies.has(ctx.method)) {
      let body: unknown = {};
      if (ctx.is('application/json', 'application/*+json')) {
        const bytes = decompressed(ctx.req);
        // A body that says it is too large is refused before a byte of it is read.
        if (bytes === ctx.req && Number(ctx.get('content-length')) > limitBytes) throw tooLarge();
        body = jsonOf(await readAll(bytes, limitBytes));
      }
      (ctx.request as { body?: unknown }).body = body;
    }
    await next();
  };
}
