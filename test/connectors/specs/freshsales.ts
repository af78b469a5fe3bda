import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeFreshsales } from '../fakes/freshsales.js';

/**
 * Freshsales (Freshworks CRM) against its local fake (test/connectors/fakes/freshsales.ts), written
 * from https://developers.freshworks.com/crm/api/: contacts, sales accounts and deals, listed
 * through saved views or the filtered search (`updated_at` `is_after`), times to the second with the
 * account's offset, custom values under `custom_field`. A deleted record goes to the recycle bin,
 * which no API lists: deletions are not revealed.
 */
export const spec: ConformanceSpec = {
  provider: 'freshsales',
  reference: 'https://developers.freshworks.com/crm/api/',
  templateVars: { workspace: 'acme' },
  start: () => startFakeFreshsales(),
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      // Lists take no field selection: every field comes back.
      fields: { selected: 'first_name' },
      search: { field: 'email', set: setStored('contacts', 'email') },
      write: {
        create: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        update: { job_title: 'Countess' },
        check: (stored) => stored.job_title,
        delete: true,
      },
      metadata: {
        first_name: { displayName: 'First name', valueType: 'string', isCustom: false },
        last_name: { isRequired: true, isCustom: false },
        cf_tier: {
          displayName: 'Tier',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'Gold', displayValue: 'Gold' },
            { value: 'Silver', displayValue: 'Silver' },
          ],
        },
      },
    },
    {
      name: 'sales_accounts',
      revealsDeletions: false,
      write: {
        create: { name: 'Analytical Engines Ltd', website: 'https://engines.example.com' },
        update: { city: 'London' },
        check: (stored) => stored.city,
        delete: true,
      },
      metadata: {
        name: { isRequired: true, valueType: 'string', isCustom: false },
        cf_region: { valueType: 'string', isCustom: true },
      },
    },
    {
      name: 'deals',
      revealsDeletions: false,
      write: {
        create: { name: 'Renewal', amount: 5000 },
        update: { name: 'Renewal 2027' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: { name: { isRequired: true, isCustom: false }, cf_source_detail: { isCustom: true } },
    },
  ],
};
