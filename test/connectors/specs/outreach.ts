import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeOutreach } from '../fakes/outreach.js';

/**
 * Outreach's REST API v2 (JSON:API: prospects and accounts, `filter[updatedAt]` ranges inclusive at
 * both ends, `sort`, `page[size]` up to 1000 with `links.next` cursors, sparse fieldsets) against
 * its local fake (test/connectors/fakes/outreach.ts), written from Outreach's reference and OpenAPI
 * document. A deleted prospect or account is listed nowhere, so neither reveals deletions.
 */
export const spec: ConformanceSpec = {
  provider: 'outreach',
  reference: 'https://developers.outreach.io/api/making-requests',
  start: () => startFakeOutreach(),
  objects: [
    {
      name: 'prospects',
      revealsDeletions: false,
      // Sparse fieldsets: `fields[prospect]=firstName` leaves the other attributes out.
      fields: { selected: 'firstName', other: 'company' },
      write: {
        create: { firstName: 'Ada', lastName: 'Lovelace', emails: ['ada@example.com'] },
        update: { title: 'Countess' },
        check: (stored) => (stored.attributes as Record<string, unknown>).title,
        delete: true,
      },
    },
    {
      name: 'accounts',
      revealsDeletions: false,
      fields: { selected: 'name', other: 'description' },
      write: {
        create: { name: 'Analytical Engines Ltd', domain: 'engines.example.com' },
        update: { description: 'Difference engines' },
        check: (stored) => (stored.attributes as Record<string, unknown>).description,
        delete: true,
      },
    },
  ],
};
