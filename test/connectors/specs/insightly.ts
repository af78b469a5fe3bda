import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeInsightly } from '../fakes/insightly.js';

/**
 * Insightly's REST API v3.1 (contacts, organisations, opportunities: `/{Object}/Search` with
 * `updated_after_utc` at or after, to the second; `top` up to 500 and `skip`; `field_name` +
 * `field_value` equality search) against its local fake (test/connectors/fakes/insightly.ts),
 * written from Insightly's reference. A deleted record is listed nowhere, so none reveals deletions.
 * Listings select no fields (only `brief`), so no field is expected left out.
 */
export const spec: ConformanceSpec = {
  provider: 'insightly',
  reference: 'https://api.insightly.com/v3.1/Help',
  start: () => startFakeInsightly(),
  objects: [
    {
      name: 'Contacts',
      revealsDeletions: false,
      fields: { selected: 'FIRST_NAME' },
      write: {
        create: { FIRST_NAME: 'Ada', LAST_NAME: 'Lovelace', EMAIL_ADDRESS: 'ada@example.com' },
        update: { TITLE: 'Countess' },
        check: (stored) => stored.TITLE,
        delete: true,
      },
      search: { field: 'EMAIL_ADDRESS', set: setStored('Contacts', 'EMAIL_ADDRESS') },
    },
    {
      name: 'Organisations',
      revealsDeletions: false,
      fields: { selected: 'ORGANISATION_NAME' },
      write: {
        create: { ORGANISATION_NAME: 'Analytical Engines Ltd', WEBSITE: 'https://engines.example.com' },
        update: { BACKGROUND: 'Difference engines' },
        check: (stored) => stored.BACKGROUND,
        delete: true,
      },
      search: { field: 'ORGANISATION_NAME', set: setStored('Organisations', 'ORGANISATION_NAME') },
    },
    {
      name: 'Opportunities',
      revealsDeletions: false,
      fields: { selected: 'OPPORTUNITY_NAME' },
      write: {
        create: { OPPORTUNITY_NAME: 'Engine order', OPPORTUNITY_STATE: 'OPEN' },
        update: { OPPORTUNITY_DETAILS: 'Two engines' },
        check: (stored) => stored.OPPORTUNITY_DETAILS,
        delete: true,
      },
      search: { field: 'OPPORTUNITY_NAME', set: setStored('Opportunities', 'OPPORTUNITY_NAME') },
    },
  ],
};
