import type { ConformanceSpec } from '../kit/conformance.js';
import { GUSTO_FAKE_COMPANY, startFakeGusto } from '../fakes/gusto.js';

/**
 * Gusto's API v1 (a company's employees and departments) against its local fake
 * (test/connectors/fakes/gusto.ts), written from Gusto's reference. Neither listing filters by time
 * and neither record says when it changed, so a read walks them whole; a deleted employee or
 * department shows only by its absence. Updates must send the record's current `version`.
 */
export const spec: ConformanceSpec = {
  provider: 'gusto',
  reference: 'https://docs.gusto.com/app-integrations/reference',
  start: () => startFakeGusto(),
  templateVars: { companyId: GUSTO_FAKE_COMPANY },
  objects: [
    {
      name: 'employees',
      revealsDeletions: true,
      fields: { selected: 'first_name' },
      write: {
        create: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        update: { preferred_first_name: 'Countess' },
        check: (stored) => stored.preferred_first_name,
        delete: true,
      },
    },
    {
      name: 'departments',
      revealsDeletions: true,
      fields: { selected: 'title' },
      write: {
        create: { title: 'Engineering' },
        update: { title: 'Research' },
        check: (stored) => stored.title,
        delete: true,
      },
    },
  ],
};
