import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeFreshservice } from '../fakes/freshservice.js';

/**
 * Freshservice's API v2 (tickets with `updated_since`, the trash as `filter=deleted`; requesters and
 * assets, listed whole with no time filter; `page`/`per_page` up to 100 with `Link` headers; ticket
 * form fields) against its local fake (test/connectors/fakes/freshservice.ts). A deleted ticket is
 * listed in the trash, a deleted (deactivated) requester stays listed with `active: false` unless
 * `active=true` asks for active ones, a deleted asset is listed only with `trashed=true`: each is
 * revealed one way or another.
 */
export const spec: ConformanceSpec = {
  provider: 'freshservice',
  reference: 'https://api.freshservice.com/',
  start: () => startFakeFreshservice(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'tickets',
      revealsDeletions: true,
      // No field selection: every listing returns whole tickets.
      fields: { selected: 'subject' },
      write: {
        create: {
          subject: 'Printer on fire',
          description: '<p>Smoke from tray 2</p>',
          status: 2,
          priority: 3,
          email: 'ada@example.com',
        },
        update: { subject: 'Printer no longer on fire' },
        check: (stored) => stored.subject,
        delete: true,
      },
      metadata: {
        subject: { valueType: 'string', isRequired: true, isCustom: false },
        description: { isRequired: true, isCustom: false },
      },
    },
    {
      name: 'requesters',
      revealsDeletions: true,
      fields: { selected: 'first_name' },
      write: {
        create: { first_name: 'Charles', last_name: 'Babbage', primary_email: 'charles@example.com' },
        update: { job_title: 'Inventor' },
        check: (stored) => stored.job_title,
        delete: true,
      },
    },
    {
      name: 'assets',
      revealsDeletions: true,
      fields: { selected: 'name' },
      write: {
        create: { name: 'Analytical Engine', asset_type_id: 7 },
        update: { description: 'Steam powered' },
        check: (stored) => stored.description,
        delete: true,
      },
    },
  ],
};
