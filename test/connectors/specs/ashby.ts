import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeAshby } from '../fakes/ashby.js';

/**
 * Ashby's public API (RPC-style `POST /candidate.list`, `/application.list` with `cursor` pages of
 * at most 100 and `syncToken` incremental syncs; `candidate.create`/`candidate.update`) against its
 * local fake (test/connectors/fakes/ashby.ts), written from Ashby's reference. Object names are
 * Ashby's own (`candidate`, `application`). Nothing is deleted through the API, and no sync
 * reveals a record deleted in the app.
 */
export const spec: ConformanceSpec = {
  provider: 'ashby',
  reference: 'https://developers.ashbyhq.com/docs/pagination-and-incremental-sync',
  start: () => startFakeAshby(),
  objects: [
    {
      name: 'candidate',
      revealsDeletions: false,
      write: {
        create: { name: 'Ada Lovelace', email: 'ada@example.com' },
        update: { name: 'Ada King' },
        check: (stored) => stored.name,
      },
    },
    { name: 'application', revealsDeletions: false },
  ],
};
