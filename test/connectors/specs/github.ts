import type { ConformanceSpec } from '../kit/conformance.js';
import { GITHUB_OWNER, GITHUB_REPO, startFakeGithub } from '../fakes/github.js';

/**
 * GitHub's REST API (one repository's issues and milestones) against its local fake
 * (test/connectors/fakes/github.ts), written from GitHub's reference. Labels carry no modification
 * time, so a read of them is a full read every time: the fake serves them, and the suite's windowed
 * checks leave them to the full-read mode's own tests.
 */
export const spec: ConformanceSpec = {
  provider: 'github',
  reference: 'https://docs.github.com/en/rest?apiVersion=2022-11-28',
  start: () => startFakeGithub(),
  templateVars: { owner: GITHUB_OWNER, repo: GITHUB_REPO },
  objects: [
    {
      name: 'issues',
      // An issue deleted by an admin leaves the listing; nothing reveals it.
      revealsDeletions: false,
      fields: { selected: 'title' },
      write: {
        create: { title: 'Checkout fails on Safari', body: 'Steps to reproduce: …' },
        update: { title: 'Checkout fails on Safari 17' },
        check: (stored) => stored.title,
      },
      metadata: {
        title: { valueType: 'string', readOnly: false },
        body: { valueType: 'string', readOnly: false },
        updated_at: { valueType: 'datetime', readOnly: true },
      },
    },
    {
      name: 'milestones',
      revealsDeletions: false,
      write: {
        create: { title: 'v1.0', description: 'The first release' },
        update: { description: 'The first stable release' },
        check: (stored) => stored.description,
        delete: true,
      },
    },
  ],
};
