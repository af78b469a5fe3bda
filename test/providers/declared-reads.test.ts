import { beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { checkDeclaration } from '../../src/providers/catalog/connector-declarations.js';
import type { ProviderRecord, ReadPageInput } from '../../src/providers/connector.js';
import { DeclaredConnector } from '../../src/providers/declarative/connector.js';
import { deletionsPageToken } from '../../src/providers/declarative/read.js';
import { describeError, ProviderError } from '../../src/providers/errors.js';
import { useRecordingProvider, type RecordedRequest } from './support/recording-provider.js';

/**
 * The declarative connector's reads (under the sandbox's catalog entry, for its auth), writes and metadata against a tiny local provider that logs
 * what it is asked: the window as the provider understands it (precision, bounds), the provider's
 * page size, cursors kept for the next read, deletions listed apart, values kept in containers,
 * fields in use, error details and pacing.
 */

const provider = useRecordingProvider();
const { seen } = provider;

beforeAll(() => {
  process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = 'true';
  resetConfig();
});

const listing = {
  request: {
    method: 'GET',
    path: '/people',
    query: {
      limit: '{{pageSize}}',
      cursor: '{{cursor}}',
      since: '{{since|isoSeconds}}',
      until: '{{until|isoSeconds}}',
    },
  },
  records: '/data',
  pagination: { style: 'cursor', next: '/next', hasMore: '/more' },
  pageSize: { max: 500 },
  changes: { precision: 'second', since: 'exclusive', until: 'exclusive', lagSeconds: 30 },
};

function declaration(extra: Record<string, unknown> = {}, read: Record<string, unknown> = {}): any {
  return {
    provider: 'sandboxApiKey',
    reference: 'https://acme.example/docs',
    errorDetails: ['/details'],
    objects: {
      people: {
        updated: { field: '/updated', format: 'isoSeconds' },
        read: {
          list: listing,
          deletions: { style: 'none', reason: 'none kept' },
          ...read,
        },
        ...extra,
      },
    },
  };
}

function connector(value: unknown): DeclaredConnector {
  const declared = checkDeclaration('sandboxApiKey.json', value, new Set(['sandboxApiKey']));
  return new DeclaredConnector(
    { provider: 'sandboxApiKey', templateVars: {}, auth: async () => ({ type: 'apiKey', apiKey: 'k' }) },
    { baseUrl: provider.url, retry: { maxAttempts: 1 } },
    declared,
  );
}

async function readAll(people: DeclaredConnector, input: Omit<ReadPageInput, 'pageToken'>) {
  const pages: { records: ProviderRecord[]; deletions?: boolean; resumeCursor?: string }[] = [];
  let pageToken: string | undefined;
  for (;;) {
    const page = await people.readPage({ ...input, ...(pageToken && { pageToken }) });
    pages.push(page);
    if (page.done) return pages;
    pageToken = page.nextPageToken;
  }
}

const person = (id: number, updated: string, extra: Record<string, unknown> = {}) => ({
  id,
  updated,
  ...extra,
});

describe('a window as the provider understands it', () => {
  it('asks from the start of the second, one second earlier for an exclusive bound, and keeps what that second holds', async () => {
    seen.length = 0;
    provider.answer = () => ({
      body: { data: [person(1, '2026-01-01T12:00:00Z'), person(2, '2026-01-01T12:00:05Z')], more: false },
    });
    const [page] = await readAll(connector(declaration()), {
      objectName: 'people',
      since: new Date('2026-01-01T12:00:00.700Z'),
      until: new Date('2026-01-01T13:00:00.000Z'),
    });
    expect(seen[0].url.searchParams.get('since')).toBe('2026-01-01T11:59:59Z');
    // Stamped in the second the window starts in: a provider writing whole seconds cannot say it came before.
    expect(page.records.map((record) => record.id)).toEqual(['1', '2']);
  });

  it('asks for the most records a page may hold unless told otherwise', async () => {
    seen.length = 0;
    provider.answer = () => ({ body: { data: [], more: false } });
    await readAll(connector(declaration()), { objectName: 'people' });
    await readAll(connector(declaration()), { objectName: 'people', pageSize: 20 });
    expect(seen.map((request) => request.url.searchParams.get('limit'))).toEqual(['500', '20']);
  });

  it('says how the next read follows: the lag, one unit of precision and an allowance for skew before the newest change', () => {
    expect(connector(declaration()).changeTracking('people')).toEqual({
      overlapMs: 36_000,
      deletions: 'none',
      deletionsOverlapMs: 5_000,
      resumable: false,
      precisionMs: 1000,
      deletionsPrecisionMs: 1,
      fullRead: false,
    });
  });
});

describe("a listing that resumes from the provider's own cursor", () => {
  const resumable = () => declaration({}, { list: { ...listing, resume: true } });

  it('gives the cursor the listing ended at, and the next read starts there, without since and without cutting at until', async () => {
    seen.length = 0;
    provider.answer = (request) => {
      const cursor = request.url.searchParams.get('cursor');
      if (!cursor) return { body: { data: [person(1, '2026-01-01T12:00:00Z')], next: 'c1', more: true } };
      if (cursor === 'c1')
        return { body: { data: [person(2, '2026-01-01T12:00:01Z')], next: 'c2', more: false } };
      return { body: { data: [person(3, '2026-01-01T14:00:00Z')], next: 'c3', more: false } };
    };
    const people = connector(resumable());
    const first = await readAll(people, {
      objectName: 'people',
      since: new Date('2026-01-01T00:00:00Z'),
      until: new Date('2026-01-01T13:00:00Z'),
    });
    const cursor = first.at(-1)!.resumeCursor!;
    expect(cursor).toEqual(expect.any(String));
    const next = await readAll(people, {
      objectName: 'people',
      since: new Date('2026-01-01T12:00:00Z'),
      until: new Date('2026-01-01T13:00:00Z'),
      resumeFrom: cursor,
    });
    const last = seen.at(-1)!;
    expect(last.url.searchParams.get('cursor')).toBe('c2');
    expect(last.url.searchParams.get('since')).toBeNull();
    // Past `until`, yet kept: the cursor has moved past it, and nothing may be left behind it.
    expect(next.flatMap((page) => page.records.map((record) => record.id))).toEqual(['3']);
    expect(next.at(-1)!.resumeCursor).not.toBe(cursor);
  });
});

describe('a listing that ends with a link to what changes next (OData delta links)', () => {
  const delta = () =>
    declaration(
      { id: ['/id', '/removed'] },
      {
        list: {
          ...listing,
          request: { method: 'GET', path: '/people/changes', query: { since: '{{since|isoSeconds}}' } },
          records: '/data',
          pagination: { style: 'nextUrl', next: '/nextLink', resume: '/deltaLink' },
          deleted: { includes: { at: '/reason', value: 'deleted' } },
          changes: { precision: 'second', since: 'inclusive', until: 'unbounded', lagSeconds: 0 },
          resume: true,
        },
        deletions: { style: 'marked' },
      },
    );

  it('keeps the delta link as the resume cursor, reads deletions by their own id pointer, and keeps no position without one', async () => {
    provider.answer = (request) => {
      if (request.url.searchParams.get('token') === 'd1')
        return {
          body: {
            data: [person(2, '2026-01-01T13:00:00Z'), { removed: 7, reason: 'deleted' }],
            deltaLink: `${provider.url}/people/changes?token=d2`,
          },
        };
      if (request.url.searchParams.get('page') === '2')
        return {
          body: {
            data: [person(1, '2026-01-01T12:00:00Z')],
            deltaLink: `${provider.url}/people/changes?token=d1`,
          },
        };
      if (request.url.searchParams.get('untracked')) return { body: { data: [] } };
      return { body: { data: [], nextLink: `${provider.url}/people/changes?page=2` } };
    };
    const people = connector(delta());
    const first = await readAll(people, { objectName: 'people', since: new Date('2026-01-01T00:00:00Z') });
    const cursor = first.at(-1)!.resumeCursor!;
    expect(cursor).toEqual(expect.any(String));
    const next = await readAll(people, {
      objectName: 'people',
      since: new Date('2026-01-01T12:00:00Z'),
      resumeFrom: cursor,
      includeDeleted: true,
    });
    expect(seen.at(-1)!.url.searchParams.get('token')).toBe('d1');
    expect(next.flatMap((page) => page.records.map(({ id, deleted }) => ({ id, deleted })))).toEqual([
      { id: '2' },
      { id: '7', deleted: true },
    ]);
    expect(next.at(-1)!.resumeCursor).not.toBe(cursor);

    // A last page without a delta link (a table without change tracking) leaves no position behind.
    provider.answer = () => ({ body: { data: [person(3, '2026-01-01T14:00:00Z')] } });
    const untracked = await readAll(people, {
      objectName: 'people',
      since: new Date('2026-01-01T00:00:00Z'),
    });
    expect(untracked.at(-1)!.resumeCursor).toBeUndefined();
  });
});

describe('deletions listed apart', () => {
  const withDeletions = () =>
    declaration(
      {},
      {
        deletions: {
          style: 'listing',
          listing: {
            request: {
              method: 'GET',
              path: '/people/archived',
              query: { limit: '{{pageSize}}', after: '{{cursor}}' },
            },
            records: '/data',
            updated: { field: '/archived', format: 'isoSeconds' },
            pagination: { style: 'cursor', next: '/next', hasMore: '/more' },
            pageSize: { max: 100 },
          },
        },
      },
    );

  it('reads them after the changes, marked deleted, from their own start', async () => {
    provider.answer = (request) =>
      request.url.pathname === '/people/archived'
        ? {
            body: {
              data: [
                person(7, '2025-01-01T00:00:00Z', { archived: '2026-01-01T11:00:00Z' }),
                person(8, '2025-01-01T00:00:00Z', { archived: '2026-01-01T12:30:00Z' }),
              ],
              more: false,
            },
          }
        : { body: { data: [person(1, '2026-01-01T12:10:00Z')], more: false } };
    const people = connector(withDeletions());
    expect(people.changeTracking('people')).toMatchObject({ deletions: 'listing', resumable: false });
    const pages = await readAll(people, {
      objectName: 'people',
      since: new Date('2026-01-01T12:00:00Z'),
      until: new Date('2026-01-01T13:00:00Z'),
      includeDeleted: true,
      deletedSince: new Date('2026-01-01T12:00:00Z'),
    });
    expect(pages.map((page) => Boolean(page.deletions))).toEqual([false, true]);
    expect(pages[1].records).toMatchObject([
      { id: '8', deleted: true, updatedAt: '2026-01-01T12:30:00.000Z' },
    ]);
    // Without deletions asked for, the listing of deletions is not read at all.
    const calls = seen.length;
    await readAll(people, { objectName: 'people', since: new Date('2026-01-01T12:00:00Z') });
    expect(seen.slice(calls).map((request) => request.url.pathname)).toEqual(['/people']);
  });

  it('keeps only what its deleted predicate marks, where the listing of deletions lists live records too', async () => {
    const value = withDeletions();
    value.objects.people.read.deletions.listing.deleted = { matches: { at: '/archived', pattern: '.' } };
    provider.answer = (request) =>
      request.url.pathname === '/people/archived'
        ? {
            body: {
              data: [
                person(7, '2025-01-01T00:00:00Z', { archived: null }),
                person(8, '2025-01-01T00:00:00Z', { archived: '2026-01-01T12:30:00Z' }),
              ],
              more: false,
            },
          }
        : { body: { data: [], more: false } };
    const pages = await readAll(connector(value), {
      objectName: 'people',
      since: new Date('2026-01-01T12:00:00Z'),
      until: new Date('2026-01-01T13:00:00Z'),
      includeDeleted: true,
    });
    expect(pages.flatMap((page) => page.records)).toMatchObject([{ id: '8', deleted: true }]);
  });

  it('takes a declared "nothing here" status as an empty page, and still reads the deletions after it', async () => {
    const value = withDeletions();
    value.objects.people.read.list = { ...listing, emptyStatuses: [304] };
    provider.answer = (request) =>
      request.url.pathname === '/people/archived'
        ? { body: { data: [person(8, '2025-01-01T00:00:00Z', { archived: '2026-01-01T12:30:00Z' })] } }
        : { status: 304, body: {} };
    const people = connector(value);
    const pages = await readAll(people, {
      objectName: 'people',
      since: new Date('2026-01-01T12:00:00Z'),
      until: new Date('2026-01-01T13:00:00Z'),
      includeDeleted: true,
    });
    expect(pages.map((page) => [page.records.length, Boolean(page.deletions)])).toEqual([
      [0, false],
      [1, true],
    ]);
    // A status the listing does not declare is still a failure.
    provider.answer = () => ({ status: 304, body: {} });
    const error = await connector(withDeletions())
      .readPage({ objectName: 'people', since: new Date('2026-01-01T12:00:00Z') })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(304);
  });

  it('hands a hook that walked the changes itself over to the listing of deletions', async () => {
    provider.answer = (request) =>
      request.url.pathname === '/people/archived'
        ? {
            body: {
              data: [
                person(7, '2025-01-01T00:00:00Z', { archived: '2026-01-01T11:00:00Z' }),
                person(8, '2025-01-01T00:00:00Z', { archived: '2026-01-01T12:30:00Z' }),
              ],
              next: 'c2',
              more: true,
            },
          }
        : { body: { data: [], more: false } };
    const value = withDeletions();
    const people = connector(value);
    const token = deletionsPageToken(
      'people',
      checkDeclaration('sandboxApiKey.json', value, new Set(['sandboxApiKey'])).objects.people,
      {
        until: new Date('2026-01-01T13:00:00Z'),
        pageSize: 2,
        deletedSince: new Date('2026-01-01T12:00:00Z'),
      },
    );
    const calls = seen.length;
    const page = await people.readPage({ objectName: 'people', pageToken: token! });
    expect(page).toMatchObject({ deletions: true, done: false });
    expect(page.records).toMatchObject([{ id: '8', deleted: true }]);
    expect(seen.slice(calls).map((request) => request.url.search)).toEqual(['?limit=2']);
    expect(deletionsPageToken('people', declaration().objects.people, {})).toBeUndefined();
  });

  it('keeps a resume cursor for an object whose listing of deletions resumes (walked by hooks)', () => {
    const value = withDeletions();
    value.hooks = { module: 'sandbox' };
    value.objects.people.read.deletions.listing.resume = true;
    expect(connector(value).changeTracking('people')).toMatchObject({
      deletions: 'listing',
      resumable: true,
    });
  });
});

describe('deletions marked by a listing of their own resource', () => {
  // Salesforce's `query` leaves deleted records out; `queryAll` lists them too, marked `IsDeleted`.
  const withMarked = () =>
    declaration(
      { deleted: '/gone' },
      {
        deletions: {
          style: 'marked',
          list: {
            ...listing,
            request: { ...listing.request, path: '/people/all' },
            changes: { precision: 'second', since: 'exclusive', until: 'exclusive', lagSeconds: 600 },
          },
        },
      },
    );

  it('walks it when a read asks for deletions, delivering them marked, and the usual listing otherwise', async () => {
    seen.length = 0;
    provider.answer = (request) => ({
      body: {
        data:
          request.url.pathname === '/people/all'
            ? [
                person(1, '2026-01-01T12:10:00Z', { gone: false }),
                person(2, '2026-01-01T12:20:00Z', { gone: true }),
              ]
            : [person(1, '2026-01-01T12:10:00Z')],
        more: false,
      },
    });
    const people = connector(withMarked());
    // The position allows for the lag of either listing.
    expect(people.changeTracking('people')).toMatchObject({ deletions: 'marked', overlapMs: 606_000 });
    const window = { since: new Date('2026-01-01T12:00:00Z'), until: new Date('2026-01-01T13:00:00Z') };
    const marked = await readAll(people, { objectName: 'people', ...window, includeDeleted: true });
    expect(marked.flatMap((page) => page.records)).toMatchObject([{ id: '1' }, { id: '2', deleted: true }]);
    expect(marked.some((page) => page.deletions)).toBe(false);
    await readAll(people, { objectName: 'people', ...window });
    expect(seen.map((request) => request.url.pathname)).toEqual(['/people/all', '/people']);
    expect(seen[0].url.searchParams.get('since')).toBe('2026-01-01T11:59:59Z');
  });

  it('checks that listing like any other', () => {
    const value = withMarked();
    delete value.objects.people.read.deletions.list.changes;
    expect(() => connector(value)).toThrow(/read\.deletions\.list\.changes: a listing filtered by time/);
  });
});

describe('a listing sorted by modification time and paged by number or offset', () => {
  /** The provider's records; it lists those in the window oldest first (then by id), a page at a time. */
  let stored: { id: number; updated: string }[] = [];
  const at = (second: number) => `2026-01-01T12:00:${String(second).padStart(2, '0')}Z`;

  function sortedListing(style: 'page' | 'offset', bound: 'inclusive' | 'exclusive', restart: boolean) {
    return {
      request: {
        method: 'GET',
        path: '/people',
        query: {
          limit: '{{pageSize}}',
          [style]: style === 'page' ? '{{page}}' : '{{offset}}',
          sort: 'updated',
          since: '{{since|isoSeconds}}',
          until: '{{until|isoSeconds}}',
        },
      },
      records: '/data',
      pagination: { style },
      pageSize: { max: 3 },
      changes: { precision: 'second', since: bound, until: 'exclusive', lagSeconds: 0 },
      ...(restart && { restartFromNewest: true }),
    };
  }

  function sortedProvider(bound: 'inclusive' | 'exclusive', between?: (request: number) => void) {
    let requests = 0;
    return (request: RecordedRequest) => {
      between?.(requests++);
      const query = request.url.searchParams;
      const since = query.get('since');
      const until = query.get('until');
      const limit = Number(query.get('limit'));
      const start = query.has('page') ? (Number(query.get('page')) - 1) * limit : Number(query.get('offset'));
      const inWindow = stored
        .filter((record) => {
          const time = Date.parse(record.updated);
          const from = since === null ? -Infinity : Date.parse(since);
          return (
            (bound === 'inclusive' ? time >= from : time > from) &&
            (until === null || time < Date.parse(until))
          );
        })
        .sort((a, b) => Date.parse(a.updated) - Date.parse(b.updated) || a.id - b.id);
      return { body: { data: inWindow.slice(start, start + limit) } };
    };
  }

  const readIds = async (style: 'page' | 'offset', restart: boolean, since?: Date) => {
    const people = connector(declaration({}, { list: sortedListing(style, 'inclusive', restart) }));
    const pages = await readAll(people, {
      objectName: 'people',
      ...(since && { since }),
      until: new Date('2026-01-01T13:00:00Z'),
    });
    return pages.flatMap((page) => page.records.map((record) => record.id));
  };

  describe.each(['page', 'offset'] as const)('by %s', (style) => {
    // Record 2, on the first page, is modified after the window's end (or deleted) once the first
    // page is read: every later record moves up one place.
    const leaves = (how: 'modified' | 'deleted') => (request: number) => {
      if (request !== 1) return;
      if (how === 'deleted') stored = stored.filter((record) => record.id !== 2);
      else
        stored = stored.map((record) =>
          record.id === 2 ? { ...record, updated: '2026-01-01T13:30:00Z' } : record,
        );
    };

    it('skips the record at the next page edge when an earlier one leaves the set during the walk', async () => {
      stored = [1, 2, 3, 4, 5, 6, 7].map((id) => ({ id, updated: at(id) }));
      provider.answer = sortedProvider('inclusive', leaves('modified'));
      expect(await readIds(style, false, new Date(at(0)))).toEqual(['1', '2', '3', '5', '6', '7']);
    });

    it.each(['modified', 'deleted'] as const)(
      'restarts from the newest time of each full page, so a record %s during the walk skips none and repeats none',
      async (how) => {
        stored = [1, 2, 3, 4, 5, 6, 7].map((id) => ({ id, updated: at(id) }));
        seen.length = 0;
        provider.answer = sortedProvider('inclusive', leaves(how));
        expect(await readIds(style, true, new Date(at(0)))).toEqual(['1', '2', '3', '4', '5', '6', '7']);
        const position = style === 'page' ? '1' : '0';
        expect(
          seen.map((request) => [request.url.searchParams.get('since'), request.url.searchParams.get(style)]),
        ).toEqual([
          [at(0), position],
          [at(3), position],
          [at(5), position],
          [at(7), position],
        ]);
      },
    );
  });

  it('pages on from the same time through ties longer than a page, in a backfill and with an exclusive bound', async () => {
    // One record, seven in second 5, one in second 6: a restart at second 5 would list the same page again.
    stored = [
      { id: 1, updated: at(1) },
      ...[2, 3, 4, 5, 6, 7, 8].map((id) => ({ id, updated: at(5) })),
      { id: 9, updated: at(6) },
    ];
    for (const bound of ['inclusive', 'exclusive'] as const) {
      seen.length = 0;
      provider.answer = sortedProvider(bound);
      const people = connector(declaration({}, { list: sortedListing('page', bound, true) }));
      const pages = await readAll(people, { objectName: 'people', until: new Date('2026-01-01T13:00:00Z') });
      expect(pages.flatMap((page) => page.records.map((record) => record.id))).toEqual([
        '1',
        '2',
        '3',
        '4',
        '5',
        '6',
        '7',
        '8',
        '9',
      ]);
      const restartedFrom = bound === 'inclusive' ? at(5) : at(4);
      expect(
        seen.map((request) => [request.url.searchParams.get('since'), request.url.searchParams.get('page')]),
      ).toEqual([
        [null, '1'],
        [restartedFrom, '1'],
        [restartedFrom, '2'],
        [restartedFrom, '3'],
      ]);
    }
  });

  it('is declared only where the walk can restart: paged by number or offset, from {{since}}', () => {
    const cursorPaged = { ...listing, restartFromNewest: true };
    expect(() => connector(declaration({}, { list: cursorPaged }))).toThrow(
      /read\.list\.restartFromNewest: needs pagination by page or offset/,
    );
    const unfiltered = sortedListing('page', 'inclusive', true);
    delete (unfiltered.request.query as Record<string, string>).since;
    expect(() => connector(declaration({}, { list: unfiltered }))).toThrow(
      /read\.list\.restartFromNewest: needs \{\{since\}\} in the request/,
    );
  });
});

describe('values kept in containers go by the names the metadata lists', () => {
  const containers = [
    { at: '/properties' },
    { at: '/custom', prefix: 'custom.' },
    { at: '/fields', prefix: 'fields.', entries: { name: '/id', value: '/value', numericNames: true } },
  ];

  it('reads them under those names, raw left as it was', async () => {
    const raw = person(1, '2026-01-01T12:00:00Z', {
      properties: { email: 'ada@example.com' },
      custom: { tier: 'gold' },
      fields: [{ id: 360, value: 'x' }],
    });
    provider.answer = () => ({ body: { data: [raw], more: false } });
    const [page] = await readAll(connector(declaration({ values: containers })), { objectName: 'people' });
    expect(page.records[0].raw).toEqual(raw);
    expect(page.records[0].values).toMatchObject({
      email: 'ada@example.com',
      'custom.tier': 'gold',
      'fields.360': 'x',
    });
  });

  it('writes them back into their containers', async () => {
    seen.length = 0;
    provider.answer = () => ({ body: { id: 9 } });
    const people = connector(
      declaration({
        values: containers,
        write: { create: { request: { method: 'POST', path: '/people', body: '{{record}}' }, id: '/id' } },
      }),
    );
    await people.write({
      objectName: 'people',
      type: 'create',
      record: { name: 'Ada', 'custom.tier': 'gold', 'fields.360': 'x', 'fields.361': 2 },
    });
    expect(seen[0].body).toEqual({
      name: 'Ada',
      custom: { tier: 'gold' },
      fields: [
        { id: 360, value: 'x' },
        { id: 361, value: 2 },
      ],
    });
  });

  it('writes values named by a number into a list of entries kept without a prefix', async () => {
    seen.length = 0;
    provider.answer = () => ({ body: { id: 9 } });
    const people = connector(
      declaration({
        values: [
          { at: '/custom_fields', entries: { name: '/definition_id', value: '/value', numericNames: true } },
        ],
        write: { update: { request: { method: 'PUT', path: '/people/{{id}}', body: '{{record}}' } } },
      }),
    );
    await people.write({
      objectName: 'people',
      type: 'update',
      recordId: '9',
      record: { title: 'CEO', '101': 1002, '102': true },
    });
    expect(seen[0].body).toEqual({
      title: 'CEO',
      custom_fields: [
        { definition_id: 101, value: 1002 },
        { definition_id: 102, value: true },
      ],
    });
  });
});

describe('metadata of fields in use', () => {
  it('leaves out inactive fields and values, and tells create-only from update-only fields', async () => {
    provider.answer = () => ({
      body: {
        fields: [
          { name: 'Name', type: 'text', createable: true, updateable: true, active: true },
          { name: 'Legacy', type: 'text', createable: true, updateable: true, active: false },
          { name: 'Owner', type: 'text', createable: true, updateable: false, active: true },
          { name: 'Stamp', type: 'text', createable: false, updateable: false, active: true },
          {
            name: 'Tier',
            type: 'pick',
            createable: true,
            updateable: true,
            active: true,
            options: [
              { value: 'gold', active: true },
              { value: 'tin', active: false },
            ],
          },
        ],
      },
    });
    const people = connector(
      declaration({
        metadata: {
          request: { method: 'GET', path: '/people/fields' },
          fields: '/fields',
          name: '/name',
          type: '/type',
          active: '/active',
          creatable: '/createable',
          updatable: '/updateable',
          options: { list: '/options', value: '/value', label: '/value', active: '/active' },
          types: { text: 'string', pick: 'singleSelect' },
        },
      }),
    );
    const { fields } = await people.listObjectMetadata('people');
    expect(Object.keys(fields)).toEqual(['Name', 'Owner', 'Stamp', 'Tier']);
    expect(fields.Name).toMatchObject({ readOnly: false });
    expect(fields.Name.createOnly).toBeUndefined();
    expect(fields.Owner).toMatchObject({ readOnly: false, createOnly: true });
    expect(fields.Stamp).toMatchObject({ readOnly: true });
    expect(fields.Tier.values).toEqual([{ value: 'gold', displayValue: 'gold' }]);
  });

  it('writes a prefix and a suffix around the names they apply to (Dataverse lookups read as _<name>_value)', async () => {
    provider.answer = () => ({
      body: {
        fields: [
          { name: 'name', type: 'text' },
          { name: 'parentid', type: 'lookup' },
        ],
      },
    });
    const lookup = { includes: { at: '/type', value: 'lookup' } };
    const people = connector(
      declaration({
        metadata: {
          request: { method: 'GET', path: '/people/fields' },
          fields: '/fields',
          name: '/name',
          prefix: { text: '_', when: lookup },
          suffix: { text: '_value', when: lookup },
          type: '/type',
          types: { text: 'string', lookup: 'other' },
        },
      }),
    );
    const { fields } = await people.listObjectMetadata('people');
    expect(Object.keys(fields)).toEqual(['name', '_parentid_value']);
  });
});

describe("the provider's words and limits", () => {
  it("carries the error body's details, which say which field was wrong", async () => {
    provider.answer = () => ({
      status: 422,
      body: {
        error: 'RecordInvalid',
        description: 'Record validation errors',
        details: { email: ['is invalid'] },
      },
    });
    const people = connector(
      declaration({
        write: { create: { request: { method: 'POST', path: '/people', body: '{{record}}' }, id: '/id' } },
      }),
    );
    const error = await people
      .write({ objectName: 'people', type: 'create', record: { email: 'x' } })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).details).toEqual({ email: ['is invalid'] });
    expect(describeError(error)).toContain('Details: {"email":["is invalid"]}');
  });

  it('keeps to a documented limit per endpoint instead of running into 429s', async () => {
    seen.length = 0;
    provider.answer = () => ({ body: { data: [], more: false } });
    const people = connector({
      ...declaration(),
      pacing: [{ method: 'GET', path: '^/people$', requests: 2, perSeconds: 0.4 }],
    });
    await Promise.all([1, 2, 3].map(() => people.readPage({ objectName: 'people' })));
    const times = seen.map((request) => request.at).sort((a, b) => a - b);
    expect(times).toHaveLength(3);
    // The third waits until the first has left the 0.4 s window. Times are arrivals at the
    // server, so the first's connection setup may eat into the gap; a burst would be a few ms.
    expect(times[2] - times[0]).toBeGreaterThanOrEqual(300);
    expect(times[1] - times[0]).toBeLessThan(300);
  });
});
