import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeZoho } from '../fakes/zoho.js';

/** Zoho CRM (REST API v6) against its local fake (test/connectors/fakes/zoho.ts). */
export const spec: ConformanceSpec = {
  provider: 'zoho',
  reference: 'https://www.zoho.com/crm/developer/docs/api/v6/',
  start: () => startFakeZoho(),
  templateVars: { zoho_api_domain: 'www.zohoapis.eu', zoho_token_domain: 'accounts.zoho.eu' },
  objects: [
    {
      name: 'Leads',
      revealsDeletions: true,
      fields: { selected: 'Last_Name', other: 'Company' },
      search: { field: 'Email', set: setStored('Leads', 'Email') },
      write: {
        create: { Last_Name: 'Lovelace', Company: 'Analytical Engines' },
        update: { Company: 'Difference Engines' },
        check: (stored) => stored.Company,
        delete: true,
      },
      metadata: {
        Last_Name: { valueType: 'string', readOnly: false, isCustom: false, isRequired: true },
        Modified_Time: { valueType: 'datetime', readOnly: true },
        Tier: {
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'Gold', displayValue: 'Gold' },
            { value: 'Silver', displayValue: 'Silver' },
          ],
        },
        Owner: { valueType: 'other', providerType: 'ownerlookup' },
      },
    },
    {
      name: 'Contacts',
      revealsDeletions: true,
      fields: { selected: 'Last_Name', other: 'Owner' },
      search: { field: 'Email', set: setStored('Contacts', 'Email') },
      write: {
        create: { Last_Name: 'Hopper', First_Name: 'Grace' },
        update: { First_Name: 'Amazing Grace' },
        check: (stored) => stored.First_Name,
        delete: true,
      },
    },
    {
      name: 'Deals',
      revealsDeletions: true,
      search: { field: 'Deal_Name', set: setStored('Deals', 'Deal_Name') },
      write: {
        create: { Deal_Name: 'Renewal', Stage: 'Qualification' },
        update: { Deal_Name: 'Renewal 2027' },
        check: (stored) => stored.Deal_Name,
      },
      metadata: { Amount: { valueType: 'float' }, Closing_Date: { valueType: 'date' } },
    },
  ],
};
