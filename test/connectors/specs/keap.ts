import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeKeap } from '../fakes/keap.js';

/**
 * Keap's REST API v1 contacts against its local fake (test/connectors/fakes/keap.ts). Companies and
 * opportunities are left out: their v1 listings take no modification-time filter (`since`), so they
 * cannot be read incrementally.
 */
export const spec: ConformanceSpec = {
  provider: 'keap',
  reference: 'https://developer.keap.com/docs/rest/',
  start: () => startFakeKeap(),
  objects: [
    {
      name: 'contacts',
      // A deleted contact is gone: no listing shows it.
      revealsDeletions: false,
      // The listing has no field selection (`optional_properties` only adds).
      fields: { selected: 'given_name' },
      write: {
        create: { given_name: 'Ada', email_addresses: [{ email: 'ada@example.com', field: 'EMAIL1' }] },
        update: { given_name: 'Augusta' },
        check: (stored) => stored.given_name,
        delete: true,
      },
      metadata: {
        given_name: { valueType: 'string' },
        last_updated: { valueType: 'datetime', readOnly: true },
      },
    },
  ],
};
