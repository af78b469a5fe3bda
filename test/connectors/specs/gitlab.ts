import type { ConformanceSpec } from '../kit/conformance.js';
import { GITLAB_PROJECT_ID, startFakeGitlab } from '../fakes/gitlab.js';

/**
 * GitLab's REST API v4 (one project's issues and merge requests) against its local fake
 * (test/connectors/fakes/gitlab.ts), written from GitLab's reference.
 */
export const spec: ConformanceSpec = {
  provider: 'gitlab',
  reference: 'https://docs.gitlab.com/api/',
  start: () => startFakeGitlab(),
  templateVars: { project: GITLAB_PROJECT_ID },
  // The catalog's custom auth: the access token is its one input.
  material: (credential) => ({ type: 'custom', values: { token: credential } }),
  objects: [
    {
      name: 'issues',
      // Deleting an issue removes it for good; nothing lists deletions.
      revealsDeletions: false,
      write: {
        create: { title: 'Checkout fails on Safari', description: 'Steps to reproduce: …' },
        update: { title: 'Checkout fails on Safari 17' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        title: { valueType: 'string', readOnly: false },
        updated_at: { valueType: 'datetime', readOnly: true },
      },
    },
    { name: 'merge_requests', revealsDeletions: false },
  ],
};
