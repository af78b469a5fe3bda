import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeApollo } from '../fakes/apollo.js';

/**
 * Apollo.io's REST API (contacts and accounts: `POST …/search` paged by `page`/`per_page` up to
 * 100, sortable by `*_updated_at`, no filter by modification time; creates and `PUT` updates)
 * against its local fake (test/connectors/fakes/apollo.ts), written from Apollo's reference. The
 * API deletes nothing, and a record deleted in Apollo is listed nowhere.
 */
export const spec: ConformanceSpec = {
  provider: 'apollo',
  reference: 'https://docs.apollo.io/reference',
  start: () => startFakeApollo(),
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      write: {
        create: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        update: { title: 'Countess' },
        check: (stored) => stored.title,
      },
    },
    {
      name: 'accounts',
      revealsDeletions: false,
      write: {
        create: { name: 'Analytical Engines Ltd', domain: 'engines.example.com' },
        update: { phone: '+1 555 0100' },
        check: (stored) => stored.phone,
      },
    },
  ],
};
