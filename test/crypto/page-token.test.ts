import { describe, expect, it } from '@jest/globals';
import Type from 'typebox';
import { ProblemError } from '../../src/core/problem.js';
import { pageTokenCodec } from '../../src/crypto/page-token.js';

/** The one codec of Ferry's listing tokens: what it makes comes back; nothing else gets through. */

const Position = Type.Object(
  { seq: Type.String({ pattern: '^[0-9]{1,19}$' }) },
  { additionalProperties: false },
);
const secret = Buffer.alloc(32, 7);
const codec = pageTokenCodec('things', Position);

function refusal(run: () => unknown): ProblemError {
  try {
    run();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('the token was accepted');
}

describe('a page token', () => {
  it('carries its position back to the listing and scope that made it', () => {
    const token = codec.encode('project/a', { seq: '42' }, secret);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(codec.decode('project/a', token, secret)).toEqual({ seq: '42' });
  });

  it.each([
    ['empty', ''],
    ['garbled', 'not a token'],
    ['without its signature', Buffer.from('{"seq":"1"}').toString('base64url')],
    ['with a forged signature', `${Buffer.from('{"seq":"1"}').toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`],
    ['with a part too many', `${codec.encode('project/a', { seq: '1' }, secret)}.x`],
    ['far too long', 'x'.repeat(5000)],
  ])('is refused %s, as a 400 naming pageToken', (_case, token) => {
    const problem = refusal(() => codec.decode('project/a', token, secret));
    expect(problem.status).toBe(400);
    expect(problem.issues).toEqual([expect.objectContaining({ in: 'query', name: 'pageToken' })]);
  });

  it('is refused by another scope, another listing and another deployment', () => {
    const token = codec.encode('project/a', { seq: '7' }, secret);
    expect(refusal(() => codec.decode('project/b', token, secret)).status).toBe(400);
    expect(refusal(() => pageTokenCodec('others', Position).decode('project/a', token, secret)).status).toBe(
      400,
    );
    expect(refusal(() => codec.decode('project/a', token, Buffer.alloc(32, 8))).status).toBe(400);
  });

  it('is refused, though signed, when its position is not the shape the listing reads', () => {
    const loose = pageTokenCodec('things', Type.Unknown());
    for (const position of [{ seq: 'drop table' }, { seq: '1', extra: true }, ['1'], null]) {
      const token = loose.encode('project/a', position, secret);
      expect(refusal(() => codec.decode('project/a', token, secret)).status).toBe(400);
    }
  });
});
