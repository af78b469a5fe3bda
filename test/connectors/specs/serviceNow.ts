import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeServiceNow } from '../fakes/serviceNow.js';

/**
 * ServiceNow's Table API (incident and sys_user) against its local fake
 * (test/connectors/fakes/serviceNow.ts): `sysparm_query` on `sys_updated_on` (whole seconds, UTC)
 * with `ORDERBYsys_updated_on`, `sysparm_limit` up to 10000 with `sysparm_offset`, `sysparm_fields`
 * returning only the fields named. A deleted record is listed nowhere by the Table API. Field
 * metadata (the sys_dictionary table) is not in this spec yet.
 */
export const spec: ConformanceSpec = {
  provider: 'serviceNow',
  reference: 'https://developer.servicenow.com/dev.do#!/reference/api/latest/rest/c_TableAPI',
  start: () => startFakeServiceNow(),
  templateVars: { workspace: 'dev00000' },
  objects: [
    {
      name: 'incident',
      revealsDeletions: false,
      fields: { selected: 'short_description', other: 'description' },
      write: {
        create: { short_description: 'Printer on fire', urgency: '2' },
        update: { short_description: 'Printer out of toner' },
        check: (stored) => stored.short_description,
        delete: true,
      },
    },
    {
      name: 'sys_user',
      revealsDeletions: false,
      fields: { selected: 'user_name', other: 'email' },
      write: {
        create: {
          user_name: 'ada.lovelace',
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada@example.com',
        },
        update: { title: 'Countess' },
        check: (stored) => stored.title,
        delete: true,
      },
    },
  ],
};
