import { describe, expect, it } from '@jest/globals';
import { hasBackfillPeriod, readPlan } from '../../src/domain/installations/read-plan.js';
import type { IntegrationContent } from '../../src/schemas/integration-content.js';

const manifest: IntegrationContent = {
  name: 'crm',
  provider: 'sandboxApiKey',
  read: {
    objects: [
      {
        objectName: 'contacts',
        destination: 'hooks',
        schedule: '0 * * * *',
        backfill: { defaultPeriod: { days: 30 } },
      },
      { objectName: 'companies', destination: 'hooks', schedule: '0 0 * * *' },
      { objectName: 'deals', destination: 'hooks', schedule: '*/30 * * * *', enabled: 'always' },
      {
        objectName: 'notes',
        destination: 'hooks',
        schedule: '0 0 * * 0',
        enabled: 'always',
        backfill: { defaultPeriod: { fullHistory: true } },
      },
    ],
  },
};

const selected = (objectName: string, extra: Record<string, unknown> = {}) => ({
  objectName,
  schedule: '15 * * * *',
  destination: 'hooks',
  selectedFields: {},
  ...extra,
});

describe('the read plan of an installation', () => {
  it('reads the selected objects on their own schedule, then the manifest’s always-enabled ones', () => {
    const plan = readPlan(
      { provider: 'sandboxApiKey', read: { objects: { contacts: selected('contacts') } } },
      manifest,
    );
    expect(plan).toEqual([
      { objectName: 'contacts', schedule: '15 * * * *', backfill: true },
      { objectName: 'deals', schedule: '*/30 * * * *', backfill: false },
      { objectName: 'notes', schedule: '0 0 * * 0', backfill: true },
    ]);
  });

  it('skips disabled objects unless the manifest enables them always, and lets the config’s backfill win', () => {
    const plan = readPlan(
      {
        provider: 'sandboxApiKey',
        read: {
          objects: {
            contacts: selected('contacts', { disabled: true }),
            companies: selected('companies', { backfill: { defaultPeriod: { days: 7 } } }),
            deals: selected('deals', { disabled: true, backfill: { defaultPeriod: { days: 0 } } }),
          },
        },
      },
      manifest,
    );
    expect(plan.map((read) => [read.objectName, read.schedule, read.backfill])).toEqual([
      ['companies', '15 * * * *', true],
      ['deals', '15 * * * *', false],
      ['notes', '0 0 * * 0', true],
    ]);
  });

  it('treats days: 0 as no backfill and full history as one', () => {
    expect(hasBackfillPeriod(undefined)).toBe(false);
    expect(hasBackfillPeriod({ defaultPeriod: { days: 0 } })).toBe(false);
    expect(hasBackfillPeriod({ defaultPeriod: { days: 1 } })).toBe(true);
    expect(hasBackfillPeriod({ defaultPeriod: { fullHistory: true } })).toBe(true);
    expect(hasBackfillPeriod({ defaultPeriod: { fullHistory: false } })).toBe(false);
  });
});
