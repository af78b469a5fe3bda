import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeActiveCampaign } from '../fakes/activeCampaign.js';

/** ActiveCampaign's API v3 against its local fake (test/connectors/fakes/activeCampaign.ts). */
export const spec: ConformanceSpec = {
  provider: 'activeCampaign',
  reference: 'https://developers.activecampaign.com/reference',
  start: () => startFakeActiveCampaign(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      // The contact list has no field selection: every field comes back.
      fields: { selected: 'email' },
      search: { field: 'email', set: setStored('contacts', 'email') },
      write: {
        create: { email: 'ada@example.com', firstName: 'Ada' },
        update: { firstName: 'Augusta' },
        check: (stored) => stored.firstName,
        delete: true,
      },
      metadata: {
        email: { valueType: 'string', isRequired: true, isCustom: false },
        udate: { valueType: 'datetime', readOnly: true },
        'fieldValues.1': {
          displayName: 'Industry',
          valueType: 'singleSelect',
          isCustom: true,
          isRequired: false,
        },
        'fieldValues.2': { valueType: 'date', isCustom: true, isRequired: true },
      },
    },
    {
      name: 'deals',
      revealsDeletions: false,
      fields: { selected: 'title' },
      search: { field: 'title', set: setStored('deals', 'title') },
      write: {
        create: { title: 'Renewal', value: 120000, currency: 'usd' },
        update: { title: 'Renewal 2027' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        status: { valueType: 'singleSelect' },
        'fields.1': {
          displayName: 'Plan',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'Starter', displayValue: 'Starter' },
            { value: 'Enterprise', displayValue: 'Enterprise' },
          ],
        },
        'fields.2': { valueType: 'float', isRequired: true },
      },
    },
  ],
};
