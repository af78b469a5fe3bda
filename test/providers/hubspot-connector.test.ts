import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { type Connector, type ProviderRecord, type ReadPageInput } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import type { RequestLogEntry } from '../../src/providers/http.js';
import {
  CapabilityNotSupportedError,
  ConnectorInputError,
  ProviderError,
} from '../../src/providers/errors.js';
import { startFakeHubSpot, type FakeHubSpot } from '../connectors/fakes/hubspot.js';

let hubspot: FakeHubSpot;

beforeAll(async () => {
  // These tests are not about HubSpot's five searches a second (the conformance suite meets it).
  hubspot = await startFakeHubSpot({ searchesPerSecond: false });
});
afterAll(() => hubspot.close());
afterEach(() => hubspot.reset());

function connector(
  options: { token?: string; log?: RequestLogEntry[]; refreshedToken?: string } = {},
): Connector {
  return connectorFor(
    {
      provider: 'hubspot',
      templateVars: {},
      async auth(opts) {
        return {
          type: 'oauth2',
          accessToken: opts?.forceRefresh
            ? (options.refreshedToken ?? hubspot.credential)
            : (options.token ?? hubspot.credential),
        };
      },
    },
    {
      baseUrl: hubspot.url,
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
      onRequest: (entry) => options.log?.push(entry),
    },
  );
}

/** Reads every page of a read; fails if the connector loops. */
async function readAll(
  source: Connector,
  input: Omit<ReadPageInput, 'pageToken'>,
  between?: (page: number) => void,
): Promise<{ records: ProviderRecord[]; pages: number }> {
  const records: ProviderRecord[] = [];
  let pageToken: string | undefined;
  for (let page = 1; page <= 1000; page++) {
    const result = await source.readPage({ ...input, pageToken });
    records.push(...result.records);
    if (result.done) return { records, pages: page };
    expect(result.nextPageToken).toBeDefined();
    pageToken = result.nextPageToken;
    between?.(page);
  }
  throw new Error('the read did not finish within 1000 pages');
}

const base = Date.parse('2026-01-01T00:00:00.000Z');

describe('HubSpot reads', () => {
  it('reads all records with the list endpoint when no window is given, fields as properties', async () => {
    hubspot.seedRecords(
      'contacts',
      Array.from({ length: 250 }, (_, i) => base + i * 1000),
    );
    const { records, pages } = await readAll(connector(), {
      objectName: 'contacts',
      pageSize: 100,
      fields: ['email'],
    });
    expect(pages).toBe(3);
    expect(records.map((r) => r.id)).toEqual(Array.from({ length: 250 }, (_, i) => String(i + 1)));
    expect(records[0].raw).toMatchObject({
      id: '1',
      properties: { email: 'c1@example.com' },
      archived: false,
    });
    expect(records[0].updatedAt).toBe(new Date(base).toISOString());
    const listCalls = hubspot.requests.filter((r) => r.method === 'GET');
    expect(listCalls[0].query).toMatchObject({ limit: '100', properties: 'email', archived: 'false' });
    expect(listCalls[1].query.after).toBe('100');
  });

  it('searches a window on the modification time, oldest first, inclusive since and exclusive until', async () => {
    hubspot.seedRecords(
      'deals',
      Array.from({ length: 30 }, (_, i) => base + i * 1000),
    );
    const { records } = await readAll(connector(), {
      objectName: 'deals',
      pageSize: 7,
      since: new Date(base + 5000),
      until: new Date(base + 20000),
    });
    expect(records.map((r) => r.id)).toEqual(Array.from({ length: 15 }, (_, i) => String(i + 6)));
    const search = hubspot.requests.find((r) => r.path.endsWith('/search'))!;
    expect(search.body).toMatchObject({
      filterGroups: [
        {
          filters: [
            { propertyName: 'hs_lastmodifieddate', operator: 'GTE', value: String(base + 5000) },
            { propertyName: 'hs_lastmodifieddate', operator: 'LT', value: String(base + 20000) },
          ],
        },
      ],
      sorts: [{ propertyName: 'hs_lastmodifieddate', direction: 'ASCENDING' }],
      limit: 7,
    });
  });

  it('uses lastmodifieddate for contacts, as HubSpot documents', async () => {
    hubspot.seedRecords('contacts', [base, base + 1]);
    const { records } = await readAll(connector(), {
      objectName: 'contacts',
      pageSize: 10,
      since: new Date(base),
    });
    expect(records).toHaveLength(2);
    const search = hubspot.requests.find((r) => r.path.endsWith('/search'))!;
    expect(JSON.stringify(search.body)).toContain('"propertyName":"lastmodifieddate"');
  });

  it('reads past the 10,000-result search cap by re-querying from the last modification time seen', async () => {
    // Groups of three records share a millisecond, so page boundaries fall inside ties.
    const count = 10_450;
    hubspot.seedRecords(
      'companies',
      Array.from({ length: count }, (_, i) => base + Math.floor(i / 3)),
    );
    const { records } = await readAll(connector(), {
      objectName: 'companies',
      pageSize: 200,
      since: new Date(base),
    });
    const ids = records.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(count);
    const offsets = hubspot.requests
      .filter((r) => r.path.endsWith('/search'))
      .map((r) => Number((r.body as { after?: string }).after ?? 0));
    expect(Math.max(...offsets)).toBeLessThan(10_000);
  });

  it('pages through runs of records sharing one millisecond without losing or repeating any', async () => {
    const times = [
      ...Array.from({ length: 25 }, () => base),
      ...Array.from({ length: 12 }, () => base + 1),
      base + 2,
    ];
    hubspot.seedRecords('deals', times);
    const { records } = await readAll(connector(), {
      objectName: 'deals',
      pageSize: 10,
      since: new Date(base),
    });
    expect(records.map((r) => r.id).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 38 }, (_, i) => String(i + 1)),
    );
  });

  it('reads more than 10,000 records sharing one millisecond, by id, without an offset', async () => {
    hubspot.seedRecords(
      'deals',
      Array.from({ length: 10_050 }, () => base),
    );
    const { records } = await readAll(connector(), {
      objectName: 'deals',
      pageSize: 200,
      since: new Date(base),
    });
    const ids = records.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(10_050);
    const searches = hubspot.requests.filter((r) => r.path.endsWith('/search'));
    expect(searches.every((r) => (r.body as { after?: string }).after === undefined)).toBe(true);
    // After the first page, the run of ties is read by id: that instant exactly, ids after the last.
    expect(searches[2].body).toMatchObject({
      filterGroups: [
        {
          filters: [
            { propertyName: 'hs_lastmodifieddate', operator: 'EQ', value: String(base) },
            { propertyName: 'hs_object_id', operator: 'GT' },
          ],
        },
      ],
      sorts: [{ propertyName: 'hs_object_id', direction: 'ASCENDING' }],
    });
  });

  it('loses no record when an earlier record is modified in the middle of a read', async () => {
    hubspot.seedRecords(
      'deals',
      Array.from({ length: 40 }, (_, i) => base + i * 10),
    );
    const until = new Date(base + 1_000_000);
    const { records } = await readAll(
      connector(),
      { objectName: 'deals', pageSize: 10, since: new Date(base), until },
      (page) => {
        // An edit moves record 3 (already read) to the end of the window.
        if (page === 1) hubspot.touch('deals', '3', base + 500_000);
      },
    );
    const ids = new Set(records.map((r) => r.id));
    for (let id = 1; id <= 40; id++) expect(ids.has(String(id))).toBe(true);
  });

  it('rejects a page token minted for another object', async () => {
    hubspot.seedRecords(
      'deals',
      Array.from({ length: 5 }, (_, i) => base + i),
    );
    const first = await connector().readPage({ objectName: 'deals', pageSize: 2, since: new Date(base) });
    await expect(
      connector().readPage({ objectName: 'contacts', pageSize: 2, pageToken: first.nextPageToken }),
    ).rejects.toBeInstanceOf(ConnectorInputError);
  });

  it('counts a window with the search total', async () => {
    hubspot.seedRecords(
      'deals',
      Array.from({ length: 30 }, (_, i) => base + i * 1000),
    );
    const source = connector();
    expect(await source.estimateCount({ objectName: 'deals' })).toBe(30);
    expect(
      await source.estimateCount({
        objectName: 'deals',
        since: new Date(base + 10_000),
        until: new Date(base + 15_000),
      }),
    ).toBe(5);
  });

  it('answers an unknown object with a 404 ProviderError', async () => {
    await expect(connector().readPage({ objectName: 'widgets', pageSize: 10 })).rejects.toMatchObject({
      status: 404,
      isNotFound: true,
      message: 'HubSpot has no object "widgets".',
    });
  });
});

describe('HubSpot writes', () => {
  it('creates, updates and deletes a record', async () => {
    const source = connector();
    const created = await source.write({
      objectName: 'contacts',
      type: 'create',
      record: { email: 'ada@example.com', firstname: 'Ada' },
    });
    expect(created.recordId).toBe('1');
    expect(created.data).toMatchObject({
      id: '1',
      properties: { email: 'ada@example.com', firstname: 'Ada' },
    });

    const updated = await source.write({
      objectName: 'contacts',
      type: 'update',
      record: { id: created.recordId, lastname: 'Lovelace' },
    });
    expect(updated).toMatchObject({ recordId: '1', data: { properties: { lastname: 'Lovelace' } } });
    const patch = hubspot.requests.find((r) => r.method === 'PATCH')!;
    expect(patch.path).toBe('/crm/v3/objects/contacts/1');
    expect(patch.body).toEqual({ properties: { lastname: 'Lovelace' } });

    expect(await source.write({ objectName: 'contacts', type: 'delete', recordId: '1' })).toEqual({
      recordId: '1',
    });
    expect(hubspot.records('contacts')[0].archived).toBe(true);
  });

  it('passes HubSpot’s validation message on, not retryable', async () => {
    const error = await connector()
      .write({ objectName: 'contacts', type: 'create', record: { email: 'not-an-email' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as ProviderError).providerMessage).toContain('INVALID_EMAIL');
  });

  it('answers a missing record with a 404', async () => {
    await expect(
      connector().write({ objectName: 'deals', type: 'update', recordId: '999', record: { dealname: 'x' } }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('needs a record id to update or delete', async () => {
    await expect(connector().write({ objectName: 'deals', type: 'delete' })).rejects.toBeInstanceOf(
      ConnectorInputError,
    );
    expect(hubspot.requests).toHaveLength(0);
  });

  it('does not retry a create after a 500, which may have been applied', async () => {
    hubspot.failNext(1, 500);
    await expect(
      connector().write({ objectName: 'deals', type: 'create', record: { dealname: 'x' } }),
    ).rejects.toMatchObject({ status: 500, retryable: true });
    expect(hubspot.requests).toHaveLength(1);
  });
});

describe('HubSpot metadata and custom fields', () => {
  it('describes an object from its properties', async () => {
    const metadata = await connector().listObjectMetadata('contacts');
    expect(metadata.name).toBe('contacts');
    expect(metadata.displayName).toBe('Contacts');
    expect(metadata.fields.email).toEqual({
      fieldName: 'email',
      displayName: 'Email',
      valueType: 'string',
      providerType: 'string',
      readOnly: false,
      isCustom: false,
      isRequired: false,
    });
    expect(metadata.fields.lastmodifieddate).toMatchObject({ valueType: 'datetime', readOnly: true });
    expect(metadata.fields.lifecyclestage).toMatchObject({
      valueType: 'singleSelect',
      providerType: 'enumeration',
      values: [
        { value: 'lead', displayValue: 'Lead' },
        { value: 'customer', displayValue: 'Customer' },
      ],
    });
    expect(metadata.fields.hs_email_optout.valueType).toBe('boolean');
  });

  it('answers an object HubSpot does not have with a 404', async () => {
    await expect(connector().listObjectMetadata('widgets')).rejects.toMatchObject({ status: 404 });
  });

  it('creates custom properties, then updates them when they exist (409)', async () => {
    const source = connector();
    const first = await source.upsertCustomFields('contacts', [
      {
        fieldName: 'tier',
        displayName: 'Tier',
        valueType: 'singleSelect',
        stringOptions: { values: ['gold', 'silver'] },
      },
      { fieldName: 'vip', displayName: 'VIP', valueType: 'boolean', required: true },
    ]);
    expect(first.fields.tier).toMatchObject({
      action: 'create',
      metadata: {
        fieldName: 'tier',
        valueType: 'singleSelect',
        isCustom: true,
        values: [{ value: 'gold' }, { value: 'silver' }],
      },
    });
    expect(first.fields.vip.metadata?.valueType).toBe('boolean');
    expect(first.fields.vip.warnings?.[0]).toMatch(/cannot be required/);
    const created = hubspot.properties('contacts').find((p) => p.name === 'tier')!;
    expect(created).toMatchObject({
      type: 'enumeration',
      fieldType: 'select',
      groupName: 'contactinformation',
    });

    const second = await source.upsertCustomFields('contacts', [
      {
        fieldName: 'tier',
        displayName: 'Customer tier',
        valueType: 'singleSelect',
        stringOptions: { values: ['gold', 'silver', 'bronze'] },
      },
    ]);
    expect(second.fields.tier).toMatchObject({
      action: 'update',
      metadata: { displayName: 'Customer tier' },
    });
    expect(hubspot.properties('contacts').find((p) => p.name === 'tier')!.options).toHaveLength(3);
  });

  it('refuses a property name HubSpot would refuse, before calling it', async () => {
    await expect(
      connector().upsertCustomFields('contacts', [
        { fieldName: 'Bad Name', displayName: 'x', valueType: 'string' },
      ]),
    ).rejects.toBeInstanceOf(ConnectorInputError);
    expect(hubspot.requests).toHaveLength(0);
  });

  it('subscribes without calling HubSpot: its webhooks belong to the app, configured in its settings', async () => {
    hubspot.requests.length = 0;
    const made = await connector().subscribe({
      objectName: 'contacts',
      events: ['create', 'update'],
      webhookUrl: 'http://127.0.0.1/x',
    });
    expect(made).toEqual({ subscriptionId: 'app:contacts' });
    await expect(
      connector().updateSubscription('app:contacts', {
        objectName: 'contacts',
        events: ['delete'],
        webhookUrl: 'http://127.0.0.1/x',
      }),
    ).resolves.toEqual({ subscriptionId: 'app:contacts' });
    await connector().deleteSubscription('app:contacts');
    expect(hubspot.requests).toHaveLength(0);
    await expect(
      connector().subscribe({ objectName: 'notes', events: ['create'], webhookUrl: 'http://127.0.0.1/x' }),
    ).rejects.toBeInstanceOf(CapabilityNotSupportedError);
  });
});

describe('HubSpot over the shared HTTP layer', () => {
  it('retries a 429 without Retry-After with backoff', async () => {
    hubspot.seedRecords('deals', [base]);
    hubspot.failNext(2, 429);
    const log: RequestLogEntry[] = [];
    const page = await connector({ log }).readPage({ objectName: 'deals', pageSize: 10 });
    expect(page.records).toHaveLength(1);
    expect(log.map((entry) => entry.status)).toEqual([429, 429, 200]);
    expect(log.map((entry) => entry.attempt)).toEqual([1, 2, 3]);
  });

  it('refreshes the token once after a 401 and retries', async () => {
    hubspot.seedRecords('deals', [base]);
    const log: RequestLogEntry[] = [];
    const page = await connector({
      token: 'revoked-token',
      refreshedToken: hubspot.credential,
      log,
    }).readPage({
      objectName: 'deals',
      pageSize: 10,
    });
    expect(page.records).toHaveLength(1);
    expect(log.map((entry) => entry.status)).toEqual([401, 200]);
    expect(hubspot.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer revoked-token',
      `Bearer ${hubspot.credential}`,
    ]);
  });

  it('reports credentials HubSpot keeps refusing as a non-retryable error', async () => {
    await expect(
      connector({ token: 'bad', refreshedToken: 'still-bad' }).readPage({
        objectName: 'deals',
        pageSize: 10,
      }),
    ).rejects.toMatchObject({ status: 401, retryable: false });
    expect(hubspot.requests).toHaveLength(2);
  });
});
