import { afterAll, describe, expect, it } from '@jest/globals';
import { closeOrm, em as newEntityManager } from '../../src/db/orm.js';
import { batchedRows, type KeyedRead } from '../../src/db/batched-reads.js';

/**
 * What a batch does when its statement fails, and reads declared wrongly. (The answers of batches
 * that work are checked against the ORM path in test/api/read-views.test.ts.)
 */

afterAll(async () => closeOrm());

const echo: KeyedRead = {
  name: 'test-echo',
  sql: `select ?::text || '' as "e.text", ?::uuid as "e.id"`,
  types: ['text', 'uuid'],
};
const id = '00000000-0000-4000-8000-000000000001';

describe('batchedRows', () => {
  it('fails every get of a batch whose statement fails, and the next batch starts afresh', async () => {
    const em = await newEntityManager();
    const failed = await Promise.allSettled([
      batchedRows(em, echo, ['a', id]),
      batchedRows(em, echo, ['b', 'not-a-uuid']),
    ]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    for (const result of failed) {
      expect(String((result as PromiseRejectedResult).reason)).toMatch(/invalid input syntax for type uuid/);
    }
    expect(await Promise.all([batchedRows(em, echo, ['a', id]), batchedRows(em, echo, ['b', id])])).toEqual([
      [{ 'e.text': 'a', 'e.id': id }],
      [{ 'e.text': 'b', 'e.id': id }],
    ]);
  });

  it('refuses values that do not match the read’s placeholders', async () => {
    const em = await newEntityManager();
    expect(() => batchedRows(em, echo, ['a'])).toThrow('test-echo: 1 values for 2 placeholders');
    const miscounted = { ...echo, name: 'test-miscounted', types: ['text', 'uuid', 'text'] };
    await expect(
      Promise.all([batchedRows(em, miscounted, ['a', id, 'x']), batchedRows(em, miscounted, ['b', id, 'y'])]),
    ).rejects.toThrow('test-miscounted: 2 placeholders, 3 types');
  });
});
