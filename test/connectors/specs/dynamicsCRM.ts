import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeDynamics } from '../fakes/dynamicsCRM.js';

/** Dynamics 365 (Dataverse Web API v9.2) against its local fake (test/connectors/fakes/dynamicsCRM.ts). */
export const spec: ConformanceSpec = {
  provider: 'dynamicsCRM',
  reference: 'https://learn.microsoft.com/power-apps/developer/data-platform/webapi/overview',
  start: () => startFakeDynamics(),
  templateVars: { workspace: 'acme', region: 'crm' },
  objects: [
    {
      name: 'contacts',
      revealsDeletions: true,
      fields: { selected: 'lastname', other: 'createdon' },
      search: { field: 'emailaddress1', set: setStored('contacts', 'emailaddress1') },
      write: {
        create: { lastname: 'Lovelace', firstname: 'Ada' },
        update: { firstname: 'Augusta' },
        check: (stored) => stored.firstname,
        delete: true,
      },
      metadata: {
        lastname: { valueType: 'string', readOnly: false, isCustom: false },
        modifiedon: { valueType: 'datetime', readOnly: true },
        new_tier: {
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: '100000000', displayValue: 'Gold' },
            { value: '100000001', displayValue: 'Silver' },
          ],
        },
        fullname: { valueType: 'string', readOnly: true },
        // A lookup is read as _<name>_value: the metadata names the field records carry. That
        // property is computed and read-only; a write goes through the navigation property
        // (@odata.bind), which Ferry does not write (learn.microsoft.com web-api-properties).
        _parentcustomerid_value: { isCustom: false, readOnly: true },
      },
    },
    {
      name: 'accounts',
      revealsDeletions: true,
      fields: { selected: 'name' },
      search: { field: 'name', set: setStored('accounts', 'name') },
    },
    {
      name: 'opportunities',
      revealsDeletions: true,
      search: { field: 'name', set: setStored('opportunities', 'name') },
      write: {
        create: { name: 'Renewal' },
        update: { name: 'Renewal 2027' },
        check: (stored) => stored.name,
      },
      metadata: { estimatedvalue: { valueType: 'float' } },
    },
  ],
};
