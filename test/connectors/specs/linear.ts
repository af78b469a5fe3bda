import type { ConformanceSpec } from '../kit/conformance.js';
import { LINEAR_TEAM_ID, startFakeLinear } from '../fakes/linear.js';

/** Linear's GraphQL API against its local fake (test/connectors/fakes/linear.ts). */
export const spec: ConformanceSpec = {
  provider: 'linear',
  reference: 'https://linear.app/developers/graphql',
  start: () => startFakeLinear(),
  objects: [
    {
      name: 'issues',
      revealsDeletions: true,
      fields: { selected: 'title', other: 'priority' },
      write: {
        create: { title: 'Checkout fails on Safari', teamId: LINEAR_TEAM_ID, priority: 2 },
        update: { title: 'Checkout fails on Safari 17' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        // IssueCreateInput.title is optional (a template may fill it): only teamId is required.
        title: { valueType: 'string', readOnly: false, isCustom: false },
        priority: {
          valueType: 'singleSelect',
          values: ['No priority', 'Urgent', 'High', 'Medium', 'Low'].map((label, i) => ({
            value: String(i),
            displayValue: label,
          })),
        },
        updatedAt: { valueType: 'datetime', readOnly: true },
      },
    },
    {
      name: 'projects',
      revealsDeletions: true,
      fields: { selected: 'name', other: 'color' },
      write: {
        create: { name: 'Q3 launch', teamIds: [LINEAR_TEAM_ID] },
        update: { description: 'Ship the new checkout' },
        check: (stored) => stored.description,
        delete: true,
      },
      metadata: { name: { valueType: 'string', isRequired: true }, targetDate: { valueType: 'date' } },
    },
    { name: 'teams', fields: { selected: 'key', other: 'timezone' }, metadata: { key: { readOnly: true } } },
    {
      name: 'users',
      fields: { selected: 'email', other: 'admin' },
      metadata: { active: { valueType: 'boolean' } },
    },
  ],
};
