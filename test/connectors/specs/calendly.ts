import type { ConformanceSpec } from '../kit/conformance.js';
import { CALENDLY_ORGANIZATION, startFakeCalendly } from '../fakes/calendly.js';

/**
 * Calendly API v2: scheduled events and event types of an organization (no filter or order by
 * modification time; `count` up to 100 with page tokens; resources named by their `uri`; a canceled
 * event listed as `status: canceled`; event types created and updated by uuid) against its local
 * fake (test/connectors/fakes/calendly.ts), written from Calendly's API reference. The connection's
 * workspace is the organization URI the token answer names.
 */
export const spec: ConformanceSpec = {
  provider: 'calendly',
  reference: 'https://developer.calendly.com/api-docs/calendly-api/scheduled-events/list-scheduled-events',
  start: () => startFakeCalendly(),
  templateVars: { workspace: CALENDLY_ORGANIZATION },
  objects: [
    {
      name: 'scheduled_events',
      // Canceling is how a host removes a meeting: listed as canceled, or left out by `status=active`.
      revealsDeletions: true,
    },
    {
      name: 'event_types',
      // A deleted event type leaves the listing.
      revealsDeletions: true,
      write: {
        create: { name: 'Engine consultation', duration: 45 },
        update: { name: 'Engine consultation (long)' },
        check: (stored) => stored.name,
      },
    },
  ],
};
