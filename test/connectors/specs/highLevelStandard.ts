import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { HIGHLEVEL_FAKE_LOCATION, startFakeHighLevelStandard } from '../fakes/highLevelStandard.js';

/**
 * HighLevel's LeadConnector API v2 (a location's contacts and opportunities) against its local fake
 * (test/connectors/fakes/highLevelStandard.ts), written from HighLevel's reference. Contacts are
 * searched by `dateUpdated` on an index that lags a few seconds; a deleted contact is listed
 * nowhere, so none is revealed. Opportunities list newest created first with no filter on
 * modification: read whole, a deleted one shows by its absence.
 */
export const spec: ConformanceSpec = {
  provider: 'highLevelStandard',
  reference: 'https://highlevel.stoplight.io/docs/integrations/',
  start: () => startFakeHighLevelStandard(),
  templateVars: { locationId: HIGHLEVEL_FAKE_LOCATION },
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      fields: { selected: 'email' },
      search: { field: 'email', set: setStored('contacts', 'email') },
      write: {
        create: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        update: { companyName: 'Analytical Engines' },
        check: (stored) => stored.companyName,
        delete: true,
      },
    },
    {
      name: 'opportunities',
      revealsDeletions: true,
      fields: { selected: 'name' },
      write: {
        create: { name: 'Difference engine', pipelineId: 'VDm7RPYC2GLUvdpKmBfC', status: 'open' },
        update: { monetaryValue: 1200 },
        check: (stored) => stored.monetaryValue,
        delete: true,
      },
    },
  ],
};
