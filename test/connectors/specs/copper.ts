import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { copperFixturePersonId, copperUserEmail, startFakeCopper } from '../fakes/copper.js';

/** Copper's Developer API against its local fake (test/connectors/fakes/copper.ts). */
export const spec: ConformanceSpec = {
  provider: 'copper',
  reference: 'https://developer.copper.com/',
  start: () => startFakeCopper(),
  templateVars: { userEmail: copperUserEmail },
  objects: [
    {
      name: 'people',
      revealsDeletions: false,
      // Copper's search has no field selection: every field comes back.
      fields: { selected: 'name' },
      search: {
        field: 'emails',
        set: (fake, id, value) =>
          Object.assign(fake.stored('people', id)!, { emails: [{ email: value, category: 'work' }] }),
      },
      write: {
        create: { name: 'Ada Lovelace', title: 'CTO' },
        update: { title: 'CEO' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', isRequired: true, isCustom: false },
        date_modified: { valueType: 'datetime', readOnly: true },
        '101': {
          displayName: 'Region',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: '1001', displayValue: 'EMEA' },
            { value: '1002', displayValue: 'Americas' },
          ],
        },
        '102': { valueType: 'boolean', isCustom: true },
      },
    },
    {
      name: 'companies',
      revealsDeletions: false,
      search: { field: 'name', set: setStored('companies', 'name') },
      write: {
        create: { name: 'Acme Corp' },
        update: { email_domain: 'acme.example' },
        check: (stored) => stored.email_domain,
        delete: true,
      },
      metadata: { '101': { valueType: 'singleSelect', isCustom: true } },
    },
    {
      name: 'opportunities',
      revealsDeletions: false,
      search: { field: 'name', set: setStored('opportunities', 'name') },
      write: {
        create: { name: 'Renewal', primary_contact_id: copperFixturePersonId, monetary_value: 1200 },
        update: { name: 'Renewal 2027' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        primary_contact_id: { isRequired: true },
        status: { valueType: 'singleSelect' },
        '103': { valueType: 'float', isCustom: true },
      },
    },
  ],
};
