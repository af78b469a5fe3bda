import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { config } from '../../src/config.js';
import { LIST_BATCH_ROWS } from '../../src/db/raw.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { batchedList, jsonListText } from '../../src/api/batched-list.js';
import { seed } from '../../bench/api.js';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';

/**
 * The lists the contract returns whole are read a batch at a time: more rows than several batches
 * arrive complete and in order, and a client that leaves halfway keeps no pooled connection.
 */

const ROWS = 2 * LIST_BATCH_ROWS + 234;
let stack: TestStack;
let project: string;
let firstIntegration: string;

beforeAll(async () => {
  stack = await startTestStack();
  project = `/projects/${stack.project.name}`;
  const db = new pg.Client({ connectionString: config().databaseUrl });
  await db.connect();
  try {
    await seed(db, stack.project.id, ROWS);
  } finally {
    await db.end();
  }
  firstIntegration = (await stack.api('GET', `${project}/integrations`)).body[0].id;
});
afterAll(async () => stack.close());

function expectWholeList(list: { id: string; createTime: string }[], length: number): void {
  expect(list).toHaveLength(length);
  expect(new Set(list.map((item) => item.id)).size).toBe(length);
  const times = list.map((item) => item.createTime);
  expect(times).toEqual([...times].sort());
}

describe('lists read in batches', () => {
  it.each([
    ['integrations', '/integrations'],
    ['installations of the project', '/installations'],
    ['connections', '/connections'],
  ])('%s: every row, once, oldest first, as JSON', async (_, path) => {
    const response = await stack.api('GET', `${project}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(response.headers.get('content-length'))).toBe(
      Buffer.byteLength(JSON.stringify(response.body)),
    );
    expectWholeList(response.body, ROWS);
  });

  it('installations of one integration, and filters that match nothing, as `[]`', async () => {
    const ofIntegration = await stack.api('GET', `${project}/integrations/${firstIntegration}/installations`);
    expect(ofIntegration.status).toBe(200);
    expectWholeList(ofIntegration.body, 1);
    expect(ofIntegration.body[0].integrationId).toBe(firstIntegration);
    for (const path of ['/installations?groupRef=nobody', '/connections?provider=nobody']) {
      const response = await fetch(`${stack.urls.api}${project}${path}`, {
        headers: { 'x-api-key': stack.project.apiKey },
      });
      expect(await response.text()).toBe('[]');
    }
    const empty = await createTestProject();
    const none = await request('GET', `${stack.urls.api}/projects/${empty.name}/integrations`, {
      apiKey: empty.apiKey,
    });
    expect(none).toMatchObject({ status: 200, body: [] });
  });

  it('a failure before the first batch is still a problem-details answer', async () => {
    const response = await stack.api('GET', `/projects/nope/integrations`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('clients that leave halfway keep no connection: more than the pool then get whole lists', async () => {
    const url = new URL(`${stack.urls.api}${project}/installations`);
    for (let i = 0; i < 15; i++) {
      await new Promise<void>((resolve, reject) => {
        const call = get(url, { headers: { 'x-api-key': stack.project.apiKey } }, (response) => {
          response.once('data', () => {
            call.destroy();
            resolve();
          });
        });
        call.once('error', (error) => (call.destroyed ? resolve() : reject(error)));
      });
    }
    const lists = await Promise.all(
      Array.from({ length: 12 }, () => stack.api('GET', `${project}/connections`)),
    );
    for (const list of lists) expectWholeList(list.body, ROWS);
  });

  it('stops reading a list whose client has gone, and reads all of one whose client waits', async () => {
    let read = 0;
    async function* batches() {
      for (let index = 0; index < 5; index++) {
        read++;
        yield [index];
      }
    }
    expect(await jsonListText(batchedList(batches()), { abandoned: () => true })).toEqual([]);
    expect(read).toBe(0);
    let gone = false;
    const leaving = batches();
    const halfway = jsonListText(
      batchedList({
        async *[Symbol.asyncIterator]() {
          for await (const batch of leaving) {
            gone = read === 2;
            yield batch;
          }
        },
      }),
      { abandoned: () => gone },
    );
    expect(await halfway).toEqual([]);
    expect(read).toBe(2);
    read = 0;
    expect((await jsonListText(batchedList(batches()), { abandoned: () => false })).join('')).toBe(
      '[0,1,2,3,4]',
    );
    expect(read).toBe(5);
  });

  it('a database failure on a later batch rejects the whole list before any of it is sent', async () => {
    async function* failing() {
      yield [1, 2];
      // What PostgreSQL going away between batches looks like to the driver (admin_shutdown).
      throw Object.assign(new Error('terminating connection due to administrator command'), {
        code: '57P01',
      });
    }
    // The answer starts only from the finished text, so the middleware can still answer 503.
    await expect(jsonListText(batchedList(failing()))).rejects.toMatchObject({ code: '57P01' });
    expect(isDatabaseUnavailable(await jsonListText(batchedList(failing())).catch((error) => error))).toBe(
      true,
    );
  });
});
