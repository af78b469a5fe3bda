import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeMarketo } from '../fakes/marketo.js';

/**
 * Marketo's REST API (Lead Database: leads by filter, the activity log paged from
 * `activities/pagingtoken.json`, lead changes, deleted leads, lead field descriptions) against its
 * local fake (test/connectors/fakes/marketo.ts), written from Adobe's Marketo developer reference.
 * Errors answer HTTP 200 with `success: false` and a code. A deleted lead is revealed by its Delete
 * Lead activity (`activities/deletedleads.json`); activities are never deleted by users.
 */
export const spec: ConformanceSpec = {
  provider: 'marketo',
  reference: 'https://experienceleague.adobe.com/en/docs/marketo-developer/marketo/rest/lead-database/leads',
  start: () => startFakeMarketo(),
  templateVars: { workspace: '123-ABC-456' },
  objects: [
    {
      name: 'leads',
      revealsDeletions: true,
      // `fields=firstName` returns the id and that field only.
      fields: { selected: 'firstName', other: 'company' },
      write: {
        create: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
        update: { title: 'Countess' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        email: { readOnly: false, isCustom: false },
        updatedAt: { readOnly: true, valueType: 'datetime' },
        leadScore: { valueType: 'int' },
        accountTier: { isCustom: true, valueType: 'string' },
      },
    },
    {
      name: 'activities',
      revealsDeletions: false,
    },
  ],
};
