import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeGoogle } from '../fakes/google.js';

/**
 * Google Calendar v3 events (`updatedMin` inclusive to the millisecond, no upper bound, cancelled
 * events listed with `updatedMin` or a sync token, `maxResults` up to 2500) and People v1 contacts
 * (`people/me/connections`: `personFields` required, no time filter, sorted by last modification,
 * sync tokens that reveal deletions as `metadata.deleted`, writes that need the contact's etag) and
 * Gmail v1 messages (`messages.list` gives `{id, threadId}` stubs newest first, filtered by
 * `q=after:`/`before:` on the received time; changes, label changes and permanent deletions only
 * through `history.list` from a `startHistoryId`, 404 once that is older than the history kept)
 * against their local fake (test/connectors/fakes/google.ts), written from Google's references.
 */

/** An RFC 2822 message as `messages.insert` takes it: base64url in `raw`. */
const rawMessage = (subject: string) =>
  Buffer.from(
    [
      'From: Grace Hopper <grace@example.com>',
      'To: ada@example.com',
      `Subject: ${subject}`,
      'Date: Thu, 01 Oct 2026 09:00:00 +0000',
      'Content-Type: text/plain; charset="UTF-8"',
      '',
      'The engine review is on Thursday.',
    ].join('\r\n'),
  ).toString('base64url');
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
    {
      name: 'messages',
      // Permanent deletions (messages.delete) come back from history.list as `messagesDeleted`.
      revealsDeletions: true,
      // `messages.get`: `format=minimal` (or a `fields` mask) leaves the payload out.
      fields: { selected: 'snippet', other: 'payload' },
      write: {
        // messages.insert: the whole message, base64url RFC 2822, and its labels.
        create: { raw: rawMessage('Engine review'), labelIds: ['INBOX', 'UNREAD'] },
        // No messages.update or patch in v1: a message changes only in its labels (messages.modify).
        update: { addLabelIds: ['STARRED'], removeLabelIds: ['UNREAD'] },
        check: (stored) => (stored.labelIds as string[]).filter((label) => label === 'STARRED'),
        // messages.delete: permanent (messages.trash only adds the TRASH label).
        delete: true,
      },
    },
  ],
};
