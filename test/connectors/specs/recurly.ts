import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeRecurly } from '../fakes/recurly.js';

/**
 * Recurly's API v2021-02-25 (accounts written and deactivated, subscriptions and invoices read;
 * lists sorted by `updated_at` from `begin_time`, cursor paths) against its local fake
 * (test/connectors/fakes/recurly.ts), written from Recurly's reference.
 */
export const spec: ConformanceSpec = {
  provider: 'recurly',
  reference: 'https://recurly.com/developers/api/v2021-02-25/',
  start: () => startFakeRecurly(),
  objects: [
    {
      name: 'accounts',
      // Deactivated accounts stay listed, `state: inactive` with `deleted_at`.
      revealsDeletions: true,
      fields: { selected: 'email' },
      write: {
        create: { code: 'ada-lovelace', email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
        update: { company: 'Analytical Engines' },
        check: (stored) => stored.company,
        delete: true,
      },
    },
    // Subscriptions expire and invoices are voided: neither is ever deleted.
    { name: 'subscriptions', revealsDeletions: false, fields: { selected: 'state' } },
    { name: 'invoices', revealsDeletions: false, fields: { selected: 'total' } },
  ],
};
