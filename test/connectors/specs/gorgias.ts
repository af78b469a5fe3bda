import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeGorgias } from '../fakes/gorgias.js';

/**
 * Gorgias's REST API (tickets and customers newest first, cursor pages) against its local fake
 * (test/connectors/fakes/gorgias.ts), written from Gorgias's reference; sources in
 * /work/notes/fakes/gorgias.md.
 */
export const spec: ConformanceSpec = {
  provider: 'gorgias',
  reference: 'https://developers.gorgias.com/reference',
  start: () => startFakeGorgias(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'tickets',
      revealsDeletions: true,
      // Write-only: the messages a ticket is created with.
      roundTrip: { notInRecords: ['messages'] },
      write: {
        create: {
          channel: 'email',
          via: 'api',
          messages: [
            {
              channel: 'email',
              via: 'api',
              from_agent: false,
              sender: { email: 'ada@example.com' },
              subject: 'Parcel lost',
              body_text: 'My parcel never arrived.',
            },
          ],
        },
        update: { status: 'closed' },
        check: (stored) => stored.status,
        delete: true,
      },
      metadata: {
        status: { valueType: 'singleSelect', isCustom: false },
        updated_datetime: { valueType: 'datetime', readOnly: true },
        'custom_fields.11': {
          displayName: 'Contact reason',
          valueType: 'singleSelect',
          isCustom: true,
          isRequired: true,
          values: [
            { value: 'Refund', displayValue: 'Refund' },
            { value: 'Shipping', displayValue: 'Shipping' },
          ],
        },
        'custom_fields.12': {
          displayName: 'Order value',
          valueType: 'float',
          isCustom: true,
          isRequired: false,
        },
        'custom_fields.13': { valueType: 'boolean', isCustom: true },
      },
    },
    {
      name: 'customers',
      revealsDeletions: true,
      write: {
        create: {
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          channels: [{ type: 'email', address: 'ada@example.com' }],
        },
        update: { note: 'Prefers email' },
        check: (stored) => stored.note,
        delete: true,
      },
      metadata: {
        channels: { valueType: 'other', isRequired: true },
        'custom_fields.21': { displayName: 'Segment', valueType: 'string', isCustom: true },
      },
    },
  ],
};
