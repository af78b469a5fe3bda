import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeGoogle } from '../fakes/google.js';

/**
 * Google Calendar v3 events (`updatedMin` inclusive to the millisecond, no upper bound, cancelled
 * events listed with `updatedMin` or a sync token, `maxResults` up to 2500) and People v1 contacts
 * (`people/me/connections`: `personFields` required, no time filter, sorted by last modification,
 * sync tokens that reveal deletions as `metadata.deleted`, writes that need the contact's etag)
 * against their local fake (test/connectors/fakes/google.ts), written from Google's references.
 */
export const spec: ConformanceSpec = {
  provider: 'google',
  reference: 'https://developers.google.com/workspace/calendar/api/v3/reference/events/list',
  start: () => startFakeGoogle(),
  objects: [
    {
      name: 'events',
      // Cancelled events come back to a listing with `updatedMin` or a sync token.
      revealsDeletions: true,
      fields: { selected: 'summary' },
      write: {
        create: {
          summary: 'Engine review',
          start: { dateTime: '2026-10-01T09:00:00Z' },
          end: { dateTime: '2026-10-01T10:00:00Z' },
        },
        update: { summary: 'Engine review (moved)' },
        check: (stored) => stored.summary,
        delete: true,
      },
    },
    {
      name: 'connections',
      // A sync lists contacts deleted since the last one as `metadata.deleted: true`.
      revealsDeletions: true,
      // `personFields` is required and returns only the fields it names.
      fields: { selected: 'names', other: 'organizations' },
      write: {
        create: {
          names: [{ givenName: 'Ada', familyName: 'Lovelace' }],
          emailAddresses: [{ value: 'ada@example.com' }],
        },
        update: { names: [{ givenName: 'Augusta', familyName: 'King' }] },
        check: (stored) =>
          (stored.names as { givenName?: string; familyName?: string }[]).map(
            ({ givenName, familyName }) => ({
              givenName,
              familyName,
            }),
          ),
        delete: true,
      },
    },
  ],
};
