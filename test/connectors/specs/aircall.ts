import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeAircall } from '../fakes/aircall.js';

/**
 * Aircall's Public API v1 (calls, contacts, users; `page`/`per_page` up to 50, 60 requests a
 * minute) against its local fake (test/connectors/fakes/aircall.ts), written from Aircall's
 * reference. `from`/`to` bound creation only; contacts alone carry `updated_at` and sort by it.
 * A deleted contact is listed nowhere; calls and users say nowhere when they changed, so only a
 * complete listing shows one gone.
 */
export const spec: ConformanceSpec = {
  provider: 'aircall',
  reference: 'https://developer.aircall.io/api-references/',
  start: () => startFakeAircall(),
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      write: {
        create: {
          first_name: 'Ada',
          last_name: 'Lovelace',
          phone_numbers: [{ label: 'Work', value: '+15550100999' }],
        },
        update: { company_name: 'Analytical Engines' },
        check: (stored) => stored.company_name,
        delete: true,
      },
    },
    { name: 'calls', revealsDeletions: true },
    { name: 'users', revealsDeletions: true },
  ],
};
