import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeKlaviyo } from '../fakes/klaviyo.js';

/**
 * Klaviyo's JSON:API (profiles and lists: `filter` on `updated`, `sort`, cursor links, sparse
 * fieldsets, a `revision` header) against its local fake (test/connectors/fakes/klaviyo.ts),
 * written from Klaviyo's reference and OpenAPI documents.
 */
export const spec: ConformanceSpec = {
  provider: 'klaviyo',
  reference: 'https://developers.klaviyo.com/en/reference/api_overview',
  start: () => startFakeKlaviyo(),
  objects: [
    {
      name: 'profiles',
      // Deleted only by a data-privacy request, after which nothing lists the profile.
      revealsDeletions: false,
      // Sparse fieldsets: `fields[profile]=email` leaves the other attributes out.
      fields: { selected: 'email', other: 'organization' },
      write: {
        create: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
        update: { first_name: 'Augusta' },
        check: (stored) => (stored.attributes as Record<string, unknown>).first_name,
      },
    },
    {
      name: 'lists',
      revealsDeletions: false,
      fields: { selected: 'name' },
      write: {
        create: { name: 'Newsletter' },
        update: { name: 'Weekly newsletter' },
        check: (stored) => (stored.attributes as Record<string, unknown>).name,
        delete: true,
      },
    },
  ],
};
