import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeBrevo } from '../fakes/brevo.js';

/**
 * Brevo's API v3 contacts against its local fake (test/connectors/fakes/brevo.ts). Companies and
 * deals take `modifiedSince` too, but their reference states no page-size maximum and calls the
 * companies' `page` "the index of the first document": left out until those are settled.
 */
export const spec: ConformanceSpec = {
  provider: 'brevo',
  reference: 'https://developers.brevo.com/reference/get-contacts',
  start: () => startFakeBrevo(),
  objects: [
    {
      name: 'contacts',
      // A deleted contact is gone: no listing shows it.
      revealsDeletions: false,
      // The contact list has no field selection: every field comes back.
      fields: { selected: 'email' },
      write: {
        create: { email: 'ada@example.com' },
        update: { emailBlacklisted: true },
        check: (stored) => stored.emailBlacklisted,
        delete: true,
      },
      metadata: {
        email: { valueType: 'string' },
        emailBlacklisted: { valueType: 'boolean' },
        modifiedAt: { valueType: 'datetime', readOnly: true },
      },
    },
  ],
};
