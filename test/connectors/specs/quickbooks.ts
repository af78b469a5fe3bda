import type { ConformanceSpec } from '../kit/conformance.js';
import { QUICKBOOKS_REALM, startFakeQuickbooks } from '../fakes/quickbooks.js';

/**
 * QuickBooks Online Accounting API v3: customers and invoices through the query endpoint
 * (`MetaData.LastUpdatedTime` to the second in the company's time zone, `STARTPOSITION`/`MAXRESULTS`
 * up to 1000, inactive customers left out), deletions through CDC (deleted invoices as
 * `status: Deleted`, inactive customers with `Active: false`, 30 days back at most), writes that need
 * the current `SyncToken`, against its local fake (test/connectors/fakes/quickbooks.ts), written from
 * Intuit's reference. The company (realmId) is connection metadata.
 */
export const spec: ConformanceSpec = {
  provider: 'quickbooks',
  reference:
    'https://developer.intuit.com/app/developer/qbo/docs/develop/explore-the-quickbooks-online-api/data-queries',
  start: () => startFakeQuickbooks(),
  templateVars: { realmId: QUICKBOOKS_REALM },
  objects: [
    {
      name: 'Customer',
      // Customers are made inactive, never deleted: CDC lists them with `Active: false`.
      revealsDeletions: true,
      write: {
        create: { DisplayName: 'Ada Lovelace', PrimaryEmailAddr: { Address: 'ada@example.com' } },
        update: { CompanyName: 'Analytical Engines' },
        check: (stored) => stored.CompanyName,
      },
    },
    {
      name: 'Invoice',
      // Deleted invoices come back from CDC as `status: Deleted`.
      revealsDeletions: true,
      write: {
        create: {
          CustomerRef: { value: '1' },
          Line: [
            {
              Amount: 250,
              DetailType: 'SalesItemLineDetail',
              SalesItemLineDetail: { ItemRef: { value: '1' } },
            },
          ],
        },
        update: { PrivateNote: 'Net 30 agreed' },
        check: (stored) => stored.PrivateNote,
        delete: true,
      },
    },
  ],
};
