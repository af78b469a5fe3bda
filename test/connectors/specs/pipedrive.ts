import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakePipedrive } from '../fakes/pipedrive.js';

/** Pipedrive (API v2 records; v1 and v2 field lists) against its local fake (test/connectors/fakes/pipedrive.ts). */
export const spec: ConformanceSpec = {
  provider: 'pipedrive',
  reference: 'https://developers.pipedrive.com/docs/api/v1',
  start: () => startFakePipedrive(),
  objects: [
    {
      name: 'persons',
      revealsDeletions: false,
      fields: { selected: 'name' },
      search: {
        field: 'email',
        set: (fake, id, value) =>
          Object.assign(fake.stored('persons', id)!, { emails: [{ value, primary: true, label: 'work' }] }),
      },
      write: {
        create: { name: 'Ada Lovelace' },
        update: { name: 'Augusta Ada King' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', readOnly: false, isCustom: false, isRequired: true },
        update_time: { valueType: 'date', readOnly: true },
        'custom_fields.5c1a0e6b9d2f4c8a1b3e7d9f0a2c4e6b8d0f1a3c': {
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: '31', displayValue: 'Gold' },
            { value: '32', displayValue: 'Silver' },
          ],
        },
      },
    },
    {
      name: 'organizations',
      revealsDeletions: false,
      fields: { selected: 'name' },
      search: { field: 'name', set: setStored('organizations', 'name') },
    },
    {
      name: 'deals',
      revealsDeletions: true,
      search: { field: 'title', set: setStored('deals', 'title') },
      write: {
        create: { title: 'Renewal' },
        update: { title: 'Renewal 2027' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: { value: { valueType: 'float' } },
    },
  ],
};
