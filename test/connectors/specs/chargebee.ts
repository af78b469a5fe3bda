import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeChargebee } from '../fakes/chargebee.js';

/**
 * Chargebee's API v2 (customers written form-encoded, subscriptions and invoices read; lists with
 * `updated_at` filters, opaque `next_offset` and `include_deleted`) against its local fake
 * (test/connectors/fakes/chargebee.ts), written from Chargebee's reference.
 */
export const spec: ConformanceSpec = {
  provider: 'chargebee',
  reference: 'https://apidocs.chargebee.com/docs/api',
  start: () => startFakeChargebee(),
  templateVars: { workspace: 'acme-test' },
  objects: [
    {
      name: 'customers',
      // `include_deleted=true` lists deleted customers with `deleted: true`.
      revealsDeletions: true,
      fields: { selected: 'email' },
      write: {
        create: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', company: 'Analytical' },
        update: { company: 'Analytical Engines Ltd' },
        check: (stored) => stored.company,
        delete: true,
      },
    },
    { name: 'subscriptions', revealsDeletions: true, fields: { selected: 'customer_id' } },
    { name: 'invoices', revealsDeletions: true, fields: { selected: 'amount_paid' } },
  ],
};
