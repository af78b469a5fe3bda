import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startFakeHubSpot } from '../fakes/hubspot.js';

/** HubSpot CRM v3 against its local fake (test/connectors/fakes/hubspot.ts). */
export const spec: ConformanceSpec = {
  provider: 'hubspot',
  reference: 'https://developers.hubspot.com/docs/api/crm',
  start: () => startFakeHubSpot(),
  objects: [
    {
      name: 'contacts',
      revealsDeletions: true,
      fields: { selected: 'email', other: 'firstname' },
      search: {
        field: 'email',
        set: setStored('contacts', 'email', 'properties'),
      },
      write: {
        create: { email: 'ada@example.com', firstname: 'Ada' },
        update: { firstname: 'Augusta' },
        check: (stored) => (stored.properties as Record<string, unknown>).firstname,
        delete: true,
      },
      metadata: {
        email: { valueType: 'string', readOnly: false, isCustom: false, isRequired: false },
        lifecyclestage: {
          valueType: 'singleSelect',
          values: [
            { value: 'lead', displayValue: 'Lead' },
            { value: 'customer', displayValue: 'Customer' },
          ],
        },
        hs_object_id: { valueType: 'float', readOnly: true },
        hs_email_optout: { valueType: 'boolean' },
        createdate: { valueType: 'datetime', readOnly: true },
        // Calculated by HubSpot (modificationMetadata.readOnlyValue).
        hs_email_domain: { valueType: 'string', readOnly: true },
        customer_tier: { valueType: 'singleSelect', isCustom: true },
      },
    },
    {
      name: 'companies',
      revealsDeletions: true,
      fields: { selected: 'hs_object_id' },
      search: {
        field: 'name',
        set: setStored('companies', 'name', 'properties'),
      },
    },
    {
      name: 'deals',
      revealsDeletions: true,
      search: {
        field: 'dealname',
        set: setStored('deals', 'dealname', 'properties'),
      },
      write: {
        create: { dealname: 'Renewal' },
        update: { dealname: 'Renewal 2027' },
        check: (stored) => (stored.properties as Record<string, unknown>).dealname,
      },
      metadata: {
        amount: { valueType: 'float', isCustom: false },
        dealstage: {
          valueType: 'singleSelect',
          values: [
            { value: 'appointmentscheduled', displayValue: 'Appointment Scheduled' },
            { value: 'closedwon', displayValue: 'Closed Won' },
          ],
        },
        hs_lastmodifieddate: { valueType: 'datetime', readOnly: true },
      },
    },
  ],
};
