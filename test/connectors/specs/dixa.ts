import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeDixa } from '../fakes/dixa.js';

/**
 * Dixa's API v1 (end users and agents) against its local fake (test/connectors/fakes/dixa.ts),
 * written from Dixa's reference. Neither listing filters by time and neither record says when it
 * changed, so a read walks them whole; a removed agent or end user shows only by its absence, and
 * complete walks reveal it.
 */
export const spec: ConformanceSpec = {
  provider: 'dixa',
  reference: 'https://docs.dixa.io/openapi/dixa-api/v1/',
  start: () => startFakeDixa(),
  objects: [
    {
      name: 'endusers',
      revealsDeletions: true,
      fields: { selected: 'email' },
      write: {
        create: { displayName: 'Ada Lovelace', email: 'ada@example.com' },
        update: { firstName: 'Ada' },
        check: (stored) => stored.firstName,
      },
    },
    {
      name: 'agents',
      revealsDeletions: true,
      fields: { selected: 'email' },
      write: {
        create: { displayName: 'Grace Hopper', email: 'grace@example.com' },
        update: { lastName: 'Hopper' },
        check: (stored) => stored.lastName,
        delete: true,
      },
    },
  ],
};
