import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeNetsuite } from '../fakes/netsuite.js';

/**
 * NetSuite's REST web services (customers and contacts read through SuiteQL, `limit` up to 1000
 * with `offset`, `lastmodifieddate` to the second; written through the REST record service) against
 * its local fake (test/connectors/fakes/netsuite.ts), written from Oracle's NetSuite help. Deleted
 * records are listed in SuiteQL's `deletedrecord` table.
 */
export const spec: ConformanceSpec = {
  provider: 'netsuite',
  reference:
    'https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_157909186990.html (SuiteQL through REST web services)',
  start: () => startFakeNetsuite(),
  templateVars: { workspace: 'tstdrv1234567' },
  objects: [
    {
      name: 'customer',
      revealsDeletions: true,
      fields: { selected: 'companyname', other: 'phone' },
      write: {
        create: { companyName: 'Analytical Engines Ltd', subsidiary: { id: '1' } },
        update: { comments: 'Difference engines' },
        check: (stored) => stored.comments,
        delete: true,
      },
    },
    {
      name: 'contact',
      revealsDeletions: true,
      fields: { selected: 'lastname', other: 'title' },
      write: {
        create: { firstName: 'Ada', lastName: 'Lovelace', subsidiary: { id: '1' } },
        update: { title: 'Countess' },
        check: (stored) => stored.title,
        delete: true,
      },
    },
  ],
};
