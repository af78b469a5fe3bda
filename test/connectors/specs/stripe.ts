import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeStripe, stripeFixture } from '../fakes/stripe.js';

/** Stripe's API (lists, events feed, form-encoded writes) against its local fake (test/connectors/fakes/stripe.ts). */
export const spec: ConformanceSpec = {
  provider: 'stripe',
  reference: 'https://docs.stripe.com/api',
  start: () => startFakeStripe(),
  objects: [
    {
      name: 'customers',
      revealsDeletions: true,
      search: { field: 'email', set: setStored('customers', 'email') },
      write: {
        create: { name: 'Ada Lovelace', email: 'ada@example.com', metadata: { tier: 'gold' } },
        update: { email: 'ada@analytical.example' },
        check: (stored) => stored.email,
        delete: true,
      },
      metadata: {
        email: { valueType: 'string', readOnly: false, isCustom: false },
        created: { valueType: 'int', readOnly: true },
        metadata: { valueType: 'other' },
        tax_exempt: {
          valueType: 'singleSelect',
          values: [
            { value: 'none', displayValue: 'None' },
            { value: 'exempt', displayValue: 'Exempt' },
            { value: 'reverse', displayValue: 'Reverse charge' },
          ],
        },
      },
    },
    {
      name: 'products',
      revealsDeletions: true,
      search: { field: 'name', set: setStored('products', 'name') },
      write: {
        create: { name: 'Team plan', active: true },
        update: { metadata: { sku: 'TEAM-1' } },
        check: (stored) => stored.metadata,
        delete: true,
      },
      metadata: { name: { isRequired: true }, updated: { readOnly: true } },
    },
    {
      name: 'prices',
      search: { field: 'lookup_key', set: setStored('prices', 'lookup_key') },
      write: {
        create: { product: stripeFixture.product, currency: 'usd', unit_amount: 900 },
        update: { nickname: 'Monthly' },
        check: (stored) => stored.nickname,
      },
      metadata: { unit_amount: { valueType: 'int' }, type: { readOnly: true } },
    },
    {
      name: 'invoices',
      revealsDeletions: true,
      // A create/update parameter Stripe turns into `due_date`; the invoice object has no such
      // attribute (docs.stripe.com/api/invoices/object, /api/invoices/create).
      roundTrip: { notInRecords: ['days_until_due'] },
      search: { field: 'number', set: setStored('invoices', 'number') },
      write: {
        create: { customer: stripeFixture.customer, description: 'Setup' },
        update: { description: 'Setup fee' },
        check: (stored) => stored.description,
        delete: true,
      },
      metadata: { customer: { isRequired: true }, status: { readOnly: true, valueType: 'singleSelect' } },
    },
    {
      name: 'subscriptions',
      // Cancelling ends a subscription, which stays retrievable: a change, not a deletion.
      search: { field: 'status', set: setStored('subscriptions', 'status') },
      write: {
        create: { customer: stripeFixture.customer, items: [{ price: stripeFixture.price }] },
        update: { cancel_at_period_end: true },
        check: (stored) => stored.cancel_at_period_end,
      },
      metadata: { items: { valueType: 'other' } },
    },
  ],
};
