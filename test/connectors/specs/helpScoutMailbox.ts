import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeHelpScout } from '../fakes/helpScoutMailbox.js';

/**
 * Help Scout's Mailbox API 2.0 (conversations, customers) against its local fake
 * (test/connectors/fakes/helpScoutMailbox.ts), written from Help Scout's reference.
 */
export const spec: ConformanceSpec = {
  provider: 'helpScoutMailbox',
  reference: 'https://developer.helpscout.com/mailbox-api/',
  start: () => startFakeHelpScout(),
  objects: [
    {
      name: 'conversations',
      // A deleted conversation leaves every listing; nothing lists deletions.
      revealsDeletions: false,
    },
    {
      name: 'customers',
      // Deleting a customer is a permanent (GDPR) deletion; nothing reveals it.
      revealsDeletions: false,
      write: {
        create: { firstName: 'Ada', lastName: 'Lovelace', organization: 'Analytical Engines' },
        update: { jobTitle: 'Analyst' },
        check: (stored) => stored.jobTitle,
      },
      metadata: {
        firstName: { valueType: 'string', readOnly: false },
        updatedAt: { valueType: 'datetime', readOnly: true },
      },
    },
  ],
};
