import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { capsuleFixturePartyId, startFakeCapsule } from '../fakes/capsule.js';

/**
 * Capsule CRM's API v2 against its local fake (test/connectors/fakes/capsule.ts). Capsule stands in
 * for Attio, whose public API cannot filter records by when they were modified.
 */
export const spec: ConformanceSpec = {
  provider: 'capsule',
  reference: 'https://developer.capsulecrm.com/v2/',
  start: () => startFakeCapsule(),
  objects: [
    {
      name: 'parties',
      revealsDeletions: true,
      // An organisation's name; the seeded parties are people, who have first and last names.
      roundTrip: { notInRecords: ['name'] },
      // Capsule's lists have no field selection: every field comes back.
      fields: { selected: 'firstName' },
      search: { field: 'jobTitle', set: setStored('parties', 'jobTitle') },
      write: {
        create: { type: 'person', firstName: 'Ada', lastName: 'Lovelace' },
        update: { jobTitle: 'CTO' },
        check: (stored) => stored.jobTitle,
        delete: true,
      },
      metadata: {
        type: { valueType: 'singleSelect', isRequired: true, isCustom: false },
        updatedAt: { valueType: 'datetime', readOnly: true },
        'fields.201': {
          displayName: 'Segment',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'SMB', displayValue: 'SMB' },
            { value: 'Enterprise', displayValue: 'Enterprise' },
          ],
        },
        'fields.202': { valueType: 'boolean', isCustom: true },
      },
    },
    {
      name: 'opportunities',
      revealsDeletions: true,
      search: { field: 'name', set: setStored('opportunities', 'name') },
      write: {
        create: { name: 'Renewal', party: { id: capsuleFixturePartyId }, milestone: { id: 1 } },
        update: { name: 'Renewal 2027' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        party: { isRequired: true },
        'fields.301': { valueType: 'float', isCustom: true },
      },
    },
  ],
};
