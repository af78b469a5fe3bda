import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { api } from './helpers.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 10, companies: 10, deals: 10 });
});
afterAll(async () => {
  await sandbox.close();
});

type Row = Record<string, unknown> & { id: string };

const create = (key: string | undefined, json: unknown) =>
  api<Row>(sandbox, '/companies', {
    method: 'POST',
    json,
    ...(key !== undefined && { headers: { 'Idempotency-Key': key } }),
  });

describe('Idempotency-Key on creates (as Stripe)', () => {
  it('answers a repeated create under the same key with the first record, creating nothing more', async () => {
    const first = await create('op-1:0', { name: 'Once Co' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await create('op-1:0', { name: 'Once Co' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(`/api/v1/companies/${first.body.id}`);
    expect((await api(sandbox, '/companies/count')).body.count).toBe(11);
  });

  it('refuses the same key with other parameters, and creates each time without a key', async () => {
    expect((await create('op-2:0', { name: 'First' })).status).toBe(201);
    const other = await create('op-2:0', { name: 'Second' });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ error: 'idempotency_error' });
    expect((await create(undefined, { name: 'Plain' })).status).toBe(201);
    expect((await create(undefined, { name: 'Plain' })).status).toBe(201);
    expect((await api(sandbox, '/companies/count')).body.count).toBe(14);
    expect((await create('x'.repeat(256), { name: 'Long key' })).status).toBe(400);
  });

  it('keeps nothing for a refused create: the same key may then create', async () => {
    expect((await create('op-3:0', { employees: 3 })).status).toBe(400);
    expect((await create('op-3:0', { name: 'Valid now' })).status).toBe(201);
  });
});
