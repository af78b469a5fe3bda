import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { AuthMaterial } from '../../src/providers/auth-material.js';
import type { Connector } from '../../src/providers/connector.js';
import { connectorDeclaration } from '../../src/providers/catalog/index.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { statusInBody } from '../../src/providers/declarative/connector.js';
import { ConnectorInputError, ProviderError } from '../../src/providers/errors.js';
import type { ConformanceFake } from './kit/conformance.js';
import { LINEAR_TEAM_ID, startFakeLinear } from './fakes/linear.js';
import { MONDAY_BOARD_ID, startFakeMonday, type FakeMonday } from './fakes/monday.js';
import { NOTION_DATABASE_ID, NOTION_VERSION, startFakeNotion } from './fakes/notion.js';

/**
 * What monday.com, Linear and Notion do that the conformance suite does not cover: monday's
 * exhausted complexity budget inside a 200 answer, its later pages through `next_items_page`, its
 * cells; Linear's field names kept out of the query text unchecked, its relations; Notion's version
 * header, its minute-rounded edit times, its property values written from plain values, trashed
 * pages asked for apart, archived pages, and its validation errors.
 */

const fakes: Record<string, ConformanceFake> = {};
const fastRetry = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2_000 };

beforeAll(async () => {
  fakes.monday = await startFakeMonday();
  fakes.linear = await startFakeLinear();
  fakes.notion = await startFakeNotion();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify(
    Object.fromEntries(Object.entries(fakes).map(([provider, fake]) => [provider, { baseURL: fake.url }])),
  );
  resetConfig();
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  for (const fake of Object.values(fakes)) await fake.stop();
});

function connector(provider: string): Connector {
  const fake = fakes[provider];
  const material = (): AuthMaterial =>
    provider === 'monday'
      ? { type: 'apiKey', apiKey: fake.credential }
      : { type: 'oauth2', accessToken: fake.credential };
  return connectorFor({ provider, templateVars: {}, auth: async () => material() }, { retry: fastRetry });
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('monday.com', () => {
  const monday = () => fakes.monday as FakeMonday;

  it('sends the token as the whole Authorization header, with an API-Version', async () => {
    monday().seed(MONDAY_BOARD_ID, [Date.UTC(2025, 0, 1)]);
    const before = monday().requests.length;
    await connector('monday').readPage({ objectName: MONDAY_BOARD_ID, pageSize: 5 });
    const request = monday().requests[before];
    expect(request.path).toBe('/v2');
    expect(request.headers.authorization).toBe(monday().credential);
    expect(request.headers['api-version']).toBe('2025-04');
  });

  it('retries an exhausted complexity budget answered inside a 200, as a 429, and fails retryable when it lasts', async () => {
    monday().throttleNext(1);
    const before = monday().requests.length;
    const page = await connector('monday').readPage({ objectName: MONDAY_BOARD_ID, pageSize: 5 });
    expect(page.records.length).toBeGreaterThan(0);
    expect(monday().requests.length - before).toBe(2);

    monday().throttleNext(3);
    const error = await failure(connector('monday').readPage({ objectName: MONDAY_BOARD_ID, pageSize: 5 }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryable: true });
  });

  it('asks for later pages with next_items_page and its cursor, never query_params again', async () => {
    monday().seed(
      MONDAY_BOARD_ID,
      [1, 2, 3, 4].map((i) => Date.UTC(2025, 1, i)),
    );
    const before = monday().requests.length;
    const first = await connector('monday').readPage({
      objectName: MONDAY_BOARD_ID,
      pageSize: 2,
      since: new Date(Date.UTC(2025, 1, 1)),
    });
    await connector('monday').readPage({
      objectName: MONDAY_BOARD_ID,
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    const [one, two] = monday()
      .requests.slice(before)
      .map((request) => request.body as { query: string; variables: Record<string, unknown> });
    expect(one.query).toContain('items_page(limit: $limit, query_params: $query)');
    expect(one.variables.query).toEqual({
      rules: [
        {
          column_id: '__last_updated__',
          compare_attribute: 'UPDATED_AT',
          operator: 'greater_than_or_equals',
          compare_value: ['EXACT', '2025-01-31'],
        },
      ],
      operator: 'and',
    });
    expect(two.query).toContain('next_items_page(cursor: $cursor, limit: $limit)');
    expect(two.variables).toEqual({ cursor: expect.any(String), limit: 2 });
  });

  it('sets each cell on the record under its column id, and writes cells as one JSON string', async () => {
    const created = await connector('monday').write({
      objectName: MONDAY_BOARD_ID,
      type: 'create',
      record: { name: 'Venue', status: { label: 'Done' }, numbers: '1200' },
    });
    const sent = monday().requests.at(-1)!.body as { variables: Record<string, unknown> };
    expect(sent.variables).toEqual({
      board: MONDAY_BOARD_ID,
      name: 'Venue',
      columns: JSON.stringify({ status: { label: 'Done' }, numbers: '1200' }),
    });
    const read: Record<string, unknown>[] = [];
    let pageToken: string | undefined;
    do {
      const page = await connector('monday').readPage({
        objectName: MONDAY_BOARD_ID,
        pageSize: 500,
        pageToken,
      });
      read.push(...page.records.map((record) => record.values ?? record.raw));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(read.find((raw) => raw.id === created.recordId)).toMatchObject({
      name: 'Venue',
      status: 'Done',
      numbers: '1200',
    });
  });

  it('refuses an item without a name before calling monday, and reports a cell monday refuses', async () => {
    const before = monday().requests.length;
    const unnamed = await failure(
      connector('monday').write({ objectName: MONDAY_BOARD_ID, type: 'create', record: { text: 'x' } }),
    );
    expect(unnamed).toBeInstanceOf(ConnectorInputError);
    expect(monday().requests.length).toBe(before);

    const refused = await failure(
      connector('monday').write({
        objectName: MONDAY_BOARD_ID,
        type: 'create',
        record: { name: 'Bad', status: { label: 'Nope' } },
      }),
    );
    expect(refused).toBeInstanceOf(ProviderError);
    expect(refused).toMatchObject({ status: 400, retryable: false });
    expect((refused as ProviderError).message).toMatch(/status label doesn't exist/);
  });
});

describe('Linear', () => {
  it('posts to the GraphQL endpoint itself with a Bearer token', async () => {
    fakes.linear.seed('issues', [Date.UTC(2025, 0, 1)]);
    const before = fakes.linear.requests.length;
    await connector('linear').readPage({ objectName: 'issues', pageSize: 5 });
    const request = fakes.linear.requests[before];
    expect(request.path).toBe('/graphql');
    expect(request.headers.authorization).toBe(`Bearer ${fakes.linear.credential}`);
  });

  it('reads a relation as {id name} and refuses a field name that is not GraphQL before sending it', async () => {
    const page = await connector('linear').readPage({ objectName: 'issues', pageSize: 5, fields: ['team'] });
    expect(page.records[0].raw.team).toEqual({ id: LINEAR_TEAM_ID, name: 'Engineering' });
    const before = fakes.linear.requests.length;
    const error = await failure(
      connector('linear').readPage({ objectName: 'issues', pageSize: 5, fields: ['title } viewer {'] }),
    );
    expect(error).toBeInstanceOf(ConnectorInputError);
    expect(fakes.linear.requests.length).toBe(before);
  });

  it('reads the status of a failure inside a 200 from its error type', () => {
    const rules = connectorDeclaration('linear')!.errorsInBody!;
    const typed = (type: string) => ({ data: null, errors: [{ message: 'x', extensions: { type } }] });
    expect(statusInBody(rules, typed('ratelimited'))).toBe(429);
    expect(statusInBody(rules, typed('authentication error'))).toBe(401);
    expect(statusInBody(rules, typed('invalid input'))).toBe(400);
    expect(statusInBody(rules, { data: { issues: { nodes: [] } } })).toBeUndefined();
  });

  it('reports an input Linear refuses as a 400 naming it, not retried', async () => {
    const before = fakes.linear.requests.length;
    const error = await failure(
      connector('linear').write({ objectName: 'issues', type: 'create', record: { title: 'No team' } }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as ProviderError).message).toMatch(
      /Field "teamId" of required type "String!" was not provided/,
    );
    expect(fakes.linear.requests.length - before).toBe(1);
  });
});

describe('Notion', () => {
  it('sends the Notion-Version header with every request', async () => {
    fakes.notion.seed(NOTION_DATABASE_ID, [Date.UTC(2025, 0, 1)]);
    const before = fakes.notion.requests.length;
    await connector('notion').readPage({ objectName: NOTION_DATABASE_ID, pageSize: 5 });
    await connector('notion').listObjectMetadata(NOTION_DATABASE_ID);
    for (const request of fakes.notion.requests.slice(before))
      expect(request.headers['notion-version']).toBe(NOTION_VERSION);
  });

  it('starts a window at its minute, since Notion keeps edit times to the minute', async () => {
    const [id] = fakes.notion.seed(NOTION_DATABASE_ID, [Date.UTC(2025, 3, 1, 12, 0, 40)]);
    const page = await connector('notion').readPage({
      objectName: NOTION_DATABASE_ID,
      pageSize: 10,
      since: new Date(Date.UTC(2025, 3, 1, 12, 0, 20)),
    });
    expect(page.records.map((record) => record.id)).toContain(id);
    const sent = fakes.notion.requests.at(-1)!.body as { filter: { and: unknown[] } };
    expect(sent.filter.and).toEqual([
      { timestamp: 'last_edited_time', last_edited_time: { on_or_after: '2025-04-01T12:00:00.000Z' } },
    ]);
  });

  it('writes plain values in the shape each property’s type takes, and property values as they are', async () => {
    const [id] = fakes.notion.seed(NOTION_DATABASE_ID, [Date.UTC(2025, 4, 2)]);
    await connector('notion').write({
      objectName: NOTION_DATABASE_ID,
      type: 'update',
      recordId: id,
      record: {
        Name: 'Renamed',
        Status: 'Done',
        Tags: ['a', 'b'],
        Estimate: 3,
        Done: true,
        Notes: { rich_text: [{ text: { content: 'as given' } }] },
      },
    });
    const sent = fakes.notion.requests.at(-1)!;
    expect([sent.method, sent.path]).toEqual(['PATCH', `/v1/pages/${id}`]);
    expect((sent.body as { properties: unknown }).properties).toEqual({
      Name: { title: [{ text: { content: 'Renamed' } }] },
      Status: { status: { name: 'Done' } },
      Tags: { multi_select: [{ name: 'a' }, { name: 'b' }] },
      Estimate: { number: 3 },
      Done: { checkbox: true },
      Notes: { rich_text: [{ text: { content: 'as given' } }] },
    });
  });

  it('asks for trashed pages apart, with in_trash, and takes only pages flagged in the trash as deletions', async () => {
    const since = new Date(Date.UTC(2025, 5, 1, 12, 0, 20));
    const [live] = fakes.notion.seed(NOTION_DATABASE_ID, [Date.UTC(2025, 5, 1, 12, 30)]);
    const records = [];
    let pageToken: string | undefined;
    do {
      const page = await connector('notion').readPage({
        objectName: NOTION_DATABASE_ID,
        since,
        includeDeleted: true,
        ...(pageToken && { pageToken }),
      });
      records.push(...page.records);
      pageToken = page.nextPageToken;
    } while (pageToken);
    const queries = fakes.notion.requests.slice(-2).map((request) => request.body as Record<string, unknown>);
    expect(queries.map((query) => query.in_trash)).toEqual([undefined, true]);
    expect(records.filter((record) => record.id === live).map((record) => record.deleted)).toEqual([
      undefined,
    ]);
  });

  it('archives on delete: the page is left out of reads and read by id as deleted', async () => {
    const [id] = fakes.notion.seed(NOTION_DATABASE_ID, [Date.UTC(2025, 4, 1)]);
    await connector('notion').write({ objectName: NOTION_DATABASE_ID, type: 'delete', recordId: id });
    const sent = fakes.notion.requests.at(-1)!;
    expect([sent.method, sent.path, sent.body]).toEqual(['PATCH', `/v1/pages/${id}`, { archived: true }]);
    const read = await connector('notion').readRecord(NOTION_DATABASE_ID, id);
    expect(read).toMatchObject({ id, deleted: true });
  });

  it('reports a property the database lacks as a 400 with Notion’s message, and an unknown database as 404', async () => {
    const error = await failure(
      connector('notion').write({
        objectName: NOTION_DATABASE_ID,
        type: 'create',
        record: { Nope: { rich_text: [] } },
      }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as ProviderError).message).toMatch(/Nope is not a property that exists/);

    const missing = await failure(
      connector('notion').readPage({ objectName: '00000000-0000-0000-0000-000000000000', pageSize: 5 }),
    );
    expect(missing).toMatchObject({ status: 404 });
  });
});
