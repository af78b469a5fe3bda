import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakePipeliner } from '../fakes/pipeliner.js';

const space = 'fake-space-1';

/**
 * Pipeliner CRM's REST API v100 against its local fake (test/connectors/fakes/pipeliner.ts),
 * written from https://developers.pipelinersales.com/api-docs/: accounts, contacts and
 * opportunities under `/api/v100/rest/spaces/<space id>/entities/`, `filter[modified][gt]`,
 * `order-by`, `first`/`after` cursors, `load-only`, soft deletions listed with `include-deleted`.
 * The space id is the connection's `workspace`, as the region is its `region`.
 */
export const spec: ConformanceSpec = {
  provider: 'pipeliner',
  reference: 'https://developers.pipelinersales.com/api-docs/overview/about-the-api',
  templateVars: { region: 'eu-central', workspace: space },
  start: () => startFakePipeliner(space),
  objects: [
    {
      name: 'Accounts',
      revealsDeletions: true,
      fields: { selected: 'name', other: 'city' },
      write: {
        create: { name: 'Analytical Engines Ltd', email1: 'engines@example.com' },
        update: { description: 'Difference engines' },
        check: (stored) => stored.description,
        delete: true,
      },
      metadata: {
        name: { displayName: 'Name', valueType: 'string', isRequired: true, isCustom: false },
        modified: { readOnly: true },
        cf_segment: {
          displayName: 'Segment',
          valueType: 'singleSelect',
          isCustom: true,
          // A dropdown's value is its data-set option's id.
          values: [
            { value: 'a1f0c6d2-0001-4000-8000-000000000001', displayValue: 'SMB' },
            { value: 'a1f0c6d2-0001-4000-8000-000000000002', displayValue: 'Enterprise' },
          ],
        },
      },
    },
    {
      name: 'Contacts',
      revealsDeletions: true,
      fields: { selected: 'last_name', other: 'position' },
      write: {
        create: { first_name: 'Ada', last_name: 'Lovelace', email1: 'ada@example.com' },
        update: { position: 'Countess' },
        check: (stored) => stored.position,
        delete: true,
      },
      metadata: {
        last_name: { isRequired: true, isCustom: false },
        cf_hobby: { valueType: 'string', isCustom: true },
      },
    },
    {
      name: 'Opportunities',
      revealsDeletions: true,
      write: {
        create: { name: 'Renewal', closing_date: '2027-01-31' },
        update: { name: 'Renewal 2027' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: { name: { isRequired: true }, cf_source: { isCustom: true } },
    },
  ],
};
