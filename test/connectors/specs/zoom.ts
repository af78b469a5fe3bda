import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeZoom } from '../fakes/zoom.js';

/**
 * Zoom's REST API v2 (users, the token user's meetings and webinars; `page_size` up to 300 with
 * `next_page_token`) against its local fake (test/connectors/fakes/zoom.ts), written from Zoom's
 * reference. No listing filters by modification and no record says when it changed, so each is
 * listed whole; a deleted user, meeting or webinar is simply no longer listed, which a complete
 * listing reveals (`revealsDeletions`).
 */
export const spec: ConformanceSpec = {
  provider: 'zoom',
  reference: 'https://developers.zoom.us/docs/api/',
  start: () => startFakeZoom(),
  objects: [
    { name: 'users', revealsDeletions: true },
    {
      name: 'meetings',
      revealsDeletions: true,
      write: {
        create: { topic: 'Design review', type: 2, start_time: '2026-03-01T15:00:00Z', duration: 45 },
        update: { agenda: 'Walk through the new onboarding flow' },
        check: (stored) => stored.agenda,
        delete: true,
      },
    },
    {
      name: 'webinars',
      revealsDeletions: true,
      write: {
        create: {
          topic: 'Quarterly product update',
          type: 5,
          start_time: '2026-04-01T17:00:00Z',
          duration: 60,
        },
        update: { agenda: 'Roadmap and questions' },
        check: (stored) => stored.agenda,
        delete: true,
      },
    },
  ],
};
