import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeXero } from '../fakes/xero.js';

const tenantId = '7f3c1a52-9d4e-4b8a-b0c6-2e5f8a9d1c34';

/**
 * Xero's Accounting API (Contacts, Invoices) against its local fake (test/connectors/fakes/xero.ts):
 * the `If-Modified-Since` header, `page`/`pageSize` (at most 1000) with `order`, millisecond
 * `UpdatedDateUTC` in `/Date(...)/` form, the organisation in `xero-tenant-id` (the connection's
 * `tenantId`). Contacts are archived, never deleted: listed archived with `includeArchived=true`.
 * A deleted invoice stays listed with `Status: "DELETED"`. Field metadata is not in this spec (the
 * Accounting API has no endpoint describing fields).
 */
export const spec: ConformanceSpec = {
  provider: 'xero',
  reference: 'https://developer.xero.com/documentation/api/accounting/overview',
  start: () => startFakeXero(tenantId),
  templateVars: { tenantId },
  objects: [
    {
      name: 'Contacts',
      revealsDeletions: true,
      fields: { selected: 'Name' },
      write: {
        create: { Name: 'Ada Lovelace', FirstName: 'Ada', EmailAddress: 'ada@example.com' },
        update: { LastName: 'Lovelace' },
        check: (stored) => stored.LastName,
        delete: true,
      },
    },
    {
      name: 'Invoices',
      revealsDeletions: true,
      fields: { selected: 'InvoiceNumber' },
      write: {
        create: { Type: 'ACCREC', Contact: { Name: 'Charles Babbage' }, Reference: 'Engine parts' },
        update: { Reference: 'Difference engine parts' },
        check: (stored) => stored.Reference,
        delete: true,
      },
    },
  ],
};
