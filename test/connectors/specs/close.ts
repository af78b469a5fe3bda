import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { closeFixtureLeadId, startFakeClose } from '../fakes/close.js';

/** Close's REST API against its local fake (test/connectors/fakes/close.ts). */
export const spec: ConformanceSpec = {
  provider: 'close',
  reference: 'https://developer.close.com/',
  start: () => startFakeClose(),
  objects: [
    {
      name: 'lead',
      revealsDeletions: true,
      fields: { selected: 'display_name', other: 'description' },
      search: { field: 'description', set: setStored('lead', 'description') },
      write: {
        create: { name: 'Acme Corp', 'custom.cf_industry00000000000000000000000000000000000': 'Software' },
        update: { name: 'Acme Corporation' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', readOnly: false, isCustom: false },
        date_updated: { valueType: 'datetime', readOnly: true, isCustom: false },
        'custom.cf_industry00000000000000000000000000000000000': {
          displayName: 'Industry',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'Software', displayValue: 'Software' },
            { value: 'Retail', displayValue: 'Retail' },
          ],
        },
        'custom.cf_tags0000000000000000000000000000000000000000': {
          valueType: 'multiSelect',
          isCustom: true,
        },
      },
    },
    {
      name: 'contact',
      // A reference to a lead, not text: the provider refuses a lead that does not exist.
      roundTrip: { notWritable: ['lead_id'] },
      revealsDeletions: true,
      fields: { selected: 'name', other: 'title' },
      search: { field: 'title', set: setStored('contact', 'title') },
      write: {
        create: { lead_id: closeFixtureLeadId, name: 'Ada Lovelace', title: 'CTO' },
        update: { title: 'CEO' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        lead_id: { valueType: 'string' },
        'custom.cf_birthday00000000000000000000000000000000000': { valueType: 'date', isCustom: true },
      },
    },
    {
      name: 'opportunity',
      // A reference to a lead, not text: the provider refuses a lead that does not exist.
      roundTrip: { notWritable: ['lead_id'] },
      revealsDeletions: true,
      fields: { selected: 'note', other: 'confidence' },
      write: {
        create: { lead_id: closeFixtureLeadId, note: 'Renewal', value: 120000, value_period: 'annual' },
        update: { note: 'Renewal 2027' },
        check: (stored) => stored.note,
        delete: true,
      },
      metadata: {
        lead_id: { isRequired: true },
        value_period: { valueType: 'singleSelect' },
        'custom.cf_seats000000000000000000000000000000000000000': {
          valueType: 'float',
          isCustom: true,
          isRequired: true,
        },
      },
    },
  ],
};
