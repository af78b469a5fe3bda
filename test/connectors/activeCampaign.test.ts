import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { startFakeActiveCampaign } from './fakes/activeCampaign.js';
import type { ConformanceFake } from './kit/conformance.js';
import { readAllPages } from './kit/read-all.js';

/**
 * What ActiveCampaign's declaration and hook do that the conformance suite does not see: the
 * date-only window filters asked a day wide on each side (the window kept at the second in memory),
 * and custom values read per record only when the read wants them (each call is a fifth of the
 * account's second).
 */

let fake: ConformanceFake;
let connector: Connector;

beforeAll(async () => {
  fake = await startFakeActiveCampaign();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ activeCampaign: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor(
    {
      provider: 'activeCampaign',
      templateVars: {},
      auth: async () => ({ type: 'apiKey', apiKey: fake.credential }),
    },
    { retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } },
  );
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

const minute = 60_000;
const valueCalls = (from: number) =>
  fake.requests.slice(from).filter((request) => request.path.endsWith('/fieldValues')).length;

describe('ActiveCampaign', () => {
  it('asks the date filters a day wide on each side and keeps the window at the second', async () => {
    const start = Date.UTC(2026, 9, 10, 12);
    const [inside, after] = fake.seed('contacts', [start + minute, start + 3 * minute]);
    const before = fake.requests.length;
    const read = await readAllPages(connector, {
      objectName: 'contacts',
      fields: ['email'],
      since: new Date(start),
      until: new Date(start + 2 * minute),
    });
    const ids = read.map((record) => record.id);
    expect(ids).toContain(inside);
    expect(ids).not.toContain(after);
    const [list] = fake.requests.slice(before);
    expect(list.query['filters[updated_after]']).toBe('2026-10-09');
    expect(list.query['filters[updated_before]']).toBe('2026-10-11');
  });

  it('reads custom values per record only when the read wants them, under the names the metadata lists', async () => {
    const start = Date.UTC(2026, 9, 20);
    const ids = fake.seed('contacts', [start, start + minute]);
    const window = { since: new Date(start), until: new Date(start + 2 * minute) };

    let before = fake.requests.length;
    const plain = await readAllPages(connector, { objectName: 'contacts', fields: ['email'], ...window });
    expect(plain.map((record) => record.id).sort()).toEqual([...ids].sort());
    expect(valueCalls(before)).toBe(0);

    before = fake.requests.length;
    const custom = await readAllPages(connector, {
      objectName: 'contacts',
      fields: ['fieldValues.1'],
      ...window,
    });
    expect(valueCalls(before)).toBe(ids.length);
    for (const record of custom) expect(record.values?.['fieldValues.1']).toBe('Software');

    const metadata = await connector.listObjectMetadata('contacts');
    expect(metadata.fields['fieldValues.1']).toMatchObject({ displayName: 'Industry', isCustom: true });
  });
});
