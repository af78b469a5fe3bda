import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeSalesforce } from '../fakes/salesforce.js';

/** Salesforce (REST API v62.0, SOQL) against its local fake (test/connectors/fakes/salesforce.ts). */
export const spec: ConformanceSpec = {
  provider: 'salesforce',
  reference: 'https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/',
  start: () => startFakeSalesforce(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'Contact',
      revealsDeletions: true,
      fields: { selected: 'LastName', other: 'CreatedDate' },
      search: { field: 'Email', set: setStored('Contact', 'Email') },
      write: {
        create: { LastName: 'Lovelace', FirstName: 'Ada' },
        update: { FirstName: 'Augusta' },
        check: (stored) => stored.FirstName,
        delete: true,
      },
      metadata: {
        LastName: { valueType: 'string', readOnly: false, isCustom: false, isRequired: true },
        FirstName: { valueType: 'string', isRequired: false },
        SystemModstamp: { valueType: 'datetime', readOnly: true, isRequired: false },
        AccountId: { valueType: 'string', providerType: 'reference' },
      },
    },
    {
      name: 'Account',
      revealsDeletions: true,
      fields: { selected: 'Name', other: 'Industry' },
      search: { field: 'Name', set: setStored('Account', 'Name') },
      metadata: {
        Industry: {
          valueType: 'singleSelect',
          values: [
            { value: 'Banking', displayValue: 'Banking' },
            { value: 'Energy', displayValue: 'Energy' },
          ],
        },
        // Retail and Bronze are inactive picklist values: described, but not allowed values.
        Tier__c: {
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'Gold', displayValue: 'Gold' },
            { value: 'Silver', displayValue: 'Silver' },
          ],
        },
        AnnualRevenue: { valueType: 'float' },
        // A formula field: neither createable nor updateable.
        Score__c: { valueType: 'float', readOnly: true, isCustom: true },
      },
    },
    {
      name: 'Lead',
      revealsDeletions: true,
      search: { field: 'Email', set: setStored('Lead', 'Email') },
      write: {
        create: { LastName: 'Hopper', Company: 'Navy' },
        update: { Company: 'Remington Rand' },
        check: (stored) => stored.Company,
        delete: true,
      },
      metadata: {
        Status: { valueType: 'singleSelect', isRequired: false },
        // Createable but not updateable: writable, on create only.
        IsConverted: { valueType: 'boolean', readOnly: false, isRequired: false },
      },
    },
    {
      name: 'Opportunity',
      revealsDeletions: true,
      search: { field: 'Name', set: setStored('Opportunity', 'Name') },
      write: {
        create: { Name: 'Renewal', StageName: 'Prospecting', CloseDate: '2026-12-31' },
        update: { Name: 'Renewal 2027' },
        check: (stored) => stored.Name,
      },
      metadata: { CloseDate: { valueType: 'date', isRequired: true }, Amount: { valueType: 'float' } },
    },
  ],
};
