import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeMicrosoft } from '../fakes/microsoft.js';

/**
 * Microsoft Graph v1.0's Outlook contacts, calendar events and mail messages (`/me/contacts`,
 * `/me/events`, `/me/messages`: `$filter=lastModifiedDateTime ge ...`, `$orderby` only on the
 * properties the `$filter` names first, `$top` up to 1000 with `@odata.nextLink`, `$select`; contacts'
 * and events' times finer than a second, messages' whole seconds) against its local fake
 * (test/connectors/fakes/microsoft.ts), written from the Graph reference. These listings do not show
 * deleted items (only the delta functions report removals), so none reveals deletions here. A message
 * made through the API is a draft, whose subject an update may change (a received message's not).
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
    {
      name: 'messages',
      revealsDeletions: false,
      fields: { selected: 'subject', other: 'bodyPreview' },
      write: {
        create: {
          subject: 'Engine review notes',
          body: { contentType: 'Text', content: 'The notes follow.' },
          toRecipients: [{ emailAddress: { name: 'Ada Lovelace', address: 'ada@example.com' } }],
        },
        update: { subject: 'Engine review notes (revised)' },
        check: (stored) => stored.subject,
        delete: true,
      },
    },
  ],
};
