import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeFreshdesk } from '../fakes/freshdesk.js';

/**
 * Freshdesk's API v2 (tickets, contacts and companies, Link-header pages) against its local fake
 * (test/connectors/fakes/freshdesk.ts), written from Freshdesk's reference; sources in
 * /work/notes/fakes/freshdesk.md.
 */
export const spec: ConformanceSpec = {
  provider: 'freshdesk',
  reference: 'https://developers.freshdesk.com/api/',
  start: () => startFakeFreshdesk(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'tickets',
      revealsDeletions: true,
      write: {
        create: { subject: 'Printer on fire', email: 'ada@example.com', priority: 1, status: 2 },
        update: { priority: 4, custom_fields: { cf_tier: 'Gold' } },
        check: (stored) => stored.priority,
        delete: true,
      },
      metadata: {
        status: {
          valueType: 'singleSelect',
          isRequired: true,
          values: [
            { value: '2', displayValue: 'Open' },
            { value: '3', displayValue: 'Pending' },
            { value: '4', displayValue: 'Resolved' },
            { value: '5', displayValue: 'Closed' },
            { value: '6', displayValue: 'Waiting on Customer' },
          ],
        },
        updated_at: { valueType: 'datetime', readOnly: true, isCustom: false },
        'custom_fields.cf_tier': {
          displayName: 'Tier',
          valueType: 'singleSelect',
          isCustom: true,
          isRequired: true,
          values: [
            { value: 'Gold', displayValue: 'Gold' },
            { value: 'Silver', displayValue: 'Silver' },
          ],
        },
        'custom_fields.cf_vip': { valueType: 'boolean', isCustom: true, isRequired: false },
        'custom_fields.cf_renewal': { valueType: 'date', isCustom: true },
        'custom_fields.cf_seats': { valueType: 'int', isCustom: true },
        priority: {
          valueType: 'singleSelect',
          values: [
            { value: '1', displayValue: 'Low' },
            { value: '2', displayValue: 'Medium' },
            { value: '3', displayValue: 'High' },
            { value: '4', displayValue: 'Urgent' },
          ],
        },
      },
    },
    {
      name: 'contacts',
      revealsDeletions: true,
      write: {
        create: { name: 'Ada Lovelace', email: 'ada.lovelace@example.com' },
        update: { job_title: 'Analyst' },
        check: (stored) => stored.job_title,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', isRequired: true, isCustom: false },
        'custom_fields.department': { displayName: 'Department', valueType: 'string', isCustom: true },
        'custom_fields.seats': { valueType: 'int', isCustom: true, isRequired: true },
        'custom_fields.newsletter': { valueType: 'boolean', isCustom: true },
      },
    },
    {
      name: 'companies',
      revealsDeletions: false,
      write: {
        create: { name: 'Dunder Mifflin', domains: ['dundermifflin.example'] },
        update: { industry: 'Paper' },
        check: (stored) => stored.industry,
        delete: true,
      },
      metadata: {
        name: { isRequired: true, isCustom: false },
        'custom_fields.region': {
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'EMEA', displayValue: 'EMEA' },
            { value: 'APAC', displayValue: 'APAC' },
            { value: 'AMER', displayValue: 'AMER' },
          ],
        },
      },
    },
  ],
};
