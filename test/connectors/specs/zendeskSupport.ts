import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeZendesk } from '../fakes/zendeskSupport.js';

/**
 * Zendesk Support (Ticketing API v2) against its local fake (test/connectors/fakes/zendeskSupport.ts),
 * written from Zendesk's reference; sources in /work/notes/fakes/zendeskSupport.md.
 */
export const spec: ConformanceSpec = {
  provider: 'zendeskSupport',
  reference: 'https://developer.zendesk.com/api-reference/ticketing/introduction/',
  start: () => startFakeZendesk(),
  templateVars: { workspace: 'acme' },
  objects: [
    {
      name: 'tickets',
      revealsDeletions: true,
      // Write-only: the first comment of a create, a new one on update.
      roundTrip: { notInRecords: ['comment'] },
      write: {
        create: { subject: 'Printer on fire', comment: { body: 'It is on fire.' }, priority: 'urgent' },
        update: { status: 'solved' },
        check: (stored) => stored.status,
        delete: true,
      },
      metadata: {
        subject: { valueType: 'string', readOnly: false, isCustom: false },
        status: { valueType: 'singleSelect', providerType: 'status' },
        updated_at: { valueType: 'datetime', readOnly: true },
        'custom_fields.360001': {
          displayName: 'Plan',
          valueType: 'singleSelect',
          isCustom: true,
          isRequired: false,
          values: [
            { value: 'plan_gold', displayValue: 'Gold' },
            { value: 'plan_silver', displayValue: 'Silver' },
          ],
        },
        'custom_fields.360002': { valueType: 'boolean', isCustom: true },
        'custom_fields.360003': { valueType: 'float', isRequired: true },
        'custom_fields.360004': {
          valueType: 'multiSelect',
          isCustom: true,
          values: [
            { value: 'product_printer', displayValue: 'Printer' },
            { value: 'product_scanner', displayValue: 'Scanner' },
          ],
        },
        'custom_fields.360005': { valueType: 'date', isCustom: true },
      },
    },
    {
      name: 'users',
      revealsDeletions: true,
      write: {
        create: { name: 'Ada Lovelace', email: 'ada@example.com' },
        update: { name: 'Augusta Ada King' },
        check: (stored) => stored.name,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', isRequired: true },
        'user_fields.plan_tier': { valueType: 'singleSelect', isCustom: true },
        'user_fields.renewal_date': { valueType: 'date', isCustom: true },
        'user_fields.newsletter': { valueType: 'boolean', isCustom: true },
      },
    },
    {
      name: 'organizations',
      revealsDeletions: false,
      write: {
        create: { name: 'Analytical Engines Ltd' },
        update: { details: 'Difference engines too' },
        check: (stored) => stored.details,
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', isRequired: true },
        'organization_fields.seats': { valueType: 'int', isCustom: true },
        'organization_fields.notes_long': { valueType: 'string', isCustom: true },
      },
    },
  ],
};
