import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { VersionedStore } from './versions.js';

/**
 * A local stand-in for Notion's API (version 2022-06-28) as its public reference
 * (developers.notion.com/reference) describes it:
 *
 * - `Authorization: Bearer <token>` and a `Notion-Version` header on every request.
 * - `POST /v1/databases/{id}/query` with `filter` (timestamp filters on `last_edited_time` or
 *   `created_time`: `equals`, `before`, `after`, `on_or_before`, `on_or_after`, `is_empty`,
 *   `is_not_empty`, `past_week`, `past_month`, `past_year`; a `last_edited_time` property filters
 *   the same way; joined under `and`/`or`), `sorts`, `start_cursor` and `page_size` (≤ 100, default
 *   100), answering `{object: "list", results, next_cursor, has_more, type, page_or_database,
 *   request_id}`. Pages in the trash are left out, unless the body's `in_trash: true` (or its
 *   deprecated alias `archived: true`) asks for them, which lists only the trashed pages.
 * - `created_time` and `last_edited_time` rounded down to the minute.
 * - `GET /v1/databases/{id}` with its `properties` schema; `GET`, `POST` and `PATCH` of pages.
 * - Deleting moves a page to the trash (`archived: true` / `in_trash: true`, `last_edited_time`
 *   the time it was trashed): it leaves the default query, is listed by a query with
 *   `in_trash: true`, and `GET /v1/pages/{id}` still answers it, flagged.
 * - Computed properties (formula, created_time, last_edited_time…) cannot be written.
 * - Errors `{object: "error", status, code, message, request_id}` (`unauthorized` 401,
 *   `object_not_found` 404, `validation_error` 400, `rate_limited` 429 with `Retry-After` in
 *   seconds). Only what Ferry uses.
 */

export const NOTION_DATABASE_ID = '8f3c1c2e-4b7a-4d4e-9a61-2b5d0e7f9a10';
export const NOTION_VERSION = '2022-06-28';

interface Option {
  id: string;
  name: string;
  color: string;
}
interface Property {
  id: string;
  name: string;
  type: string;
  options?: Option[];
}

const option = (id: string, name: string, color: string): Option => ({ id, name, color });
const schema: Property[] = [
  { id: 'title', name: 'Name', type: 'title' },
  {
    id: 'st%3A',
    name: 'Status',
    type: 'status',
    options: [
      option('s1', 'Not started', 'default'),
      option('s2', 'In progress', 'blue'),
      option('s3', 'Done', 'green'),
    ],
  },
  {
    id: 'pr%3B',
    name: 'Priority',
    type: 'select',
    options: [option('p1', 'High', 'red'), option('p2', 'Low', 'gray')],
  },
  { id: 'tg%3C', name: 'Tags', type: 'multi_select', options: [option('t1', 'Bug', 'red')] },
  { id: 'es%3D', name: 'Estimate', type: 'number' },
  { id: 'du%3E', name: 'Due', type: 'date' },
  { id: 'dn%3F', name: 'Done', type: 'checkbox' },
  { id: 'nt%40', name: 'Notes', type: 'rich_text' },
  { id: 'le%41', name: 'Last edited', type: 'last_edited_time' },
  { id: 'cr%42', name: 'Created', type: 'created_time' },
  { id: 'sc%43', name: 'Score', type: 'formula' },
  { id: 'ur%44', name: 'Link', type: 'url' },
  { id: 'pe%45', name: 'Owner', type: 'people' },
];
/** Property types a page write may set; the others are computed by Notion. */
const writable = new Set([
  'url',
  'people',
  'title',
  'rich_text',
  'number',
  'select',
  'status',
  'multi_select',
  'date',
  'checkbox',
]);

type Page = Record<string, unknown> & { id: string; last_edited_time: string; archived: boolean };

/** Notion keeps a page's edit time to the minute. */
function editTime(ms: number): string {
  return new Date(Math.floor(ms / 60_000) * 60_000).toISOString();
}

function richText(content: string) {
  return [
    {
      type: 'text',
      text: { content, link: null },
      annotations: {
        bold: false,
        italic: false,
        strikethrough: false,
        underline: false,
        code: false,
        color: 'default',
      },
      plain_text: content,
      href: null,
    },
  ];
}

function invalid(message: string): FakeHttpError {
  return new FakeHttpError(400, message, 'validation_error');
}

/** A property value as written (`{select: {name}}`…) turned into the value Notion returns. */
function propertyValue(property: Property, value: unknown): unknown {
  // (verify the wording) Notion computes these: a write to one is refused.
  if (!writable.has(property.type))
    throw invalid(
      `body failed validation: ${property.name} is a ${property.type} property and cannot be updated.`,
    );
  const given =
    value && typeof value === 'object' ? (value as Record<string, unknown>)[property.type] : undefined;
  if (given === undefined)
    throw invalid(
      `body failed validation: body.properties.${property.name}.${property.type} should be defined, instead was \`undefined\`.`,
    );
  const choose = (choice: unknown) => {
    const wanted = (choice ?? {}) as { name?: unknown; id?: unknown };
    const found = property.options!.find((o) => o.name === wanted.name || o.id === wanted.id);
    if (found) return found;
    if (property.type === 'status' || typeof wanted.name !== 'string')
      throw invalid(`Invalid status option. Status option "${String(wanted.name)}" does not exist.`);
    const added = option(randomUUID(), wanted.name, 'default');
    property.options!.push(added);
    return added;
  };
  switch (property.type) {
    case 'title':
    case 'rich_text':
      if (!Array.isArray(given))
        throw invalid(`body.properties.${property.name}.${property.type} should be an array.`);
      return richText(
        given.map((part) => String((part as { text?: { content?: unknown } })?.text?.content ?? '')).join(''),
      );
    case 'number':
      if (given !== null && typeof given !== 'number')
        throw invalid(`body.properties.${property.name}.number should be a number or \`null\`.`);
      return given;
    case 'checkbox':
      if (typeof given !== 'boolean')
        throw invalid(`body.properties.${property.name}.checkbox should be a boolean.`);
      return given;
    case 'date': {
      const start = (given as { start?: unknown } | null)?.start;
      if (given !== null && (typeof start !== 'string' || Number.isNaN(Date.parse(start))))
        throw invalid(`body.properties.${property.name}.date.start should be a valid ISO 8601 date string.`);
      return given === null ? null : { start, end: null, time_zone: null };
    }
    case 'url':
      if (given !== null && typeof given !== 'string')
        throw invalid(`body.properties.${property.name}.url should be a string or \`null\`.`);
      return given;
    case 'people':
      if (!Array.isArray(given)) throw invalid(`body.properties.${property.name}.people should be an array.`);
      return given.map((person) => ({ object: 'user', id: String((person as { id?: unknown }).id) }));
    case 'multi_select':
      if (!Array.isArray(given))
        throw invalid(`body.properties.${property.name}.multi_select should be an array.`);
      return given.map(choose);
    default:
      return given === null ? null : choose(given);
  }
}

export async function startFakeNotion(): Promise<ConformanceFake> {
  const pages = new VersionedStore<Page>();
  const requestId = () => randomUUID();

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      object: 'error',
      status: error.status,
      code:
        error.code ??
        (error.status === 404
          ? 'object_not_found'
          : error.status === 503
            ? 'service_unavailable'
            : error.status >= 500
              ? 'internal_server_error'
              : 'validation_error'),
      message:
        error.status === 401
          ? 'API token is invalid.'
          : error.status === 429
            ? 'This request exceeds the number of requests allowed. Slow down and try again.'
            : error.message,
      request_id: requestId(),
    }),
    rateLimitCode: 'rate_limited',
    // "Retry-After … an integer number of seconds"; a test's own value replaces this one.
    rateLimitHeaders: () => ({ 'retry-after': '1' }),
  });
  const now = () => fake.now();

  const userRef = { object: 'user', id: 'b5f1c2d3-0000-4000-8000-000000000001' };
  const database = () => ({
    object: 'database',
    id: NOTION_DATABASE_ID,
    created_time: '2020-01-01T00:00:00.000Z',
    last_edited_time: '2020-01-01T00:00:00.000Z',
    created_by: userRef,
    last_edited_by: userRef,
    title: richText('Roadmap'),
    description: [],
    icon: null,
    cover: null,
    is_inline: false,
    parent: { type: 'workspace', workspace: true },
    url: `https://www.notion.so/${NOTION_DATABASE_ID.replace(/-/g, '')}`,
    public_url: null,
    properties: Object.fromEntries(
      schema.map((property) => [
        property.name,
        {
          id: property.id,
          name: property.name,
          type: property.type,
          [property.type]: property.options
            ? { options: property.options }
            : property.type === 'formula'
              ? { expression: 'prop("Estimate") * 2' }
              : property.type === 'number'
                ? { format: 'number' }
                : {},
        },
      ]),
    ),
    archived: false,
    in_trash: false,
  });

  const checkDatabase = (id: string) => {
    if (id.replace(/-/g, '') !== NOTION_DATABASE_ID.replace(/-/g, ''))
      throw new FakeHttpError(
        404,
        `Could not find database with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
        'object_not_found',
      );
  };

  /** The formula's value, computed from the page as Notion would. */
  const computed = (page: Page) => {
    const properties = page.properties as Record<string, Record<string, unknown>>;
    const estimate = properties.Estimate.number as number | null;
    properties.Score.formula = { type: 'number', number: estimate === null ? null : estimate * 2 };
  };

  const setProperties = (page: Page, properties: unknown) => {
    if (properties === undefined) return;
    if (!properties || typeof properties !== 'object') throw invalid('body.properties should be an object.');
    const current = page.properties as Record<string, Record<string, unknown>>;
    const next: Record<string, Record<string, unknown>> = {};
    for (const [name, value] of Object.entries(properties)) {
      const property = schema.find((p) => p.name === name || p.id === name);
      if (!property) throw invalid(`${name} is not a property that exists.`);
      next[property.name] = {
        id: property.id,
        type: property.type,
        [property.type]: propertyValue(property, value),
      };
    }
    Object.assign(current, next);
    computed(page);
  };

  const blank = (modifiedMs: number, title: string): Page => {
    const id = randomUUID();
    const time = editTime(modifiedMs);
    const properties: Record<string, unknown> = {};
    for (const property of schema) {
      const empty: Record<string, unknown> = {
        title: richText(title),
        rich_text: [],
        number: null,
        select: null,
        status: property.options?.[0],
        multi_select: [],
        date: null,
        checkbox: false,
        url: null,
        people: [],
        formula: { type: 'number', number: null },
        created_time: time,
        last_edited_time: time,
      };
      properties[property.name] = {
        id: property.id,
        type: property.type,
        [property.type]: empty[property.type],
      };
    }
    return {
      object: 'page',
      id,
      created_time: time,
      last_edited_time: time,
      created_by: userRef,
      last_edited_by: userRef,
      cover: null,
      icon: null,
      parent: { type: 'database_id', database_id: NOTION_DATABASE_ID },
      archived: false,
      in_trash: false,
      properties,
      url: `https://www.notion.so/${id.replace(/-/g, '')}`,
      public_url: null,
    };
  };

  const add = (page: Page, modifiedMs: number) => {
    pages.add(page.id, page, Math.floor(modifiedMs / 60_000) * 60_000);
    return page;
  };

  /** A new version of the page, edited at `ms` (kept to the minute). */
  const edit = (id: string, ms: number, apply: (page: Page) => void, visibleFromMs?: number) =>
    pages.change(
      id,
      Math.floor(ms / 60_000) * 60_000,
      (page) => {
        apply(page);
        page.last_edited_time = editTime(ms);
        (page.properties as Record<string, Record<string, unknown>>)['Last edited'].last_edited_time =
          page.last_edited_time;
      },
      { now: now(), visibleFromMs },
    );

  const pageOf = (id: string): Page => {
    const page = pages.get(id);
    if (!page)
      throw new FakeHttpError(
        404,
        `Could not find page with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
        'object_not_found',
      );
    return page;
  };

  /** A timestamp filter, a `last_edited_time`/`created_time` property filter, or `and`/`or` of them. */
  const timestampTest = (filter: unknown): ((page: Page) => boolean) => {
    if (filter === undefined) return () => true;
    const f = filter as Record<string, unknown>;
    if (Array.isArray(f.and) || Array.isArray(f.or)) {
      const tests = ((f.and ?? f.or) as unknown[]).map(timestampTest);
      return Array.isArray(f.and)
        ? (page) => tests.every((test) => test(page))
        : (page) => tests.some((test) => test(page));
    }
    let field: string;
    if (f.timestamp === 'last_edited_time' || f.timestamp === 'created_time') field = f.timestamp;
    else if (typeof f.property === 'string') {
      const property = schema.find((p) => p.name === f.property || p.id === f.property);
      if (!property) throw invalid(`Could not find property with name or id: ${f.property}`);
      if (property.type !== 'last_edited_time' && property.type !== 'created_time')
        throw invalid('body failed validation: the fake filters on timestamps only.');
      field = property.type;
    } else throw invalid('body failed validation: body.filter is not a filter the fake serves.');
    const condition = (f[field] ?? {}) as Record<string, unknown>;
    const [operator, ...others] = Object.keys(condition);
    if (!operator || others.length) throw invalid(`body.filter.${field} should have exactly one condition.`);
    const relative: Record<string, number> = {
      past_week: 7 * 86_400_000,
      past_month: 30 * 86_400_000,
      past_year: 365 * 86_400_000,
    };
    if (relative[operator] !== undefined)
      return (page) => Date.parse(String(page[field])) >= now() - relative[operator];
    if (operator === 'is_empty') return () => false;
    if (operator === 'is_not_empty') return () => true;
    const at = Date.parse(String(condition[operator]));
    if (Number.isNaN(at))
      throw invalid(`body.filter.${field}.${operator} should be a valid ISO 8601 date string.`);
    const compare: Record<string, (time: number) => boolean> = {
      on_or_after: (time) => time >= at,
      after: (time) => time > at,
      before: (time) => time < at,
      on_or_before: (time) => time <= at,
      equals: (time) => time === at,
    };
    if (!compare[operator]) throw invalid(`body.filter.${field}.${operator} is not a date condition.`);
    return (page) => compare[operator](Date.parse(String(page[field])));
  };

  fake.router.use(async (ctx, next) => {
    if (!ctx.get('notion-version'))
      throw new FakeHttpError(
        400,
        'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.',
        'missing_version',
      );
    await next();
  });

  fake.router.post('/v1/databases/:id/query', (ctx: Context) => {
    checkDatabase(ctx.params.id);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const pageSize = body.page_size === undefined ? 100 : Number(body.page_size);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
      throw invalid(
        `body failed validation: body.page_size should be ≤ \`100\`, instead was \`${String(body.page_size)}\`.`,
      );
    fake.logListing(ctx, { object: NOTION_DATABASE_ID, pageSize, maxPageSize: 100 });
    const test = timestampTest(body.filter);
    const sorts =
      (body.sorts as { timestamp?: string; property?: string; direction?: string }[] | undefined) ?? [];
    // `in_trash` (and its deprecated alias `archived`): `true` lists only the pages in the trash,
    // `false` or absent only the others.
    for (const flag of ['in_trash', 'archived'] as const)
      if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
        throw invalid(
          `body failed validation: body.${flag} should be a boolean, instead was \`${JSON.stringify(body[flag])}\`.`,
        );
    const trashed = (body.in_trash ?? body.archived) === true;
    const list = pages
      .listed(now())
      .map((version) => version.record)
      .filter((page) => page.in_trash === trashed && test(page));
    for (const sort of [...sorts].reverse()) {
      const property = sort.property && schema.find((p) => p.name === sort.property);
      const field =
        sort.timestamp ??
        (property && (property.type === 'last_edited_time' || property.type === 'created_time')
          ? property.type
          : undefined);
      if (!field) throw invalid('body failed validation: the fake sorts on timestamps only.');
      const sign = sort.direction === 'descending' ? -1 : 1;
      list.sort((a, b) => sign * (Date.parse(String(a[field])) - Date.parse(String(b[field]))));
    }
    let start = 0;
    if (body.start_cursor !== undefined) {
      start = list.findIndex((page) => page.id === body.start_cursor);
      if (start < 0) throw invalid('body failed validation: body.start_cursor should be a valid cursor.');
    }
    const results = list.slice(start, start + pageSize);
    const more = start + pageSize < list.length;
    ctx.body = {
      object: 'list',
      results,
      next_cursor: more ? list[start + pageSize].id : null,
      has_more: more,
      type: 'page_or_database',
      page_or_database: {},
      request_id: requestId(),
    };
  });

  fake.router.get('/v1/databases/:id', (ctx: Context) => {
    checkDatabase(ctx.params.id);
    ctx.body = database();
  });

  fake.router.get('/v1/pages/:id', (ctx: Context) => {
    // A page in the trash is still answered, flagged `archived` / `in_trash`.
    ctx.body = pageOf(ctx.params.id);
  });

  fake.router.post('/v1/pages', (ctx: Context) => {
    const body = (ctx.request.body ?? {}) as { parent?: { database_id?: unknown }; properties?: unknown };
    if (typeof body.parent?.database_id !== 'string')
      throw invalid('body failed validation: body.parent.database_id should be defined.');
    checkDatabase(body.parent.database_id);
    const page = blank(now(), '');
    setProperties(page, body.properties ?? {});
    add(page, now());
    ctx.body = page;
  });

  fake.router.patch('/v1/pages/:id', (ctx: Context) => {
    const page = pageOf(ctx.params.id);
    const body = (ctx.request.body ?? {}) as { properties?: unknown; archived?: unknown; in_trash?: unknown };
    if (page.archived && body.archived !== false && body.in_trash !== false)
      throw invalid("Can't edit block that is archived. You must unarchive the block before editing.");
    const probe = structuredClone(page);
    setProperties(probe, body.properties);
    edit(page.id, now(), (stored) => {
      setProperties(stored, body.properties);
      for (const flag of ['archived', 'in_trash'] as const) {
        if (typeof body[flag] === 'boolean') stored.archived = stored.in_trash = body[flag];
      }
    });
    ctx.body = page;
  });

  await fake.start();

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    requests: fake.requests,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    setClock: (clock) => fake.setClock(clock),
    seed(_object, modifiedTimes) {
      return modifiedTimes.map((ms, index) => add(blank(ms, `Task ${index + 1}`), ms).id);
    },
    touch(_object, id, modifiedMs, options) {
      pageOf(id);
      edit(id, modifiedMs, () => undefined, options?.visibleFromMs);
    },
    remove(_object, id, atMs) {
      pageOf(id);
      edit(id, atMs, (page) => {
        page.archived = page.in_trash = true;
      });
    },
    stored(_object, id) {
      const page = pages.get(id);
      return page && !page.archived ? page : undefined;
    },
    stop: () => fake.stop(),
  };
}
