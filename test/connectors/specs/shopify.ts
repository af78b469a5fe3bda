import type { ConformanceObject, ConformanceSpec } from '../kit/conformance.js';
import { startFakeShopify, type FakeShopify } from '../fakes/shopify.js';

const edit =
  (object: string, field: string): NonNullable<ConformanceObject['search']>['set'] =>
  (fake, id, value) =>
    (fake as FakeShopify).edit(object, id, { [field]: value });

/** Shopify's Admin GraphQL API against its local fake (test/connectors/fakes/shopify.ts). */
export const spec: ConformanceSpec = {
  provider: 'shopify',
  reference: 'https://shopify.dev/docs/api/admin-graphql/2025-10',
  start: () => startFakeShopify(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'customers',
      revealsDeletions: true,
      fields: { selected: 'email', other: 'lastName' },
      search: { field: 'email', set: edit('customers', 'email') },
      write: {
        create: { firstName: 'Ada', email: 'ada@example.com', 'custom.loyalty_tier': 'Silver' },
        update: { note: 'Prefers email' },
        check: (stored) => stored.note,
        delete: true,
      },
      metadata: {
        email: { valueType: 'string', readOnly: false, isCustom: false },
        updatedAt: { valueType: 'datetime', readOnly: true },
        'custom.loyalty_tier': { displayName: 'Loyalty tier', valueType: 'string', isCustom: true },
        'custom.birthday': { valueType: 'date', isCustom: true },
      },
    },
    {
      name: 'products',
      revealsDeletions: true,
      fields: { selected: 'title', other: 'vendor' },
      search: { field: 'productType', set: edit('products', 'productType') },
      write: {
        create: { title: 'Wool hat', status: 'DRAFT' },
        update: { title: 'Red wool hat' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        title: { valueType: 'string', isRequired: true },
        status: { valueType: 'singleSelect' },
        'specs.weight_kg': { valueType: 'float', isCustom: true },
      },
    },
    {
      name: 'orders',
      revealsDeletions: true,
      fields: { selected: 'email', other: 'note' },
      search: { field: 'email', set: edit('orders', 'email') },
    },
  ],
};
