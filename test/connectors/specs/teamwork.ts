import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeTeamwork } from '../fakes/teamwork.js';

/**
 * Teamwork.com's Projects API v3 (projects, tasks, people: `updatedAfter`, tasks' `updatedBefore`,
 * `page`/`pageSize` up to 500 with `meta.page.hasMore`, 150 requests a minute) against its local fake
 * (test/connectors/fakes/teamwork.ts). Deleted tasks are listed with `showDeleted=true`; deleted
 * projects and people are listed nowhere. Projects are written; tasks (created inside a task list)
 * and people (invited elsewhere) are read.
 */
export const spec: ConformanceSpec = {
  provider: 'teamwork',
  reference: 'https://apidocs.teamwork.com/docs/teamwork/v3/',
  start: () => startFakeTeamwork(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'projects',
      revealsDeletions: false,
      fields: { selected: 'name' },
      write: {
        create: { name: 'Analytical Engine', description: 'Build it' },
        update: { description: 'Built it' },
        check: (stored) => stored.description,
        delete: true,
      },
    },
    { name: 'tasks', revealsDeletions: true, fields: { selected: 'name' } },
    { name: 'people', revealsDeletions: false, fields: { selected: 'firstName' } },
  ],
};
