import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeGreenhouse } from '../fakes/greenhouse.js';

/**
 * Greenhouse's Harvest API v1 (candidates written on behalf of a user, applications and jobs read;
 * `updated_after` filters, page numbers and Link headers) against its local fake
 * (test/connectors/fakes/greenhouse.ts), written from Greenhouse's reference.
 */
export const spec: ConformanceSpec = {
  provider: 'greenhouse',
  reference: 'https://developers.greenhouse.io/harvest.html',
  start: () => startFakeGreenhouse(),
  // The Greenhouse user writes are made on behalf of (`On-Behalf-Of`), a user of the fake.
  templateVars: { onBehalfOf: '4080' },
  objects: [
    {
      name: 'candidates',
      // A deleted candidate is gone: no listing names it.
      revealsDeletions: false,
      fields: { selected: 'first_name' },
      write: {
        // A candidate is added with at least one application, to a job of the fake.
        create: { first_name: 'Ada', last_name: 'Lovelace', applications: [{ job_id: 4001 }] },
        update: { company: 'Analytical Engines' },
        check: (stored) => stored.company,
        delete: true,
      },
    },
    { name: 'applications', revealsDeletions: false, fields: { selected: 'status' } },
    { name: 'jobs', revealsDeletions: false, fields: { selected: 'name' } },
  ],
};
