import type { ConformanceSpec } from '../kit/conformance.js';
import { ASANA_WORKSPACE, startFakeAsana } from '../fakes/asana.js';

/** Asana's REST API 1.0 against its local fake (test/connectors/fakes/asana.ts). */
export const spec: ConformanceSpec = {
  provider: 'asana',
  reference: 'https://developers.asana.com/reference/rest-api-reference',
  start: () => startFakeAsana(),
  templateVars: { workspace: ASANA_WORKSPACE },
  objects: [
    {
      name: 'projects',
      revealsDeletions: true,
      fields: { selected: 'name', other: 'notes' },
      write: {
        create: { name: 'Q3 launch', notes: 'Everything for the launch' },
        update: { name: 'Q3 launch (moved)' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', isRequired: true, isCustom: false },
        modified_at: { valueType: 'datetime', readOnly: true },
      },
    },
    {
      name: 'tasks',
      revealsDeletions: true,
      fields: { selected: 'name', other: 'notes' },
      write: {
        create: { name: 'Write the docs', '1200000000000101': '1200000000000111' },
        update: { notes: 'Start with the API' },
        check: (stored) => stored.notes,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', isCustom: false },
        completed: { valueType: 'boolean' },
        '1200000000000101': {
          displayName: 'Priority',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: '1200000000000111', displayValue: 'High' },
            { value: '1200000000000112', displayValue: 'Low' },
          ],
          // 'Medium' (1200000000000113) is disabled: no longer an allowed value.
        },
        '1200000000000102': { displayName: 'Estimate', valueType: 'float', isCustom: true },
        // A formula field: its value is computed, never written.
        '1200000000000104': { displayName: 'Score', isCustom: true, readOnly: true },
        '1200000000000105': { displayName: 'Ticket', valueType: 'string', isCustom: true, readOnly: false },
      },
    },
  ],
};
