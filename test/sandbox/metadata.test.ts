import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { api } from './helpers.js';

type Field = {
  name: string;
  type: string;
  readOnly: boolean;
  custom: boolean;
  required: boolean;
  options?: { value: string }[];
};

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 20, companies: 5, deals: 5 });
});
afterAll(() => sandbox.close());

describe('metadata', () => {
  it('describes the built-in fields of each object', async () => {
    const contacts = await api<{ object: string; displayName: string; fields: Field[] }>(
      sandbox,
      '/metadata/contacts',
    );
    expect(contacts.status).toBe(200);
    expect(contacts.body).toMatchObject({ object: 'contacts', displayName: 'Contacts' });
    const byName = Object.fromEntries(contacts.body.fields.map((f) => [f.name, f]));
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining([
        'id',
        'firstName',
        'lastName',
        'email',
        'phone',
        'company',
        'jobTitle',
        'lifecycleStage',
        'createdAt',
        'updatedAt',
      ]),
    );
    for (const name of ['id', 'createdAt', 'updatedAt']) expect(byName[name].readOnly).toBe(true);
    expect(byName.email).toMatchObject({
      type: 'string',
      providerType: 'email',
      required: true,
      custom: false,
    });
    expect(byName.lifecycleStage.type).toBe('enum');
    expect(byName.lifecycleStage.options?.map((o) => o.value)).toContain('customer');

    const deals = await api<{ fields: Field[] }>(sandbox, '/metadata/deals');
    const stage = deals.body.fields.find((f) => f.name === 'stage')!;
    expect(stage.options).toEqual(expect.arrayContaining([{ value: 'closed_won', label: 'Closed won' }]));
    expect(deals.body.fields.find((f) => f.name === 'closeDate')!.type).toBe('datetime');
    expect((await api(sandbox, '/metadata/tickets')).status).toBe(404);
  });
});

describe('custom fields', () => {
  const put = (object: string, json: unknown) =>
    api<{ fields: (Field & { created: boolean })[]; error?: string }>(
      sandbox,
      `/metadata/${object}/custom-fields`,
      { method: 'PUT', json },
    );

  it('upserts custom fields, lists them in metadata and accepts their values', async () => {
    const first = await put('contacts', {
      fields: [
        { name: 'custom_tier', label: 'Tier', type: 'enum', options: ['gold', 'silver'] },
        { name: 'loyaltyPoints', label: 'Loyalty points', type: 'number', description: 'From the shop' },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.body.fields).toEqual([
      expect.objectContaining({
        name: 'custom_tier',
        type: 'enum',
        custom: true,
        created: true,
        options: [
          { value: 'gold', label: 'gold' },
          { value: 'silver', label: 'silver' },
        ],
      }),
      expect.objectContaining({
        name: 'loyaltyPoints',
        type: 'number',
        created: true,
        description: 'From the shop',
      }),
    ]);
    const again = await put('contacts', {
      fields: [{ name: 'loyaltyPoints', label: 'Points', type: 'number' }],
    });
    expect(again.body.fields[0]).toMatchObject({ label: 'Points', created: false });

    const metadata = await api<{ fields: Field[] }>(sandbox, '/metadata/contacts');
    const custom = metadata.body.fields.filter((f) => f.custom).map((f) => f.name);
    expect(custom).toEqual(['custom_tier', 'loyaltyPoints']);

    const created = await api(sandbox, '/contacts', {
      method: 'POST',
      json: { email: 'vip@shop.example', custom_tier: 'gold', loyaltyPoints: 10 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ custom_tier: 'gold', loyaltyPoints: 10 });
    const badValue = await api(sandbox, '/contacts/ctc_00000001', {
      method: 'PATCH',
      json: { custom_tier: 'bronze' },
    });
    expect(badValue.status).toBe(400);
    const selected = await api<{ results: Record<string, unknown>[] }>(
      sandbox,
      '/contacts?limit=1&fields=custom_tier',
    );
    expect(selected.body.results[0]).toEqual({
      id: 'ctc_00000000',
      updatedAt: expect.any(String),
      custom_tier: null,
    });
  });

  it('enforces required custom fields on create', async () => {
    await put('deals', {
      fields: [{ name: 'custom_region', label: 'Region', type: 'string', required: true, maxLength: 5 }],
    });
    expect((await api(sandbox, '/deals', { method: 'POST', json: { name: 'No region' } })).status).toBe(400);
    expect(
      (await api(sandbox, '/deals', { method: 'POST', json: { name: 'Long', custom_region: 'toolong' } }))
        .status,
    ).toBe(400);
    expect(
      (await api(sandbox, '/deals', { method: 'POST', json: { name: 'Ok', custom_region: 'EMEA' } })).status,
    ).toBe(201);
  });

  it('rejects invalid definitions with 400 and changes nothing', async () => {
    const invalid: unknown[] = [
      { fields: [{ name: 'domain', label: 'Domain', type: 'string' }] }, // collides with a built-in
      { fields: [{ name: 'Custom_x', label: 'X', type: 'string' }] },
      { fields: [{ name: 'custom-x', label: 'X', type: 'string' }] },
      { fields: [{ name: 'custom_x', label: 'X', type: 'json' }] },
      { fields: [{ name: 'custom_x', label: 'X', type: 'enum' }] },
      { fields: [{ name: 'custom_x', label: 'X', type: 'number', options: ['a'] }] },
      {
        fields: [
          { name: 'custom_ok', type: 'string' },
          { name: 'custom_ok', type: 'string' },
        ],
      },
      { fields: [] },
      {},
    ];
    for (const body of invalid) {
      const response = await put('companies', body);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('validation_error');
    }
    const metadata = await api<{ fields: Field[] }>(sandbox, '/metadata/companies');
    expect(metadata.body.fields.filter((f) => f.custom)).toEqual([]);
  });
});
