import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { api, request } from './helpers.js';

type Row = Record<string, unknown> & { id: string; updatedAt: string };
type Page = { results: Row[]; nextCursor: string | null };

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 2500, companies: 50, deals: 300 });
});
afterAll(() => sandbox.close());

/** Follows nextCursor to the end; returns every row and the number of pages. */
async function listAll(
  path: string,
  startCursor: string | null = null,
): Promise<{ rows: Row[]; pages: number }> {
  const rows: Row[] = [];
  let pages = 0;
  let cursor = startCursor;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const response = await api<Page>(
      sandbox,
      cursor ? `${path}${separator}cursor=${encodeURIComponent(cursor)}` : path,
    );
    expect(response.status).toBe(200);
    rows.push(...response.body.results);
    cursor = response.body.nextCursor;
    pages++;
  } while (cursor);
  return { rows, pages };
}

function expectAscending(rows: Row[]): void {
  for (let i = 1; i < rows.length; i++) {
    const previous = rows[i - 1];
    const current = rows[i];
    expect(
      previous.updatedAt < current.updatedAt ||
        (previous.updatedAt === current.updatedAt && previous.id < current.id),
    ).toBe(true);
  }
}

describe('authentication', () => {
  it('accepts the demo API key and added keys, and answers 401 otherwise', async () => {
    expect((await api(sandbox, '/contacts?limit=1')).status).toBe(200);
    const badHeaders: Record<string, string>[] = [
      {},
      { 'X-Api-Key': 'wrong' },
      { Authorization: 'Bearer nope' },
      { Authorization: 'Basic abc' },
    ];
    for (const headers of badHeaders) {
      const response = await request(sandbox, '/api/v1/contacts', { headers });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ error: 'unauthorized', message: expect.any(String) });
    }
    expect(
      (await request(sandbox, '/api/v1/contacts', { headers: { 'X-Api-Key': 'my-own-key' } })).status,
    ).toBe(401);
    sandbox.addApiKey('my-own-key');
    expect(
      (await request(sandbox, '/api/v1/contacts', { headers: { 'X-Api-Key': 'my-own-key' } })).status,
    ).toBe(200);
    expect((await api(sandbox, '/me')).body).toMatchObject({ authType: 'apiKey' });
  });
});

describe('listing', () => {
  it('pages through every contact exactly once, in updatedAt order', async () => {
    const { rows, pages } = await listAll('/contacts?limit=1000');
    expect(pages).toBe(3);
    expect(rows).toHaveLength(2500);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2500);
    expectAscending(rows);
    expect(rows[0]).toMatchObject({
      id: 'ctc_00000000',
      email: expect.stringContaining('@'),
      lifecycleStage: expect.any(String),
    });
    expect(rows[2499].updatedAt < sandbox.anchor).toBe(true);
  });

  it('generates the same data for the same seed, and other data for another', async () => {
    const same = await startSandbox({ port: 0, contacts: 2500, companies: 50, deals: 300 });
    const other = await startSandbox({ port: 0, contacts: 2500, companies: 50, deals: 300, seed: 7 });
    try {
      const path = '/deals?limit=20';
      const mine = (await api<Page>(sandbox, path)).body.results;
      expect((await api<Page>(same, path)).body.results).toEqual(mine);
      expect((await api<Page>(other, path)).body.results).not.toEqual(mine);
      // Deals point at companies that exist.
      const company = await api(sandbox, `/companies/${mine[0].companyId}`);
      expect(company.status).toBe(200);
    } finally {
      await Promise.all([same.close(), other.close()]);
    }
  });

  it('filters by updatedSince (inclusive) and updatedUntil (exclusive), matching count', async () => {
    const all = (await listAll('/contacts?limit=1000')).rows;
    const since = all[500].updatedAt;
    const until = all[1700].updatedAt;
    const window = await listAll(`/contacts?limit=333&updatedSince=${since}&updatedUntil=${until}`);
    expect(window.rows.map((r) => r.id)).toEqual(all.slice(500, 1700).map((r) => r.id));
    expect(window.pages).toBe(4);
    expect((await api(sandbox, `/contacts/count?updatedSince=${since}&updatedUntil=${until}`)).body).toEqual({
      count: 1200,
    });
    expect((await api(sandbox, `/contacts/count?updatedSince=${since}`)).body).toEqual({ count: 2000 });
    // One millisecond later excludes the boundary record.
    const later = new Date(Date.parse(since) + 1).toISOString();
    expect((await api<Page>(sandbox, `/contacts?limit=1&updatedSince=${later}`)).body.results[0].id).toBe(
      all[501].id,
    );
  });

  it('returns only the requested fields, plus id and updatedAt', async () => {
    const page = await api<Page>(sandbox, '/contacts?limit=5&fields=email,lifecycleStage');
    for (const row of page.body.results) {
      expect(Object.keys(row).sort()).toEqual(['email', 'id', 'lifecycleStage', 'updatedAt']);
    }
    const one = await api(sandbox, '/contacts/ctc_00000003?fields=firstName');
    expect(Object.keys(one.body).sort()).toEqual(['firstName', 'id', 'updatedAt']);
  });

  it('rejects bad query parameters and tampered cursors with 400', async () => {
    for (const query of [
      'limit=0',
      'limit=1001',
      'limit=abc',
      'updatedSince=yesterday',
      'fields=email,nope',
      'cursor=garbage',
    ]) {
      const response = await api(sandbox, `/contacts?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('validation_error');
    }
    const { nextCursor } = (await api<Page>(sandbox, '/contacts?limit=10')).body;
    const [payload, mac] = nextCursor!.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...decoded, u: decoded.u + 1000 })).toString('base64url');
    expect((await api(sandbox, `/contacts?cursor=${forged}.${mac}`)).status).toBe(400);
    expect((await api(sandbox, `/deals?cursor=${nextCursor}`)).status).toBe(400); // another object's cursor
    expect((await api(sandbox, '/unknown')).status).toBe(404);
  });
});

describe('mutations', () => {
  it('creates, updates and deletes records, reflected in listings and counts', async () => {
    const before = (await api(sandbox, '/companies/count')).body.count as number;
    expect(before).toBe(50);
    const created = await api<Row>(sandbox, '/companies', {
      method: 'POST',
      json: { name: 'Ferry Test Co', employees: 12 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Ferry Test Co', employees: 12, domain: null });
    expect(created.body.updatedAt >= sandbox.anchor).toBe(true);
    expect(created.headers.get('location')).toBe(`/api/v1/companies/${created.body.id}`);

    const generated = 'cmp_00000010';
    const patched = await api<Row>(sandbox, `/companies/${generated}`, {
      method: 'PATCH',
      json: { industry: 'Shipping' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.industry).toBe('Shipping');
    expect(patched.body.updatedAt > created.body.updatedAt).toBe(true);
    expect((await api(sandbox, `/companies/${generated}`)).body.industry).toBe('Shipping');

    expect((await api(sandbox, '/companies/cmp_00000020', { method: 'DELETE' })).status).toBe(204);
    expect((await api(sandbox, '/companies/cmp_00000020')).status).toBe(404);
    expect((await api(sandbox, '/companies/cmp_00000020', { method: 'DELETE' })).status).toBe(404);

    const { rows } = await listAll('/companies?limit=7');
    const ids = rows.map((r) => r.id);
    expect(ids).toHaveLength(50); // +1 created, -1 deleted, the patched one once
    expect(new Set(ids).size).toBe(50);
    expect(ids).not.toContain('cmp_00000020');
    expect(ids.slice(-2)).toEqual([created.body.id, generated]);
    expectAscending(rows);
    expect((await api(sandbox, '/companies/count')).body.count).toBe(50);
    const recent = await api(sandbox, `/companies/count?updatedSince=${sandbox.anchor}`);
    expect(recent.body.count).toBe(2);

    const withDeleted = await api<Page>(
      sandbox,
      `/companies?includeDeleted=true&updatedSince=${sandbox.anchor}`,
    );
    expect(withDeleted.body.results.map((r) => r.id)).toEqual([created.body.id, generated, 'cmp_00000020']);
    expect(withDeleted.body.results[2]).toMatchObject({ deleted: true });
  });

  it('lists writes made while paging after the generated records', async () => {
    const first = await api<Page>(sandbox, '/deals?limit=100');
    const moved = first.body.results[10].id;
    await api(sandbox, `/deals/${moved}`, { method: 'PATCH', json: { amount: 1234.5 } });
    const rest = await listAll('/deals?limit=100', first.body.nextCursor);
    const tail = rest.rows[rest.rows.length - 1];
    expect(tail).toMatchObject({ id: moved, amount: 1234.5 });
  });

  it('validates input', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/contacts', { firstName: 'No email' }, 'email'],
      ['POST', '/contacts', { email: 'not-an-email' }, 'email'],
      ['POST', '/contacts', { email: 'a@b.example', lifecycleStage: 'zombie' }, 'lifecycleStage'],
      ['POST', '/contacts', { email: 'a@b.example', shoeSize: 44 }, 'shoeSize'],
      ['POST', '/contacts', { email: 'a@b.example', id: 'ctc_1' }, 'id'],
      ['PATCH', '/contacts/ctc_00000001', { email: null }, 'email'],
      ['PATCH', '/deals/deal_00000001', { amount: 'lots' }, 'amount'],
      ['PATCH', '/deals/deal_00000001', { companyId: 'cmp_99999999' }, 'companyId'],
      ['PATCH', '/deals/deal_00000001', { closeDate: 'soon' }, 'closeDate'],
      ['POST', '/companies', [1, 2], ''],
    ];
    for (const [method, path, json, field] of cases) {
      const response = await api<{ error: string; fields?: { name: string }[] }>(sandbox, path, {
        method,
        json,
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('validation_error');
      if (field) expect(response.body.fields?.map((f) => f.name)).toContain(field);
    }
    expect((await api(sandbox, '/contacts', { method: 'POST', json: 'x' })).status).toBe(400);
    const malformed = await fetch(`${sandbox.url}/api/v1/contacts`, {
      method: 'POST',
      headers: { 'X-Api-Key': 'sandbox-demo-key', 'Content-Type': 'application/json' },
      body: '{"email":',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: string }).error).toBe('validation_error');
    expect((await api(sandbox, '/contacts/ctc_99999999', { method: 'PATCH', json: {} })).status).toBe(404);
    expect((await api(sandbox, '/contacts/whatever')).status).toBe(404);
  });
});
