import { Readable } from 'node:stream';
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import Koa from 'koa';
import { answerCutShort, problems, requestId } from '../../src/api/middleware.js';
import { closeOrm, em as newEntityManager } from '../../src/db/orm.js';
import { logger, serializeError, serializePath } from '../../src/logger.js';

afterAll(() => closeOrm());

async function unreadableValueError(): Promise<unknown> {
  try {
    await (await newEntityManager()).execute('select ?::int as n', ['sk_live_do_not_log_me']);
  } catch (error) {
    return error;
  }
  throw new Error('the query succeeded');
}

describe('database errors', () => {
  it('are logged with what went wrong, never their statement or values', async () => {
    const thrown = await unreadableValueError();
    expect(String((thrown as Error).message)).toContain('sk_live_do_not_log_me');
    const logged = JSON.stringify(serializeError(thrown));
    expect(logged).not.toContain('sk_live_do_not_log_me');
    expect(logged).not.toContain('select');
    expect(logged).toMatch(/invalid input syntax/);
  });

  it('answer 400, not 500, when a value the request sent cannot be read as its column’s type', async () => {
    const app = new Koa();
    app.use(requestId);
    app.use(problems);
    app.use(async () => {
      throw await unreadableValueError();
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/`);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(await response.text()).not.toContain('sk_live_do_not_log_me');
    } finally {
      server.close();
    }
  });
});

describe('paths', () => {
  it('are logged with any API key in them cut to its prefix, percent-encoded or not', () => {
    const key = 'ferry_sk_AbCdEf0123456789secretpart';
    expect(serializePath(`/v1/projects/p/api-keys/${key}`)).toBe('/v1/projects/p/api-keys/ferry_sk_AbCdEf…');
    expect(serializePath('/v1/projects/p/api-keys/ferry_sk_AbCdEf%30123456789secretpart/x')).toBe(
      '/v1/projects/p/api-keys/ferry_sk_AbCdEf…/x',
    );
    expect(serializePath('/v1/projects/p/api-keys/ferry_sk_Ab%43def0123456789secretpart')).not.toContain(
      'secretpart',
    );
    expect(serializePath('/v1/projects/p/api-keys/ferry_pk_AbCdEf0123456789secretpart')).toBe(
      '/v1/projects/p/api-keys/ferry_pk_AbCdEf…',
    );
    // A key as lists show it is cut the same way, not doubled.
    expect(serializePath('/v1/projects/p/api-keys/ferry_sk_AbCdEf...')).toBe(
      '/v1/projects/p/api-keys/ferry_sk_AbCdEf…',
    );
    expect(serializePath(undefined)).toBeUndefined();
  });
});

describe('answers cut short', () => {
  it('are logged with the request when the server broke them, and not when the client left', async () => {
    const logged = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
    const app = new Koa();
    app.on('error', answerCutShort);
    app.use(requestId);
    app.use(async (ctx) => {
      // An answer that began, then failed on the server's side halfway.
      let sent = false;
      ctx.body = new Readable({
        read() {
          if (sent) return this.destroy(new Error('the database went away'));
          sent = true;
          this.push('[{"id":1},');
        },
      });
      ctx.type = 'application/json';
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      // The client sees a failed answer, never a short one that ends as if whole.
      const outcome = await fetch(
        `http://127.0.0.1:${port}/v1/projects/p/api-keys/ferry_sk_AbCdEf0123456789x`,
      )
        .then((response) => response.text())
        .catch((error: unknown) => error);
      expect(typeof outcome).not.toBe('string'); // an error (undici's, of another realm), not text
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(logged).toHaveBeenCalledTimes(1);
      const [fields, message] = logged.mock.calls[0] as unknown as [Record<string, unknown>, string];
      expect(message).toBe('answer cut short');
      expect(fields).toMatchObject({ requestId: expect.any(String) });
      expect(serializePath(fields.path as string)).not.toContain('0123456789x');

      logged.mockClear();
      answerCutShort(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      expect(logged).not.toHaveBeenCalled();
    } finally {
      server.close();
      logged.mockRestore();
    }
  });
});
