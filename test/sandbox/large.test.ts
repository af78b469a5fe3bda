import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { api } from './helpers.js';

type Page = { results: { id: string; updatedAt: string }[]; nextCursor: string | null };

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 }); // the defaults: a million contacts
});
afterAll(() => sandbox.close());

describe('a million contacts', () => {
  it('serves counts, the last page and single records without materializing the data', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    expect((await api(sandbox, '/contacts/count')).body).toEqual({ count: 1_000_000 });

    const last = await api<{ id: string; updatedAt: string }>(sandbox, '/contacts/ctc_00999999');
    expect(last.status).toBe(200);
    const boundary = await api<{ updatedAt: string }>(sandbox, '/contacts/ctc_00999000');
    const page = await api<Page>(sandbox, `/contacts?limit=1000&updatedSince=${boundary.body.updatedAt}`);
    expect(page.status).toBe(200);
    expect(page.body.results).toHaveLength(1000);
    expect(page.body.results[0].id).toBe('ctc_00999000');
    expect(page.body.results[999]).toEqual(last.body);
    expect(page.body.nextCursor).toBeNull();

    // Paging deep into the middle: a few pages from a since filter, each a fresh index computation.
    const middle = await api<Page>(
      sandbox,
      `/contacts?limit=1000&updatedSince=${page.body.results[0].updatedAt.slice(0, 4)}-01-01T00:00:00Z`,
    );
    expect(middle.body.results).toHaveLength(1000);
    const next = await api<Page>(sandbox, `/contacts?limit=1000&cursor=${middle.body.nextCursor}`);
    expect(next.body.results[0].updatedAt > middle.body.results[999].updatedAt).toBe(true);

    expect((await api(sandbox, '/contacts/ctc_01000000')).status).toBe(404);
    // Generous bound: materializing a million contacts would take hundreds of megabytes.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(100 * 1024 * 1024);
  });
});
