import { beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { checkDeclaration } from '../../src/providers/catalog/connector-declarations.js';
import type { ReadPageInput, ReadPageResult } from '../../src/providers/connector.js';
import { DeclaredConnector } from '../../src/providers/declarative/connector.js';
import { ProviderError } from '../../src/providers/errors.js';
import { useRecordingProvider, type RecordedRequest } from './support/recording-provider.js';

/**
 * Listings of stubs read in full by id (`expand`), changes from a feed of their own (`read.feed`,
 * Gmail's history beside its message listing) and resume tokens the provider refuses
 * (`resumeRefused`, `feed.refused`), against a tiny local provider that logs what it is asked.
 */

const provider = useRecordingProvider();
const { seen } = provider;

beforeAll(() => {
  process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = 'true';
  resetConfig();
});

const get = { request: { method: 'GET', path: '/messages/{{id}}' }, record: '' };

const stubListing = {
  request: {
    method: 'GET',
    path: '/messages',
    query: { maxResults: '{{pageSize}}', pageToken: '{{cursor}}' },
  },
  records: '/messages',
  pagination: { style: 'cursor', next: '/nextPageToken' },
  pageSize: { max: 500 },
  expand: { concurrency: 2 },
};

const feed = {
  start: { request: { method: 'GET', path: '/profile' }, token: '/historyId' },
  request: {
    method: 'GET',
    path: '/history',
    query: { startHistoryId: '{{resume}}', pageToken: '{{cursor}}', maxResults: '{{pageSize}}' },
  },
  entries: '/history',
  changed: ['/messagesAdded', '/labelsAdded', '/labelsRemoved'],
  deleted: ['/messagesDeleted'],
  record: '/message',
  pagination: { style: 'cursor', next: '/nextPageToken', resume: '/historyId' },
  pageSize: { max: 500 },
  expand: { concurrency: 2 },
  refused: [404],
};

function declaration(read: Record<string, unknown>): any {
  return {
    provider: 'sandboxApiKey',
    reference: 'https://mail.example/docs',
    objects: { messages: { id: '/id', read } },
  };
}

const mail = () => declaration({ list: stubListing, feed, deletions: { style: 'marked' }, get });

function connector(value: unknown, retry: Record<string, number> = { maxAttempts: 1 }): DeclaredConnector {
  const declared = checkDeclaration('sandboxApiKey.json', value, new Set(['sandboxApiKey']));
  return new DeclaredConnector(
    { provider: 'sandboxApiKey', templateVars: {}, auth: async () => ({ type: 'apiKey', apiKey: 'k' }) },
    { baseUrl: provider.url, retry },
    declared,
  );
}

async function readAll(messages: DeclaredConnector, input: Omit<ReadPageInput, 'pageToken'>) {
  const pages: ReadPageResult[] = [];
  let pageToken: string | undefined;
  for (;;) {
    const page = await messages.readPage({ ...input, ...(pageToken && { pageToken }) });
    pages.push(page);
    if (page.done) return pages;
    pageToken = page.nextPageToken;
  }
}

const ids = (pages: ReadPageResult[]) => pages.flatMap((page) => page.records.map((record) => record.id));
const byPath = (path: string) => seen.filter((request) => request.url.pathname === path);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A message store: `gone` answer 404 to a get; each get is slower the earlier the id, to scramble arrival order. */
function messageServer(options: {
  gone?: string[];
  history?: (request: RecordedRequest) => { status?: number; body: unknown };
}) {
  let inFlight = 0;
  let most = 0;
  provider.answer = async (request) => {
    const path = request.url.pathname;
    if (path === '/profile') return { body: { emailAddress: 'me@example.com', historyId: '500' } };
    if (path === '/messages') {
      const token = request.url.searchParams.get('pageToken');
      return token
        ? { body: { messages: [{ id: 'm3', threadId: 't3' }] } }
        : {
            body: {
              messages: [
                { id: 'm1', threadId: 't1' },
                { id: 'm2', threadId: 't1' },
              ],
              nextPageToken: 'p2',
            },
          };
    }
    if (path === '/history') return options.history?.(request) ?? { body: { historyId: '500' } };
    const id = path.split('/').at(-1)!;
    inFlight++;
    most = Math.max(most, inFlight);
    await sleep(id === 'm1' ? 30 : 5);
    inFlight--;
    if (options.gone?.includes(id)) return { status: 404, body: { error: { message: 'Not Found' } } };
    return {
      body: { id, threadId: 't', historyId: '400', internalDate: '1700000000000', labelIds: ['INBOX'] },
    };
  };
  return { most: () => most };
}

describe('a listing of stubs read in full by id (expand)', () => {
  it('reads each stub through read.get, a few at a time, in the order listed', async () => {
    seen.length = 0;
    const store = messageServer({});
    const pages = await readAll(connector(mail()), { objectName: 'messages' });
    expect(ids(pages)).toEqual(['m1', 'm2', 'm3']);
    expect(pages[0].records[0].raw).toMatchObject({ id: 'm1', labelIds: ['INBOX'] });
    expect(store.most()).toBeLessThanOrEqual(2);
    expect(byPath('/messages/m1')).toHaveLength(1);
  });

  it('takes a get answering 404 as the record gone: a deletion where the read asks for them, else left out', async () => {
    messageServer({ gone: ['m2'] });
    const plain = await readAll(connector(mail()), { objectName: 'messages' });
    expect(ids(plain)).toEqual(['m1', 'm3']);
    const withDeletions = await readAll(connector(mail()), { objectName: 'messages', includeDeleted: true });
    const records = withDeletions.flatMap((page) => page.records);
    expect(records.map((record) => [record.id, record.deleted === true])).toEqual([
      ['m1', false],
      ['m2', true],
      ['m3', false],
    ]);
  });

  it("asks each get for the fields the read chose, and the object's alwaysSelect, though it has no modification time", async () => {
    seen.length = 0;
    messageServer({});
    const value = mail();
    value.objects.messages.alwaysSelect = ['id', 'historyId'];
    value.objects.messages.read.get = {
      ...get,
      request: { ...get.request, query: { fields: '{{fields|join:,}}' } },
    };
    await readAll(connector(value), { objectName: 'messages', fields: ['snippet'] });
    expect(byPath('/messages/m1')[0].url.searchParams.get('fields')).toBe('snippet,id,historyId');
    // A record read by id alone (a webhook's) asks for every field.
    await connector(value).readRecord('messages', 'm2');
    expect(byPath('/messages/m2').at(-1)!.url.searchParams.has('fields')).toBe(false);
  });

  it('waits out a 429 on a get as on any request', async () => {
    seen.length = 0;
    let limited = false;
    provider.answer = (request) => {
      if (request.url.pathname === '/profile') return { body: { historyId: '1' } };
      if (request.url.pathname === '/messages') return { body: { messages: [{ id: 'm1' }, { id: 'm2' }] } };
      if (request.url.pathname === '/messages/m2' && !limited) {
        limited = true;
        return { status: 429, body: { error: { message: 'userRateLimitExceeded' } } };
      }
      return { body: { id: request.url.pathname.split('/').at(-1), labelIds: [] } };
    };
    const pages = await readAll(connector(mail(), { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 }), {
      objectName: 'messages',
    });
    expect(ids(pages)).toEqual(['m1', 'm2']);
    expect(byPath('/messages/m2')).toHaveLength(2);
  });

  it('fails the page when a get fails otherwise, so the page is read again', async () => {
    provider.answer = (request) =>
      request.url.pathname === '/messages'
        ? { body: { messages: [{ id: 'm1' }] } }
        : { status: 400, body: { error: { message: 'bad' } } };
    await expect(connector(mail()).readPage({ objectName: 'messages' })).rejects.toThrow();
  });
});

describe('changes from a feed of their own (read.feed)', () => {
  it('takes the feed token before the full listing starts, and hands it on only with the last page', async () => {
    seen.length = 0;
    messageServer({});
    const pages = await readAll(connector(mail()), { objectName: 'messages' });
    // The token is asked for first: what changes while the listing runs is in the feed next time.
    expect(seen[0].url.pathname).toBe('/profile');
    expect(pages[0].resumeCursor).toBeUndefined();
    expect(pages.at(-1)!.resumeCursor).toEqual(expect.any(String));
    const tracking = connector(mail()).changeTracking('messages');
    expect(tracking).toMatchObject({ resumable: true, deletions: 'marked' });
  });

  it('walks the feed from the token: records named by several pointers read once each, deletions marked, the next token from the last page', async () => {
    seen.length = 0;
    messageServer({
      history: (request) => {
        const token = request.url.searchParams.get('pageToken');
        if (!token)
          return {
            body: {
              history: [
                { id: '501', messagesAdded: [{ message: { id: 'a', threadId: 't' } }] },
                { id: '502', labelsAdded: [{ message: { id: 'a' }, labelIds: ['STARRED'] }] },
                { id: '503', labelsRemoved: [{ message: { id: 'b' }, labelIds: ['UNREAD'] }] },
                { id: '504', messagesAdded: [{ message: { id: 'c' } }] },
                { id: '505', messagesDeleted: [{ message: { id: 'c' } }] },
              ],
              nextPageToken: 'h2',
              historyId: '510',
            },
          };
        return {
          body: { history: [{ id: '511', messagesDeleted: [{ message: { id: 'z' } }] }], historyId: '520' },
        };
      },
    });
    const messages = connector(mail());
    const full = await readAll(messages, { objectName: 'messages' });
    seen.length = 0;
    const pages = await readAll(messages, {
      objectName: 'messages',
      since: new Date('2026-01-01T00:00:00Z'),
      includeDeleted: true,
      resumeFrom: full.at(-1)!.resumeCursor!,
    });
    const history = byPath('/history');
    expect(history.map((request) => request.url.searchParams.get('startHistoryId'))).toEqual(['500', '500']);
    expect(history.map((request) => request.url.searchParams.get('pageToken'))).toEqual([null, 'h2']);
    // One get per record changed, none for one deleted in the same page.
    expect(
      seen
        .filter((request) => request.url.pathname.startsWith('/messages/'))
        .map((r) => r.url.pathname)
        .sort(),
    ).toEqual(['/messages/a', '/messages/b']);
    const records = pages.flatMap((page) => page.records);
    expect(records.map((record) => [record.id, record.deleted === true])).toEqual([
      ['a', false],
      ['b', false],
      ['c', true],
      ['z', true],
    ]);
    expect(records[0].raw).toMatchObject({ labelIds: ['INBOX'] });
    expect(pages[0].resumeCursor).toBeUndefined();

    // The next read starts from the token the last page gave.
    seen.length = 0;
    await readAll(messages, { objectName: 'messages', resumeFrom: pages.at(-1)!.resumeCursor! });
    expect(byPath('/history')[0].url.searchParams.get('startHistoryId')).toBe('520');
  });

  it('leaves deletions out of a read that does not ask for them', async () => {
    messageServer({
      history: () => ({
        body: { history: [{ messagesDeleted: [{ message: { id: 'c' } }] }], historyId: '530' },
      }),
    });
    const messages = connector(mail());
    const full = await readAll(messages, { objectName: 'messages' });
    const pages = await readAll(messages, { objectName: 'messages', resumeFrom: full.at(-1)!.resumeCursor! });
    expect(ids(pages)).toEqual([]);
    expect(pages.at(-1)!.resumeCursor).toEqual(expect.any(String));
  });

  it('starts over with a full listing and a new token when the feed refuses the token (404)', async () => {
    let historyAsked = 0;
    messageServer({
      history: () => {
        historyAsked++;
        return { status: 404, body: { error: { message: 'Requested entity was not found.' } } };
      },
    });
    const messages = connector(mail());
    const full = await readAll(messages, { objectName: 'messages' });
    seen.length = 0;
    const again = await readAll(messages, {
      objectName: 'messages',
      since: new Date('2026-01-01T00:00:00Z'),
      resumeFrom: full.at(-1)!.resumeCursor!,
    });
    expect(historyAsked).toBe(1);
    expect(seen.map((request) => request.url.pathname).slice(0, 3)).toEqual([
      '/history',
      '/profile',
      '/messages',
    ]);
    expect(ids(again)).toEqual(['m1', 'm2', 'm3']);
    expect(again.at(-1)!.resumeCursor).toEqual(expect.any(String));
  });
});

describe('a resume token the provider refuses (resumeRefused)', () => {
  const calendar = (refusedStatuses?: number[]) =>
    declaration({
      list: {
        request: {
          method: 'GET',
          path: '/events',
          query: { pageToken: '{{cursor}}', syncToken: '{{resume}}', updatedMin: '{{since|iso}}' },
        },
        records: '/items',
        pagination: { style: 'cursor', next: '/nextPageToken', resume: '/nextSyncToken' },
        pageSize: { max: 2500 },
        changes: { precision: 'millisecond', since: 'inclusive', until: 'unbounded', lagSeconds: 0 },
        resume: true,
        ...(refusedStatuses && { resumeRefused: refusedStatuses }),
      },
      deletions: { style: 'none', reason: 'not here' },
    });

  it('reads the whole listing again, without the token and without since, and ends with a new token (Calendar 410)', async () => {
    seen.length = 0;
    provider.answer = (request) => {
      if (request.url.searchParams.get('syncToken') === 'old')
        return {
          status: 410,
          body: { error: { message: 'Sync token is no longer valid, a full sync is required.' } },
        };
      return { body: { items: [{ id: 'e1' }, { id: 'e2' }], nextSyncToken: 'fresh' } };
    };
    const events = connector(calendar([410]));
    const first = await readAll(events, { objectName: 'messages' });
    const cursor = first.at(-1)!.resumeCursor!;
    expect(byPath('/events')[0].url.searchParams.get('syncToken')).toBeNull();
    provider.answer = (request) =>
      request.url.searchParams.get('syncToken') === 'fresh'
        ? { status: 410, body: { error: { message: 'gone' } } }
        : { body: { items: [{ id: 'e1' }, { id: 'e2' }, { id: 'e3' }], nextSyncToken: 'newer' } };
    seen.length = 0;
    const pages = await readAll(events, {
      objectName: 'messages',
      since: new Date('2020-01-01T00:00:00Z'),
      resumeFrom: cursor,
    });
    const [refused, full] = byPath('/events');
    expect(refused.url.searchParams.get('syncToken')).toBe('fresh');
    expect(full.url.searchParams.get('syncToken')).toBeNull();
    expect(full.url.searchParams.get('updatedMin')).toBeNull();
    expect(ids(pages)).toEqual(['e1', 'e2', 'e3']);
    const next = pages.at(-1)!.resumeCursor!;
    expect(next).not.toBe(cursor);
  });

  it('fails as before where no status is declared', async () => {
    provider.answer = () => ({ body: { items: [{ id: 'e1' }], nextSyncToken: 'fresh' } });
    const events = connector(calendar());
    const cursor = (await readAll(events, { objectName: 'messages' })).at(-1)!.resumeCursor!;
    provider.answer = () => ({ status: 410, body: { error: { message: 'gone' } } });
    const error = await events
      .readPage({ objectName: 'messages', resumeFrom: cursor })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(410);
  });
});

describe('declared only where it can work', () => {
  const problems = (value: unknown) => {
    try {
      checkDeclaration('sandboxApiKey.json', value, new Set(['sandboxApiKey']));
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('refuses an expansion without read.get, a feed without its token or cursor, and refused statuses on a listing that does not resume', () => {
    expect(problems(mail())).toBe('');
    expect(problems(declaration({ list: stubListing, deletions: { style: 'none', reason: 'x' } }))).toContain(
      'read.list.expand',
    );
    const noResume = { ...feed, request: { ...feed.request, query: { pageToken: '{{cursor}}' } } };
    expect(
      problems(declaration({ list: stubListing, feed: noResume, deletions: { style: 'marked' }, get })),
    ).toContain('{{resume}}');
    const noToken = { ...feed, pagination: { style: 'cursor', next: '/nextPageToken' } };
    expect(
      problems(declaration({ list: stubListing, feed: noToken, deletions: { style: 'marked' }, get })),
    ).toContain('read.feed.pagination');
    expect(
      problems(
        declaration({
          list: { ...stubListing, expand: undefined, resumeRefused: [410] },
          deletions: { style: 'none', reason: 'x' },
        }),
      ),
    ).toContain('resumeRefused');
  });
});
