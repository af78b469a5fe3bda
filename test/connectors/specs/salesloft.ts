import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeSalesloft } from '../fakes/salesloft.js';

/**
 * Salesloft's REST API v2 (people and accounts: `updated_at[gt|gte|lt|lte]` compared to the
 * microsecond, `sort_by=updated_at`, `per_page` up to 100 with `page` numbers, a budget of 600 cost
 * a minute) against its local fake (test/connectors/fakes/salesloft.ts), written from Salesloft's
 * reference. A deleted person or account is listed nowhere, so neither reveals deletions.
 */
export const spec: ConformanceSpec = {
  provider: 'salesloft',
  reference: 'https://developers.salesloft.com/docs/api/',
  start: () => startFakeSalesloft(),
  objects: [
    {
      name: 'people',
      revealsDeletions: false,
      fields: { selected: 'email_address' },
      write: {
        create: { email_address: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
        update: { title: 'Countess' },
        check: (stored) => stored.title,
        delete: true,
      },
    },
    {
      name: 'accounts',
      revealsDeletions: false,
      fields: { selected: 'domain' },
      write: {
        create: { name: 'Analytical Engines Ltd', domain: 'engines.example.com' },
        update: { description: 'Difference engines' },
        check: (stored) => stored.description,
        delete: true,
      },
    },
  ],
};
