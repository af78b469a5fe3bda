import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { apiKeyHeaders, request, type JsonResponse } from './helpers.js';

/**
 * With `realism` on, the sandbox stamps writes as real providers do: in whole seconds, so that
 * records tie, and listed only once committed, up to 2 s after the time they carry.
 */

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    contacts: 5,
    companies: 1,
    deals: 1,
    realism: { precision: 'second', commitLagMs: 2000 },
  });
});

afterAll(() => sandbox?.close());

interface Page {
  results: { id: string; updatedAt: string }[];
  nextCursor: string | null;
}

async function listAll(query: Record<string, string>): Promise<Page['results']> {
  const listed: Page['results'] = [];
  let cursor: string | null = null;
  do {
    const params: URLSearchParams = new URLSearchParams({ ...query, ...(cursor !== null && { cursor }) });
    const page: JsonResponse<Page> = await request<Page>(sandbox, `/api/v1/contacts?${params.toString()}`, {
      headers: apiKeyHeaders,
    });
    listed.push(...page.body.results);
    cursor = page.body.nextCursor;
  } while (cursor !== null);
  return listed;
}

describe('a sandbox as true to providers as they are', () => {
  it('stamps writes in whole seconds, and pages ties by id without losing one', async () => {
    const created: string[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await request<{ id: string; updatedAt: string }>(sandbox, '/api/v1/contacts', {
        headers: apiKeyHeaders,
        json: { email: `tie${i}@example.com`, lastName: `Tie ${i}` },
      });
      expect(answer.status).toBe(201);
      expect(answer.body.updatedAt).toMatch(/:\d{2}\.000Z$/);
      created.push(answer.body.id);
    }
    // Each committed up to 2 s after its stamp: not all listed yet, though gets see them at once.
    const since = new Date(Date.now() - 120_000).toISOString();
    const early = await listAll({ updatedSince: since, limit: '2' });
    expect(early.filter((record) => created.includes(record.id)).length).toBeLessThan(created.length);
    const got = await request<{ id: string }>(sandbox, `/api/v1/contacts/${created[0]}`, {
      headers: apiKeyHeaders,
    });
    expect(got.body.id).toBe(created[0]);
    // Once committed, every one is listed once, two to a page, ties in id order.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const listed = (await listAll({ updatedSince: since, limit: '2' })).filter((record) =>
      created.includes(record.id),
    );
    expect(listed.map((record) => record.id).sort()).toEqual([...created].sort());
  });

  it('clamps the commit lag to what its declaration states', async () => {
    const bounded = await startSandbox({
      port: 0,
      contacts: 1,
      companies: 1,
      deals: 1,
      realism: { commitLagMs: 60_000 },
    });
    try {
      const answer = await request<{ id: string }>(bounded, '/api/v1/contacts', {
        headers: apiKeyHeaders,
        json: { email: 'late@example.com', lastName: 'Late' },
      });
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const page = await request<Page>(
        bounded,
        `/api/v1/contacts?updatedSince=${encodeURIComponent(bounded.anchor)}`,
        {
          headers: apiKeyHeaders,
        },
      );
      expect(page.body.results.map((record) => record.id)).toContain(answer.body.id);
    } finally {
      await bounded.close();
    }
  });
});
