import type { ConformanceSpec } from '../kit/conformance.js';
import { MONDAY_BOARD_ID, startFakeMonday } from '../fakes/monday.js';

/**
 * monday.com's platform API against its local fake (test/connectors/fakes/monday.ts). An object is
 * a board, named by its id: its records are the board's items.
 */
export const spec: ConformanceSpec = {
  provider: 'monday',
  reference: 'https://developer.monday.com/api-reference',
  start: () => startFakeMonday(),
  objects: [
    {
      name: MONDAY_BOARD_ID,
      revealsDeletions: true,
      write: {
        create: {
          name: 'Launch plan',
          status: { label: 'Working on it' },
          dropdown: { labels: ['Web'] },
          date4: { date: '2025-09-01' },
        },
        update: { text: 'Call the venue' },
        check: (stored) => stored.text,
        delete: true,
      },
      metadata: {
        name: { displayName: 'Name', valueType: 'string', isRequired: true, isCustom: false },
        status: {
          valueType: 'singleSelect',
          isCustom: true,
          readOnly: false,
          values: ['Working on it', 'Done', 'Stuck'].map((label) => ({ value: label, displayValue: label })),
        },
        numbers: { displayName: 'Budget', valueType: 'float' },
        dropdown: {
          valueType: 'multiSelect',
          values: ['Web', 'Mobile'].map((label) => ({ value: label, displayValue: label })),
        },
        last_updated: { valueType: 'datetime', readOnly: true },
        updated_at: { valueType: 'datetime', readOnly: true },
      },
    },
  ],
};
