import type { ConformanceSpec } from '../kit/conformance.js';
import { CLICKUP_LIST_ID, CLICKUP_TEAM_ID, startFakeClickup } from '../fakes/clickup.js';

/**
 * ClickUp's API v2 (one List's tasks) against its local fake (test/connectors/fakes/clickup.ts),
 * written from ClickUp's reference. Spaces carry no modification time, so a read of them is a full
 * read every time: the fake serves them, and the suite's windowed checks leave them to the
 * full-read mode's own tests.
 */
export const spec: ConformanceSpec = {
  provider: 'clickup',
  reference: 'https://developer.clickup.com/reference',
  start: () => startFakeClickup(),
  templateVars: { teamId: CLICKUP_TEAM_ID, listId: CLICKUP_LIST_ID },
  objects: [
    {
      name: 'tasks',
      // A deleted task goes to the trash, out of every listing; nothing lists deletions.
      revealsDeletions: false,
      write: {
        create: { name: 'Ship the pricing page', description: 'Copy and layout' },
        update: { name: 'Ship the new pricing page' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: { name: { valueType: 'string', readOnly: false } },
    },
  ],
};
