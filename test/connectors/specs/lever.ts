import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeLever } from '../fakes/lever.js';

/**
 * Lever's API v1 (opportunities filtered by `updated_at_start`, postings; `{data, hasNext, next}`
 * pages) against its local fake (test/connectors/fakes/lever.ts), written from Lever's reference.
 * Users are left out: they carry no modification time, so no read can be windowed. Opportunities
 * are created (`perform_as`) but have no general update, so the kit's create-then-update is not run.
 */
export const spec: ConformanceSpec = {
  provider: 'lever',
  reference: 'https://hire.lever.co/developer/documentation',
  start: () => startFakeLever(),
  objects: [
    // Deleted opportunities are listed by `GET /v1/opportunities/deleted`.
    { name: 'opportunities', revealsDeletions: true, fields: { selected: 'name' } },
    { name: 'postings', revealsDeletions: false, fields: { selected: 'text' } },
  ],
};
