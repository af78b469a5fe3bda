import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeSugarCRM } from '../fakes/sugarCRM.js';

/**
 * SugarCRM's REST API v11 (flat records, the filter API with `$gt`/`$gte` on `date_modified`,
 * `max_num`/`offset` with `next_offset`, `deleted=true` listing deleted records with `deleted: true`,
 * `/metadata` vardefs) against its local fake (test/connectors/fakes/sugarCRM.ts). Deleting marks a
 * record deleted and stamps `date_modified`, so every module reveals deletions.
 */
const metadata = {
  date_modified: { valueType: 'datetime' as const, isCustom: false },
  description: { isCustom: false, isRequired: false },
};

export const spec: ConformanceSpec = {
  provider: 'sugarCRM',
  reference:
    'https://support.sugarcrm.com/Documentation/Sugar_Developer/Sugar_Developer_Guide_13.0/Integration/Web_Services/REST_API/',
  start: () => startFakeSugarCRM(),
  templateVars: { workspace: 'https://acme.sugarondemand.com', platform: 'base' },
  objects: [
    {
      name: 'Accounts',
      revealsDeletions: true,
      fields: { selected: 'name', other: 'description' },
      write: {
        create: { name: 'Analytical Engines Ltd', website: 'https://engines.example.com' },
        update: { description: 'Difference engines' },
        check: (stored) => stored.description,
        delete: true,
      },
      metadata: {
        ...metadata,
        name: { valueType: 'string', isRequired: true, isCustom: false },
        tier_c: { valueType: 'string', isCustom: true },
      },
    },
    {
      name: 'Contacts',
      revealsDeletions: true,
      fields: { selected: 'last_name', other: 'description' },
      write: {
        create: { first_name: 'Ada', last_name: 'Lovelace', email1: 'ada@example.com' },
        update: { title: 'Countess' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: { ...metadata, last_name: { valueType: 'string', isRequired: true } },
    },
    {
      name: 'Leads',
      revealsDeletions: true,
      fields: { selected: 'last_name', other: 'account_name' },
      write: {
        create: { first_name: 'Charles', last_name: 'Babbage', account_name: 'Engines' },
        update: { title: 'Inventor' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: { ...metadata, converted: { valueType: 'boolean', readOnly: true } },
    },
    {
      name: 'Opportunities',
      revealsDeletions: true,
      fields: { selected: 'name', other: 'next_step' },
      write: {
        create: { name: 'Engine order', date_closed: '2026-12-31', amount: '5000' },
        update: { next_step: 'Send quote' },
        check: (stored) => stored.next_step,
        delete: true,
      },
      metadata: { ...metadata, date_closed: { valueType: 'date', isRequired: true } },
    },
  ],
};
