import type { ConformanceSpec } from '../kit/conformance.js';
import { INTERCOM_CONTACT_ID, startFakeIntercom } from '../fakes/intercom.js';

/**
 * Intercom's REST API 2.14 (lists, and searches by whole days for windows) against its local fake
 * (test/connectors/fakes/intercom.ts), written from Intercom's reference; sources in
 * /work/notes/fakes/intercom.md.
 */
export const spec: ConformanceSpec = {
  provider: 'intercom',
  reference: 'https://developers.intercom.com/docs/references/rest-api/api.intercom.io',
  start: () => startFakeIntercom(),
  objects: [
    {
      name: 'contacts',
      revealsDeletions: false,
      write: {
        create: { role: 'user', email: 'ada@example.com', name: 'Ada Lovelace' },
        update: { name: 'Augusta Ada King' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', readOnly: false, isCustom: false },
        updated_at: { valueType: 'datetime', readOnly: true },
        role: {
          valueType: 'string',
          values: [
            { value: 'user', displayValue: 'user' },
            { value: 'lead', displayValue: 'lead' },
          ],
        },
        'custom_attributes.tier': {
          displayName: 'Tier',
          isCustom: true,
          values: [
            { value: 'gold', displayValue: 'gold' },
            { value: 'silver', displayValue: 'silver' },
          ],
        },
        'custom_attributes.seats': { valueType: 'int', isCustom: true },
      },
    },
    {
      name: 'conversations',
      revealsDeletions: false,
      write: {
        create: { from: { type: 'user', id: INTERCOM_CONTACT_ID }, body: 'Where is my parcel?' },
        update: { title: 'Lost parcel' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        'custom_attributes.escalated': { valueType: 'boolean', isCustom: true },
        'custom_attributes.renewal': { valueType: 'datetime', isCustom: true },
      },
    },
    {
      name: 'companies',
      revealsDeletions: false,
      write: {
        create: { company_id: 'acme-1', name: 'Acme' },
        update: { industry: 'Anvils' },
        check: (stored) => stored.industry,
        delete: true,
      },
      metadata: {
        company_id: { readOnly: true, isCustom: false },
        monthly_spend: { valueType: 'float' },
        'custom_attributes.region': {
          isCustom: true,
          values: [
            { value: 'EMEA', displayValue: 'EMEA' },
            { value: 'APAC', displayValue: 'APAC' },
          ],
        },
      },
    },
  ],
};
