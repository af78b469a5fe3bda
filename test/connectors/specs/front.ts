import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeFront } from '../fakes/front.js';

/**
 * Front's Core API (contacts filtered by update time, accounts newest first) against its local fake
 * (test/connectors/fakes/front.ts), written from Front's OpenAPI document; sources in
 * /work/notes/fakes/front.md.
 */
export const spec: ConformanceSpec = {
  provider: 'front',
  reference: 'https://dev.frontapp.com/reference',
  start: () => startFakeFront(),
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      // Write-only: the lists a contact is added to.
      roundTrip: { notInRecords: ['list_names'] },
      write: {
        create: { name: 'Ada Lovelace', handles: [{ handle: 'ada@example.com', source: 'email' }] },
        update: { description: 'First programmer' },
        check: (stored) => stored.description,
        delete: true,
      },
      metadata: {
        handles: { valueType: 'other', isRequired: true, isCustom: false },
        updated_at: { readOnly: true },
        'custom_fields.Tier': {
          displayName: 'Tier',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'gold', displayValue: 'Gold' },
            { value: 'silver', displayValue: 'Silver' },
          ],
        },
        'custom_fields.VIP': { valueType: 'boolean', isCustom: true },
        'custom_fields.City': { valueType: 'string', isCustom: true },
      },
    },
    {
      name: 'accounts',
      revealsDeletions: false,
      write: {
        create: { name: 'Dunder Mifflin', domains: ['dundermifflin.example'] },
        update: { name: 'Dunder Mifflin Paper' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        name: { isRequired: true },
        'custom_fields.Seats': { valueType: 'float', isCustom: true },
        'custom_fields.Renewal date': { valueType: 'datetime' },
      },
    },
  ],
};
