import type { ConformanceSpec } from '../kit/conformance.js';
import { JIRA_CLOUD_ID, JIRA_PROJECT_KEY, startFakeAtlassian } from '../fakes/atlassian.js';

/**
 * Jira Cloud's REST API v3 (issues through the enhanced JQL search) against its local fake
 * (test/connectors/fakes/atlassian.ts), written from Atlassian's reference. Projects carry no
 * modification time, so a read of them is a full read every time: the fake serves them, and the
 * suite's windowed checks leave them to the full-read mode's own tests.
 */
export const spec: ConformanceSpec = {
  provider: 'atlassian',
  reference: 'https://developer.atlassian.com/cloud/jira/platform/rest/v3/',
  start: () => startFakeAtlassian(),
  templateVars: { cloudId: JIRA_CLOUD_ID },
  objects: [
    {
      name: 'issues',
      // A deleted issue is gone from search and from reads by id; nothing lists deletions.
      revealsDeletions: false,
      fields: { selected: 'summary', other: 'customfield_10040' },
      write: {
        create: {
          project: { key: JIRA_PROJECT_KEY },
          issuetype: { name: 'Task' },
          summary: 'Checkout fails on Safari',
        },
        update: { summary: 'Checkout fails on Safari 17' },
        check: (stored) => (stored.fields as Record<string, unknown>).summary,
        delete: true,
      },
      metadata: {
        summary: { valueType: 'string', readOnly: false, isCustom: false },
        updated: { valueType: 'datetime', readOnly: true },
        customfield_10016: { displayName: 'Story point estimate', valueType: 'float', isCustom: true },
        customfield_10040: { displayName: 'Team name', valueType: 'string', isCustom: true },
      },
      // Rich-text fields take Atlassian Document Format, never plain text.
      roundTrip: { notWritable: ['description', 'environment', 'customfield_10041'] },
    },
  ],
};
