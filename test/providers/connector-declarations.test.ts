import { describe, expect, it } from '@jest/globals';
import {
  ConnectorDeclarationError,
  checkDeclaration,
  effectiveObject,
} from '../../src/providers/catalog/connector-declarations.js';
import { DeclaredConnector } from '../../src/providers/declarative/connector.js';
import { ConnectorInputError } from '../../src/providers/errors.js';
import { describedField, holds } from '../../src/providers/declarative/field-metadata.js';
import { endPosition, nextLink, nextPageState } from '../../src/providers/declarative/pagination.js';
import { ABSENT, isKnownFormat, renderJson, renderString } from '../../src/providers/declarative/template.js';
import { parseTime } from '../../src/providers/declarative/times.js';

const known = new Set(['acme']);

/** A small valid declaration; each test breaks one thing in a copy. */
function declaration(): any {
  return {
    provider: 'acme',
    reference: 'https://acme.example/docs',
    defaults: { vars: { modified: 'updated_at' } },
    objects: {
      people: {
        updated: { field: '/updated_at', format: 'iso' },
        read: {
          list: {
            request: {
              method: 'GET',
              path: '/people',
              query: { limit: '{{pageSize}}', cursor: '{{cursor}}', since: '{{since|unixSeconds}}' },
            },
            records: '/data',
            pagination: { style: 'cursor', next: '/meta/next' },
            pageSize: { max: 100 },
            changes: { precision: 'second', since: 'inclusive', until: 'unbounded', lagSeconds: 0 },
          },
          deletions: { style: 'none', reason: 'Acme keeps no trace of deleted people.' },
        },
        write: {
          update: { request: { method: 'PATCH', path: '/people/{{id}}', body: '{{record}}' } },
        },
      },
    },
  };
}

function problemsOf(value: unknown): string {
  try {
    checkDeclaration('acme.json', value, known);
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorDeclarationError);
    return (error as Error).message;
  }
  throw new Error('the declaration was accepted');
}

describe('connector declarations are checked when they load', () => {
  it('accepts a valid declaration and merges defaults under each object', () => {
    const checked = checkDeclaration('acme.json', declaration(), known);
    expect(effectiveObject(checked, 'people')?.vars).toEqual({ modified: 'updated_at' });
    expect(effectiveObject(checked, 'nobody')).toBeUndefined();
  });

  it('names the provider, object and field of a path that is not a JSON Pointer', () => {
    const bad = declaration();
    bad.objects.people.read.list.records = 'data';
    expect(problemsOf(bad)).toMatch(/acme.*objects\.people\.read\.list\.records/s);
  });

  it('refuses an unknown pagination style, naming the field', () => {
    const bad = declaration();
    bad.objects.people.read.list.pagination = { style: 'scroll', next: '/meta/next' };
    expect(problemsOf(bad)).toContain('objects.people.read.list.pagination');
  });

  it('refuses a placeholder not known where it is used', () => {
    const bad = declaration();
    bad.objects.people.read.list.request.query.owner = '{{owner}}';
    expect(problemsOf(bad)).toContain(
      'acme: objects.people.read.list.request.query: {{owner}} is not known here',
    );
  });

  it('refuses a format it does not know', () => {
    const bad = declaration();
    bad.objects.people.read.list.request.query.since = '{{since|unixMinutes}}';
    expect(problemsOf(bad)).toContain('"unixMinutes" is not a known format');
  });

  it('refuses a cursor pagination whose request never sends the cursor', () => {
    const bad = declaration();
    delete bad.objects.people.read.list.request.query.cursor;
    expect(problemsOf(bad)).toContain('objects.people.read.list.pagination: style cursor needs {{cursor}}');
  });

  it('refuses an update that does not address the record by {{id}}', () => {
    const bad = declaration();
    bad.objects.people.write.update.request.path = '/people';
    expect(problemsOf(bad)).toContain(
      'objects.people.write.update.request: a update must address the record with {{id}}',
    );
  });

  it('refuses a window prefix without join, since the window is then text', () => {
    const bad = declaration();
    bad.objects.people.read.list.request.query.q = 'SELECT Id FROM People{{window}}';
    bad.objects.people.read.list.window = { since: 'Modified >= {{since}}', prefix: ' WHERE ' };
    expect(problemsOf(bad)).toContain('objects.people.read.list.window.prefix: needs join');
    bad.objects.people.read.list.window.join = ' AND ';
    expect(checkDeclaration('acme.json', bad, known)).toBeDefined();
  });

  it('refuses vars the object does not define', () => {
    const bad = declaration();
    bad.objects.people.read.list.request.query.sort = '{{vars.sortField}}';
    expect(problemsOf(bad)).toContain('{{vars.sortField}} names no entry');
  });

  it('refuses a declaration for a provider missing from the catalog, or filed under another name', () => {
    const bad = declaration();
    bad.provider = 'nobody';
    const message = problemsOf(bad);
    expect(message).toContain('nobody: provider: the file is named "acme.json"');
    expect(message).toContain('nobody: provider: not in the provider catalog');
  });
});

/** A search whose filters are members of one object, the field named in a key (Copper, ActiveCampaign). */
function memberSearch(): any {
  return {
    request: {
      method: 'POST',
      path: '/people/search',
      body: { '...': '{{filters}}', page_size: '{{pageSize}}', page_number: '{{page}}' },
    },
    members: { email: { emails: ['{{value}}'] }, name: { name: '{{value}}' } },
    records: '',
    pagination: { style: 'page', first: 1 },
    pageSize: { max: 200 },
  };
}

describe('what a read needs to lose no change', () => {
  it('refuses a listing filtered by time that does not state its precision, bounds and lag', () => {
    const value = declaration();
    delete value.objects.people.read.list.changes;
    expect(problemsOf(value)).toContain(
      'acme: objects.people.read.list.changes: a listing filtered by time must state its precision, its bounds and its lag',
    );
  });

  it('refuses a readable object that does not say how deletions are revealed', () => {
    const value = declaration();
    delete value.objects.people.read.deletions;
    expect(problemsOf(value)).toContain(
      'acme: objects.people.read.deletions: a readable object must say how its provider reveals deletions',
    );
  });

  it('refuses a full-read object that declares deletions or filters its listing by time', () => {
    const value = declaration();
    value.objects.people.read.fullRead = { reason: 'Acme cannot list people by change.' };
    const problems = problemsOf(value);
    expect(problems).toContain('objects.people.read.fullRead: infers deletions and walks `list` only');
    expect(problems).toContain(
      'objects.people.read.fullRead: walks the whole list: its request cannot filter',
    );
    delete value.objects.people.read.deletions;
    delete value.objects.people.read.list.request.query.since;
    delete value.objects.people.read.list.changes;
    expect(() => checkDeclaration('acme.json', value, known)).not.toThrow();
  });

  it('refuses marked deletions without a mark, and a listing of deletions checked like any listing', () => {
    const marked = declaration();
    marked.objects.people.read.deletions = { style: 'marked' };
    expect(problemsOf(marked)).toContain("marked deletions need the object's deleted pointer");
    const listed = declaration();
    listed.objects.people.read.deletions = {
      style: 'listing',
      listing: {
        request: { method: 'GET', path: '/people/deleted', query: { after: '{{since|unixSeconds}}' } },
        records: '/data',
        pagination: { style: 'cursor', next: '/meta/next' },
        pageSize: { max: 100 },
      },
    };
    const problems = problemsOf(listed);
    expect(problems).toContain(
      'objects.people.read.deletions.listing.pagination: style cursor needs {{cursor}}',
    );
    expect(problems).toContain('objects.people.read.deletions.listing.changes: a listing filtered by time');
  });

  it('refuses a resumable listing whose pagination leaves no position, and a pacing rule that does not compile', () => {
    const value = declaration();
    const list = value.objects.people.read.list;
    list.resume = true;
    list.pagination = { style: 'offset' };
    list.request.query = { limit: '{{pageSize}}', offset: '{{offset}}', since: '{{since|unixSeconds}}' };
    value.pacing = [{ path: '(', requests: 5, perSeconds: 1 }];
    const problems = problemsOf(value);
    expect(problems).toContain(
      'objects.people.read.list.resume: style offset leaves no position to resume from',
    );
    expect(problems).toContain('acme: pacing.0.path:');
  });

  it('refuses a listing of deletions that resumes from its own cursor without hooks to keep it', () => {
    const value = declaration();
    value.objects.people.read.deletions = {
      style: 'listing',
      listing: {
        request: { method: 'GET', path: '/events', query: { sync: '{{cursor}}' } },
        records: '/data',
        pagination: { style: 'cursor', next: '/sync' },
        pageSize: { max: 100 },
        resume: true,
      },
    };
    expect(problemsOf(value)).toContain(
      'objects.people.read.deletions.listing.resume: needs hooks that walk the listing and keep its position',
    );
    value.hooks = { module: 'acme' };
    expect(checkDeclaration('acme.json', value, known).hooks).toEqual({ module: 'acme' });
  });
});

describe('searches whose request names the field in a key (members)', () => {
  const withSearch = (search: unknown) => {
    const value = declaration();
    value.objects.people.search = search;
    return value;
  };
  const connector = (search: unknown) =>
    new DeclaredConnector(
      { provider: 'copper', templateVars: {}, auth: async () => ({ type: 'apiKey', apiKey: 'k' }) },
      {},
      checkDeclaration('copper.json', { ...withSearch(search), provider: 'copper' }, new Set(['copper'])),
    );

  it('accepts members spread into the body or the query', () => {
    expect(() => checkDeclaration('acme.json', withSearch(memberSearch()), known)).not.toThrow();
    const inQuery = memberSearch();
    inQuery.request = {
      method: 'GET',
      path: '/people',
      query: { '...': '{{filters}}', limit: '{{pageSize}}', page: '{{page}}' },
    };
    expect(() => checkDeclaration('acme.json', withSearch(inQuery), known)).not.toThrow();
  });

  it('refuses members that are not spread, both or neither of equals and members, members joined', () => {
    const unspread = memberSearch();
    unspread.request.body = { filters: '{{filters}}', page_number: '{{page}}' };
    expect(problemsOf(withSearch(unspread))).toContain(
      'acme: objects.people.search.request: members need the filters spread into the body or query',
    );
    expect(
      problemsOf(withSearch({ ...memberSearch(), equals: { f: '{{field}}', v: '{{value}}' } })),
    ).toContain('acme: objects.people.search: needs exactly one of equals and members');
    const { members: _members, ...neither } = memberSearch();
    expect(problemsOf(withSearch(neither))).toContain('needs exactly one of equals and members');
    expect(problemsOf(withSearch({ ...memberSearch(), join: ',' }))).toContain(
      'acme: objects.people.search.join: members are merged, not joined',
    );
  });

  it('refuses a member that does not use {{value}} or uses an unknown placeholder, naming the field', () => {
    const bad = memberSearch();
    bad.members.name = { name: 'Ada', owner: '{{owner}}' };
    const message = problemsOf(withSearch(bad));
    expect(message).toContain('acme: objects.people.search.members.name: must use {{value}}');
    expect(message).toContain('acme: objects.people.search.members.name: {{owner}} is not known here');
    const empty = memberSearch();
    empty.members.name = {};
    expect(problemsOf(withSearch(empty))).toContain('members');
  });

  it('spreads an object into query parameters, writing non-text values as JSON', () => {
    const request = connector(memberSearch()).request(
      { method: 'GET', path: '/people', query: { '...': '{{filters}}', limit: '{{pageSize}}' } },
      { filters: { email: "o'brien@example.com", ids: [1, 2], none: null }, pageSize: 5 },
    );
    expect(request.query).toEqual({ email: "o'brien@example.com", ids: '[1,2]', limit: '5' });
  });

  it('writes a `|path` value into a request path with its slashes, and refuses one that climbs', () => {
    const people = connector(memberSearch());
    const request = people.request(
      { method: 'DELETE', path: '/v1/{{id|path}}:deleteContact' },
      { id: 'people/c 1' },
    );
    expect(request.path).toBe('/v1/people/c%201:deleteContact');
    expect(people.request({ method: 'GET', path: '/v1/{{id}}' }, { id: 'people/c1' }).path).toBe(
      '/v1/people%2Fc1',
    );
    expect(() =>
      people.request({ method: 'GET', path: '/v1/{{id|path}}' }, { id: 'people/../admin' }),
    ).toThrow(ConnectorInputError);
  });

  it('refuses, before any call, a field without members and two filters writing the same member', async () => {
    const search = memberSearch();
    search.members.fullName = { name: '{{value}}' };
    const people = connector(search);
    const unknown = await people
      .search({ objectName: 'people', filters: [{ fieldName: 'phone', value: '1' }], pageSize: 10 })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(ConnectorInputError);
    expect((unknown as Error).message).toBe(
      '"copper" cannot search people by "phone"; it searches by "email", "name", "fullName".',
    );
    const twice = await people
      .search({
        objectName: 'people',
        filters: [
          { fieldName: 'name', value: 'Ada' },
          { fieldName: 'fullName', value: 'Ada L' },
        ],
        pageSize: 10,
      })
      .catch((error: unknown) => error);
    expect(twice).toBeInstanceOf(ConnectorInputError);
    expect((twice as Error).message).toContain('takes one filter on "name"');
  });
});

describe('templates', () => {
  const since = new Date('2024-05-01T12:34:56.789Z');

  it('formats times as the placeholder asks', () => {
    expect(renderString('{{since}}', { since })).toBe('2024-05-01T12:34:56.789Z');
    expect(renderString('{{since|isoSeconds}}', { since })).toBe('2024-05-01T12:34:56Z');
    expect(renderString('{{since|unixSeconds}}', { since })).toBe('1714566896');
    expect(renderString('{{since|unixSecondsUp}}', { since })).toBe('1714566897');
    expect(renderString('{{since|unixSecondsUp}}', { since: new Date(1714566896000) })).toBe('1714566896');
    expect(renderString('{{since|unixSecondsBelow}}', { since })).toBe('1714566896');
    expect(renderString('{{since|unixSecondsBelow}}', { since: new Date(1714566896000) })).toBe('1714566895');
    expect(renderString('{{since|isoSecondsBelow}}', { since })).toBe('2024-05-01T12:34:56Z');
    expect(renderString('{{since|isoSecondsBelow}}', { since: new Date(1714566896000) })).toBe(
      '2024-05-01T12:34:55Z',
    );
    expect(renderString('{{since|date}}', { since })).toBe('2024-05-01');
    expect(renderString('{{since|shift:-172800|unixSeconds}}', { since })).toBe('1714394096');
    expect(renderString('{{since|shift:86400|isoSeconds}}', { since })).toBe('2024-05-02T12:34:56Z');
    expect(renderString('{{since|shift:+60}}', { since })).toBe('2024-05-01T12:35:56.789Z');
    expect(isKnownFormat('shift:-172800|unixSeconds')).toBe(true);
    expect(isKnownFormat('shift:two')).toBe(false);
    expect(renderString('{{since|dateBefore}}..{{since|dateAfter}}', { since })).toBe(
      '2024-04-30..2024-05-02',
    );
    expect(renderJson({ v: '{{since|unixMs}}', s: '{{since|unixMs|string}}' }, { since })).toEqual({
      v: 1714566896789,
      s: '1714566896789',
    });
  });

  it('leaves out a member whose only placeholder has no value, and writes values into text', () => {
    expect(renderString('{{cursor}}', {})).toBe(ABSENT);
    expect(renderJson({ after: '{{cursor}}', limit: '{{pageSize}}' }, { pageSize: 50 })).toEqual({
      limit: 50,
    });
    expect(renderString('modifiedon ge {{since|isoSeconds}}', { since })).toBe(
      'modifiedon ge 2024-05-01T12:34:56Z',
    );
    expect(() => renderString('modifiedon ge {{since}}', {})).toThrow('needs a value for {{since}}');
  });

  it('keeps a whole record or list in its own JSON type, and joins lists in text', () => {
    const record = { name: 'Ada', tags: ['a'] };
    expect(renderJson({ properties: '{{record}}' }, { record })).toEqual({ properties: record });
    expect(renderString('{{fields}}', { fields: ['a', 'b'] })).toBe('a,b');
    expect(renderString('{{fields|join:;}}', { fields: ['a', 'b'] })).toBe('a;b');
    expect(renderString('{{vars.modified}}', { vars: { modified: 'updated_at' } })).toBe('updated_at');
  });

  it("escapes or doubles quotes so a value stays inside a query language's string", () => {
    expect(renderString("email:'{{value|escape:'}}'", { value: "o'brien\\x" })).toBe(
      "email:'o\\'brien\\\\x'",
    );
    expect(renderString("name eq '{{value|double:'}}'", { value: "o'brien" })).toBe("name eq 'o''brien'");
    expect(renderString("n:'{{value|escape:'\"}}'", { value: 7 })).toBe("n:'7'");
    expect(isKnownFormat("escape:'")).toBe(true);
    expect(isKnownFormat('escape:')).toBe(false);
  });

  it('gives a placeholder without a value its default text, and leaves a present value alone', () => {
    expect(renderString('{{fields|join:,|default:names,emailAddresses}}', {})).toBe('names,emailAddresses');
    expect(renderString('{{fields|join:,|default:names}}', { fields: ['urls', 'names'] })).toBe('urls,names');
    expect(isKnownFormat('join:,|default:names')).toBe(true);
    expect(isKnownFormat('default:')).toBe(false);
    expect(renderString('startposition {{offset|add:1}}', { offset: 0 })).toBe('startposition 1');
    expect(renderString('{{id|lastSegment}}', { id: 'https://api.calendly.com/event_types/AB12/' })).toBe(
      'AB12',
    );
  });

  it('spreads a record beside written-out members under "..."', () => {
    const template = { input: { id: '{{id}}', '...': '{{record}}' } };
    expect(renderJson(template, { id: 'gid://shop/Customer/1', record: { note: 'vip' } })).toEqual({
      input: { id: 'gid://shop/Customer/1', note: 'vip' },
    });
    expect(renderJson(template, { id: '7' })).toEqual({ input: { id: '7' } });
  });
});

describe('pagination', () => {
  const page = (body: unknown, items: unknown[], headers: Record<string, string> = {}) => ({
    body,
    headers,
    items,
    ids: items.map((item: any) => String(item.id)),
    pageSize: 2,
  });

  it('follows a cursor until none is given or hasMore is false', () => {
    const style = { style: 'cursor' as const, next: '/next', hasMore: '/more' };
    expect(nextPageState(style, {}, page({ next: 'c2', more: true }, [{}, {}]))).toEqual({ cursor: 'c2' });
    expect(nextPageState(style, {}, page({ next: 'c2', more: false }, [{}, {}]))).toBeUndefined();
    expect(nextPageState(style, {}, page({ next: null }, [{}, {}]))).toBeUndefined();
  });

  it('resumes a cursor listing from the token its last page gives for later (Google’s nextSyncToken)', () => {
    const sync = { style: 'cursor' as const, next: '/nextPageToken', resume: '/nextSyncToken' };
    expect(endPosition(sync, { cursor: 'p2' }, page({ nextSyncToken: 's9' }, [{}]))).toEqual({
      resume: 's9',
    });
    // No token for later: nothing to resume from (the next read goes by its window).
    expect(endPosition(sync, { cursor: 'p2' }, page({}, [{}]))).toBeUndefined();
    expect(nextPageState(sync, { resume: 's9' }, page({ nextPageToken: 'p3' }, [{}, {}]))).toEqual({
      cursor: 'p3',
    });
  });

  it('stops where the page says it is the last, though a cursor or next URL is still given', () => {
    const cursor = { style: 'cursor' as const, next: '/after_cursor', last: '/end_of_stream' };
    expect(nextPageState(cursor, {}, page({ after_cursor: 'c2', end_of_stream: false }, [{}]))).toEqual({
      cursor: 'c2',
    });
    expect(
      nextPageState(cursor, {}, page({ after_cursor: 'c2', end_of_stream: true }, [{}])),
    ).toBeUndefined();
    const url = { style: 'nextUrl' as const, next: '/after_url', last: '/end_of_stream' };
    expect(nextPageState(url, {}, page({ after_url: 'https://x/y?c=2' }, [{}]))).toEqual({
      url: 'https://x/y?c=2',
    });
    expect(
      nextPageState(url, {}, page({ after_url: 'https://x/y?c=2', end_of_stream: true }, [])),
    ).toBeUndefined();
  });

  it('counts offsets and pages, stopping on a short page when nothing else says', () => {
    const offset = { style: 'offset' as const };
    expect(nextPageState(offset, { offset: 4 }, page({}, [{}, {}]))).toEqual({ offset: 6 });
    expect(nextPageState(offset, { offset: 4 }, page({}, [{}]))).toBeUndefined();
    const pages = { style: 'page' as const, totalPages: '/pages' };
    expect(nextPageState(pages, { page: 1 }, page({ pages: 2 }, [{}]))).toEqual({ page: 2 });
    expect(nextPageState(pages, { page: 2 }, page({ pages: 2 }, [{}, {}]))).toBeUndefined();
    // A total of records: a full last page ends the listing (Smartsheet answers the last page again).
    const counted = { style: 'page' as const, totalItems: '/total' };
    expect(nextPageState(counted, { page: 1 }, page({ total: 4 }, [{}, {}]))).toEqual({ page: 2 });
    expect(nextPageState(counted, { page: 2 }, page({ total: 4 }, [{}, {}]))).toBeUndefined();
  });

  it('takes the last id, the next URL and the Link header', () => {
    expect(
      nextPageState(
        { style: 'lastId', hasMore: '/has_more' },
        {},
        page({ has_more: true }, [{ id: 'a' }, { id: 'b' }]),
      ),
    ).toEqual({ lastId: 'b' });
    expect(
      nextPageState(
        { style: 'nextUrl', next: '/@odata.nextLink' },
        {},
        page({ '@odata.nextLink': 'https://x/y?skip=2' }, []),
      ),
    ).toEqual({
      url: 'https://x/y?skip=2',
    });
    expect(
      nextLink('<https://a.example/p?page=1>; rel="prev", <https://a.example/p?page=3>; rel="next"'),
    ).toBe('https://a.example/p?page=3');
  });
});

describe('provider times', () => {
  it('reads each declared format', () => {
    expect(parseTime('2013-05-20T20:49:32.000+0000', 'iso')?.toISOString()).toBe('2013-05-20T20:49:32.000Z');
    expect(parseTime('2025-01-16T07:48:13.837000+00:00', 'iso')?.toISOString()).toBe(
      '2025-01-16T07:48:13.837Z',
    );
    expect(parseTime(1714566896, 'unixSeconds')?.toISOString()).toBe('2024-05-01T12:34:56.000Z');
    expect(parseTime('1714566896789', 'unixMs')?.toISOString()).toBe('2024-05-01T12:34:56.789Z');
    expect(parseTime('not a time', 'iso')).toBeUndefined();
  });
});

describe('field descriptor predicates', () => {
  it('includes: holds when the value at the pointer is the value, or a list holding it', () => {
    const descriptor = { available_on: ['person', 'company'], data_type: 'Dropdown' };
    expect(holds({ includes: { at: '/available_on', value: 'person' } }, descriptor)).toBe(true);
    expect(holds({ includes: { at: '/available_on', value: 'opportunity' } }, descriptor)).toBe(false);
    expect(holds({ includes: { at: '/data_type', value: 'Dropdown' } }, descriptor)).toBe(true);
    expect(holds({ includes: { at: '/missing', value: 'person' } }, descriptor)).toBe(false);
    expect(holds({ not: { includes: { at: '/available_on', value: 'lead' } } }, descriptor)).toBe(true);
  });

  it('includes: is checked at load, naming the field of a malformed one', () => {
    const broken = declaration();
    broken.objects.people.metadata = {
      request: { method: 'GET', path: '/fields' },
      fields: '/data',
      name: '/name',
      type: '/type',
      types: {},
      where: { includes: { at: 'available_on', value: 'person' } },
    };
    expect(() => checkDeclaration('acme.json', broken, known)).toThrow(ConnectorDeclarationError);
    broken.objects.people.metadata.where = { includes: { at: '/available_on', value: 'person' } };
    expect(() => checkDeclaration('acme.json', broken, known)).not.toThrow();
  });
});

describe('listings that mark their own deletions', () => {
  it('matches: holds when the text at the pointer matches the pattern', () => {
    const event = { type: 'customer.subscription.deleted', created: 1 };
    expect(holds({ matches: { at: '/type', pattern: '\\.deleted$' } }, event)).toBe(true);
    expect(holds({ matches: { at: '/type', pattern: '\\.updated$' } }, event)).toBe(false);
    expect(holds({ matches: { at: '/created', pattern: '1' } }, event)).toBe(false);
  });

  it('refuses a deletion pattern that does not compile, naming the field', () => {
    const broken = declaration();
    broken.objects.people.read.list.deleted = { matches: { at: '/type', pattern: '(' } };
    expect(() => checkDeclaration('acme.json', broken, known)).toThrow(
      /objects\.people\.read\.list\.deleted\.matches\.pattern/,
    );
    broken.objects.people.read.list.deleted = { matches: { at: '/type', pattern: '\\.deleted$' } };
    expect(() => checkDeclaration('acme.json', broken, known)).not.toThrow();
  });
});

describe('field descriptors', () => {
  it('joins a name read from several pointers with "." (a namespace and a key)', () => {
    const declared = {
      request: { method: 'POST' as const, path: '/graphql' },
      fields: '/nodes',
      type: '/type',
      types: {},
    };
    const descriptor = { namespace: 'custom', key: 'tier', type: 'single_line_text_field' };
    expect(describedField({ ...declared, name: ['/namespace', '/key'] }, descriptor)?.fieldName).toBe(
      'custom.tier',
    );
    expect(describedField({ ...declared, name: ['/namespace', '/missing'] }, descriptor)).toBeUndefined();
  });

  it("reads allowed values from the first of several option lists the descriptor has (Notion's select and status)", () => {
    const declared = {
      request: { method: 'GET' as const, path: '/v1/databases/x' },
      fields: '/properties',
      name: '/name',
      type: '/type',
      types: { status: 'singleSelect' as const },
      options: { list: ['/select/options', '/status/options'], value: '/name', label: '/name' },
    };
    const status = { name: 'Stage', type: 'status', status: { options: [{ name: 'Done' }] } };
    expect(describedField(declared, status)?.values).toEqual([{ value: 'Done', displayValue: 'Done' }]);
    expect(
      describedField(declared, { name: 'Notes', type: 'rich_text', rich_text: {} })?.values,
    ).toBeUndefined();
  });
});

describe('listings whose later pages are asked for another way (following)', () => {
  const following = {
    request: { method: 'POST', path: '/v2', body: { query: 'next', variables: { cursor: '{{cursor}}' } } },
    records: '/data/next/items',
    pagination: { style: 'cursor', next: '/data/next/cursor' },
  };
  const withFollowing = (later: unknown) => {
    const value = declaration();
    const list = value.objects.people.read.list;
    list.request = { method: 'POST', path: '', body: { limit: '{{pageSize}}' } };
    list.following = later;
    return value;
  };

  it('accepts a first request without the cursor, and an empty path (the base URL itself)', () => {
    const checked = checkDeclaration('acme.json', withFollowing(following), known);
    expect(effectiveObject(checked, 'people')!.read!.list.following!.records).toBe('/data/next/items');
  });

  it('refuses later pages that do not continue from the cursor, naming the field', () => {
    const broken = { ...following, request: { ...following.request, body: { query: 'next' } } };
    expect(problemsOf(withFollowing(broken))).toContain(
      'acme: objects.people.read.list.following.request: must continue from the first page, with its {{cursor}}',
    );
  });

  it('refuses later pages paged another way than the first', () => {
    const offset = { ...following, pagination: { style: 'offset' } };
    expect(problemsOf(withFollowing(offset))).toContain(
      'acme: objects.people.read.list.following.pagination: must page the way the first page does (style cursor)',
    );
  });

  it('still refuses a first request without the cursor when nothing follows it', () => {
    const value = withFollowing(undefined);
    delete value.objects.people.read.list.following;
    expect(problemsOf(value)).toContain('style cursor needs {{cursor}} in the request');
  });
});
