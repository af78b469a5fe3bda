import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeMicrosoft } from '../fakes/microsoft.js';

/**
 * Microsoft Graph v1.0's Outlook contacts and calendar events (`/me/contacts`, `/me/events`:
 * `$filter=lastModifiedDateTime ge ...`, `$orderby` only on a property the `$filter` names first,
 * `$top` up to 1000 with `@odata.nextLink`, `$select`, times finer than a second) against its local
 * fake (test/connectors/fakes/microsoft.ts), written from the Graph reference. These listings do not
 * show deleted items (only the delta functions report removals), so neither reveals deletions here.
 */
export const spec: ConformanceSpec = {
  provider: 'microsoft',
  reference: 'https://learn.microsoft.com/graph/api/user-list-contacts',
  start: () => startFakeMicrosoft(),
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      fields: { selected: 'givenName', other: 'companyName' },
      write: {
        create: {
          givenName: 'Ada',
          surname: 'Lovelace',
          emailAddresses: [{ name: 'Ada Lovelace', address: 'ada@example.com' }],
        },
        update: { jobTitle: 'Countess' },
        check: (stored) => stored.jobTitle,
        delete: true,
      },
    },
    {
      name: 'events',
      revealsDeletions: false,
      fields: { selected: 'subject', other: 'location' },
      write: {
        create: {
          subject: 'Engine review',
          start: { dateTime: '2026-10-01T09:00:00', timeZone: 'UTC' },
          end: { dateTime: '2026-10-01T10:00:00', timeZone: 'UTC' },
        },
        update: { subject: 'Engine review (moved)' },
        check: (stored) => stored.subject,
        delete: true,
      },
    },
  ],
};
