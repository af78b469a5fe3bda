import type { ConformanceSpec } from '../kit/conformance.js';
import { NOTION_DATABASE_ID, startFakeNotion } from '../fakes/notion.js';

/**
 * Notion's API against its local fake (test/connectors/fakes/notion.ts). An object is a database,
 * named by its id: its records are the database's pages.
 */
export const spec: ConformanceSpec = {
  provider: 'notion',
  reference: 'https://developers.notion.com/reference',
  start: () => startFakeNotion(),
  objects: [
    {
      name: NOTION_DATABASE_ID,
      revealsDeletions: true,
      write: {
        create: {
          Name: { title: [{ text: { content: 'Write the launch post' } }] },
          Status: { status: { name: 'In progress' } },
        },
        update: { Estimate: { number: 5 } },
        check: (stored) => ({
          number: (stored.properties as Record<string, { number?: unknown }>).Estimate.number,
        }),
        delete: true,
      },
      metadata: {
        Name: { valueType: 'string', readOnly: false, isCustom: true },
        Status: {
          valueType: 'singleSelect',
          values: ['Not started', 'In progress', 'Done'].map((name) => ({ value: name, displayValue: name })),
        },
        Tags: { valueType: 'multiSelect', values: [{ value: 'Bug', displayValue: 'Bug' }] },
        Estimate: { valueType: 'float' },
        'Last edited': { valueType: 'datetime', readOnly: true },
        // Computed by Notion: never written.
        Created: { valueType: 'datetime', readOnly: true },
        Score: { readOnly: true },
      },
    },
  ],
};
