import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for NetSuite's REST web services (https://docs.oracle.com/en/cloud/saas/netsuite/
 * ns-online-help/chapter_1540391670.html), written from its reference (SuiteQL through REST:
 * section_157909186990; REST record service: section_1545141395, records, errors, concurrency):
 *
 * - The account's host (`https://{accountId}.suitetalk.api.netsuite.com`; the fake's `url` is its
 *   origin), OAuth 2.0 access tokens as `Authorization: Bearer`.
 * - Reads: `POST /services/rest/query/v1/suiteql?limit=&offset=` with `{"q": "<SuiteQL>"}` and the
 *   header `Prefer: transient` (refused without it). `limit` at most 1000 (the default), `offset`
 *   from 0; no more than 100,000 results reachable. The answer: `{links: [{rel, href}], count,
 *   hasMore, items, offset, totalResults}`, `next` in `links` while `hasMore`. Positions are counted
 *   per request: a row that changes or goes between pages shifts the rest.
 * - SuiteQL as the fake understands it (a subset of NetSuite's, refused beyond with a 400):
 *   `SELECT * | col, … | TO_CHAR(col, 'fmt') [AS] alias FROM customer|contact|deletedrecord
 *   [WHERE cond AND …] [ORDER BY col [ASC|DESC], …]`, conditions `col op value` with `=`, `<>`,
 *   `!=`, `<`, `<=`, `>`, `>=`, values numbers, `'text'`, `TO_TIMESTAMP('…', 'YYYY-MM-DD HH24:MI:SS')`
 *   or `TO_DATE('…', 'YYYY-MM-DD')`. Columns are lower case; every value comes back as text.
 *   Dates and times come back in the account's date format, without the time (`1/15/2024`):
 *   `TO_CHAR(lastmodifieddate, 'YYYY-MM-DD HH24:MI:SS')` gives the time, to the second. The
 *   account's time zone is UTC here (a real account compares and writes its own: verify).
 * - `lastmodifieddate` (to the second) is when the record last changed. A deleted customer or
 *   contact leaves the tables; `deletedrecord` lists it (`recordid`, `recordtype` `customer` or
 *   `contact`, `deleteddate`, `name`).
 * - Writes: `POST /services/rest/record/v1/{customer|contact}` (204, the new record's URL in
 *   `Location`), `PATCH …/{id}` (204; only the fields sent change), `DELETE …/{id}` (204), `GET …/{id}`
 *   (the record with camelCase fields: `companyName`, `lastModifiedDate` ISO 8601). Customers need
 *   `companyName` (a company) and `subsidiary`; contacts `firstName` or `lastName`.
 * - Errors `{type, title, status, "o:errorDetails": [{detail, "o:errorCode"}]}`; at most 15 requests
 *   in flight per account, past that 429 `CONCURRENCY_LIMIT_EXCEEDED`.
 */

type RecordType = 'customer' | 'contact';
type Values = Record<string, string | number | boolean | null | { id: string }>;
interface Entity {
  id: number;
  values: Values;
  createdMs: number;
}
type Row = StoredRecord<Entity>;

const LIMIT_MAX = 1000;
const REACHABLE = 100_000;
const IN_FLIGHT = 15;

/** camelCase REST fields → SuiteQL columns. */
const columns: Record<RecordType, Record<string, string>> = {
  customer: {
    entityId: 'entityid',
    companyName: 'companyname',
    email: 'email',
    phone: 'phone',
    comments: 'comments',
    isInactive: 'isinactive',
    subsidiary: 'subsidiary',
  },
  contact: {
    entityId: 'entityid',
    firstName: 'firstname',
    lastName: 'lastname',
    email: 'email',
    phone: 'phone',
    title: 'title',
    company: 'company',
    isInactive: 'isinactive',
    subsidiary: 'subsidiary',
  },
};

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const accountDate = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()}`;
};
const two = (n: number) => String(n).padStart(2, '0');

/** Oracle-style TO_CHAR for the format elements NetSuite's examples use. */
function toChar(ms: number, format: string): string {
  const d = new Date(ms);
  return format.replace(/"([^"]*)"|YYYY|MM|DD|HH24|MI|SS/g, (token, literal: string | undefined) => {
    if (literal !== undefined) return literal;
    switch (token) {
      case 'YYYY':
        return String(d.getUTCFullYear());
      case 'MM':
        return two(d.getUTCMonth() + 1);
      case 'DD':
        return two(d.getUTCDate());
      case 'HH24':
        return two(d.getUTCHours());
      case 'MI':
        return two(d.getUTCMinutes());
      default:
        return two(d.getUTCSeconds());
    }
  });
}

function badQuery(detail: string): FakeHttpError {
  return Object.assign(new FakeHttpError(400, detail, 'INVALID_PARAMETER'), {});
}

/** `TO_TIMESTAMP('2024-01-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS')`, `TO_DATE(...)`, `'x'`, `12`. */
function literal(text: string): string | number {
  const call = /^TO_(TIMESTAMP|DATE)\(\s*'([^']*)'\s*,\s*'([^']*)'\s*\)$/i.exec(text);
  if (call) {
    const [, kind, value, format] = call;
    const expected = kind.toUpperCase() === 'DATE' ? 'YYYY-MM-DD' : 'YYYY-MM-DD HH24:MI:SS';
    const pattern =
      kind.toUpperCase() === 'DATE' ? /^\d{4}-\d{2}-\d{2}$/ : /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
    if (format.toUpperCase() !== expected || !pattern.test(value))
      throw badQuery(`Invalid date value '${value}' for format '${format}'.`);
    return Date.parse(`${value.replace(' ', 'T')}${value.length === 10 ? 'T00:00:00' : ''}Z`);
  }
  const quoted = /^'((?:[^']|'')*)'$/.exec(text);
  if (quoted) return quoted[1].replace(/''/g, "'");
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  throw badQuery(`Search error occurred: Invalid or unsupported search near '${text}'.`);
}

interface Query {
  table: RecordType | 'deletedrecord';
  select: { star: boolean; items: { column: string; format?: string; alias: string }[] };
  where: { column: string; op: string; value: string | number }[];
  order: { column: string; descending: boolean }[];
}

function parse(q: string): Query {
  const match =
    /^\s*SELECT\s+(.+?)\s+FROM\s+(\w+)(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+(.+?))?\s*;?\s*$/is.exec(q);
  if (!match) throw badQuery('Search error occurred: Invalid or unsupported search.');
  const [, selectText, tableText, whereText, orderText] = match;
  const table = tableText.toLowerCase();
  if (table !== 'customer' && table !== 'contact' && table !== 'deletedrecord')
    throw badQuery(`Search error occurred: Record '${tableText}' was not found.`);
  const items: Query['select']['items'] = [];
  let star = false;
  for (const part of selectText.split(/,(?![^(]*\))/).map((item) => item.trim())) {
    if (part === '*' || part.toLowerCase() === `${table}.*`) {
      star = true;
      continue;
    }
    const char = /^TO_CHAR\(\s*(\w+)\s*,\s*'([^']*)'\s*\)(?:\s+(?:AS\s+)?(\w+))?$/i.exec(part);
    if (char) {
      items.push({
        column: char[1].toLowerCase(),
        format: char[2],
        alias: (char[3] ?? char[1]).toLowerCase(),
      });
      continue;
    }
    const plain = /^(\w+)(?:\s+(?:AS\s+)?(\w+))?$/i.exec(part);
    if (!plain) throw badQuery(`Search error occurred: Invalid or unsupported search near '${part}'.`);
    items.push({ column: plain[1].toLowerCase(), alias: (plain[2] ?? plain[1]).toLowerCase() });
  }
  const where: Query['where'] = [];
  if (whereText) {
    if (/\bOR\b|\(\s*\w+\s*(<|>|=)/i.test(whereText.replace(/TO_(TIMESTAMP|DATE)\([^)]*\)/gi, '')))
      throw badQuery('Search error occurred: the fake understands conditions joined by AND only.');
    for (const condition of whereText.split(/\s+AND\s+/i)) {
      const parts = /^\s*(\w+)\s*(<=|>=|<>|!=|=|<|>)\s*(.+?)\s*$/.exec(condition);
      if (!parts) throw badQuery(`Search error occurred: Invalid or unsupported search near '${condition}'.`);
      where.push({ column: parts[1].toLowerCase(), op: parts[2], value: literal(parts[3]) });
    }
  }
  const order = (orderText ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const parts = /^(\w+)(?:\s+(ASC|DESC))?$/i.exec(item);
      if (!parts) throw badQuery(`Search error occurred: Invalid or unsupported search near '${item}'.`);
      return { column: parts[1].toLowerCase(), descending: parts[2]?.toUpperCase() === 'DESC' };
    });
  return { table: table as Query['table'], select: { star, items }, where, order };
}

export async function startFakeNetsuite(): Promise<ConformanceFake> {
  const stores: Record<RecordType, RecordStore<Entity>> = {
    customer: new RecordStore(),
    contact: new RecordStore(),
  };
  /** The version a listing shows until a late edit becomes visible. */
  const shown: Record<RecordType, Map<string, { values: Values; modifiedMs: number }>> = {
    customer: new Map(),
    contact: new Map(),
  };
  const deleted: { recordid: number; recordtype: RecordType; deletedMs: number; name: string }[] = [];
  let nextId = 100;
  let inFlight = 0;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      type: 'https://www.rfc-editor.org/rfc/rfc9110.html#section-15.5.1',
      title:
        error.status === 401 ? 'Unauthorized' : error.status === 429 ? 'Too Many Requests' : 'Bad Request',
      status: error.status,
      'o:errorDetails': [
        {
          detail:
            error.status === 401
              ? 'Invalid login attempt. For more details, see the Login Audit Trail in the NetSuite UI.'
              : error.status === 429
                ? 'Request blocked by the concurrency limit of the account.'
                : error.message,
          'o:errorCode':
            error.status === 401
              ? 'INVALID_LOGIN'
              : error.status === 429
                ? 'CONCURRENCY_LIMIT_EXCEEDED'
                : (error.code ?? (error.status === 404 ? 'NONEXISTENT_ID' : 'INVALID_PARAMETER')),
        },
      ],
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    inFlight++;
    try {
      if (inFlight > IN_FLIGHT) throw new FakeHttpError(429, 'concurrency', 'CONCURRENCY_LIMIT_EXCEEDED');
      await next();
    } finally {
      inFlight--;
    }
  });

  const nameOf = (type: RecordType, values: Values) =>
    type === 'customer'
      ? String(values.companyName ?? '')
      : `${values.firstName ?? ''} ${values.lastName ?? ''}`.trim();

  const create = (type: RecordType, values: Values, ms: number): Entity => {
    const id = nextId++;
    const entity: Entity = {
      id,
      values: { entityId: `${type === 'customer' ? 'CUS' : 'CON'}${id}`, isInactive: false, ...values },
      createdMs: ms,
    };
    stores[type].put(String(id), entity, wholeSecond(ms));
    return entity;
  };

  /** The row as SuiteQL sees it: lower-case columns, the time columns as ms. */
  const sqlRow = (type: RecordType, id: number, values: Values, createdMs: number, modifiedMs: number) => {
    const row: Record<string, string | number | null> = { id };
    for (const [field, column] of Object.entries(columns[type])) {
      const value = values[field];
      row[column] =
        value === undefined || value === null
          ? null
          : typeof value === 'object'
            ? value.id
            : typeof value === 'boolean'
              ? value
                ? 'T'
                : 'F'
              : value;
    }
    row.datecreated = wholeSecond(createdMs);
    row.lastmodifieddate = modifiedMs;
    return row;
  };
  const timeColumns = new Set(['datecreated', 'lastmodifieddate', 'deleteddate']);

  router.post('/services/rest/query/v1/suiteql', (ctx) => {
    if (!/transient/i.test(ctx.get('prefer')))
      throw badQuery('The request must include the header Prefer: transient.');
    const limit = ctx.query.limit === undefined ? LIMIT_MAX : Number(ctx.query.limit);
    const offset = ctx.query.offset === undefined ? 0 : Number(ctx.query.offset);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX)
      throw badQuery(`Invalid limit value: ${String(ctx.query.limit)}. Use a value from 1 to ${LIMIT_MAX}.`);
    if (!Number.isInteger(offset) || offset < 0)
      throw badQuery(`Invalid offset value: ${String(ctx.query.offset)}.`);
    if (offset >= REACHABLE) throw badQuery(`The offset may not exceed ${REACHABLE}.`);
    const body = (ctx.request.body ?? {}) as { q?: unknown };
    if (typeof body.q !== 'string') throw badQuery('The request body must be {"q": "<SuiteQL query>"}.');
    const query = parse(body.q);
    if (query.table !== 'deletedrecord')
      fake.logListing(ctx, { object: query.table, pageSize: limit, maxPageSize: LIMIT_MAX });
    let rows: Record<string, string | number | null>[];
    if (query.table === 'deletedrecord') {
      rows = deleted.map((entry) => ({
        recordid: entry.recordid,
        recordtype: entry.recordtype,
        deleteddate: entry.deletedMs,
        name: entry.name,
      }));
    } else {
      const type = query.table;
      rows = stores[type]
        .live()
        .map((row: Row) => {
          const visible = (row.visibleFromMs ?? row.modifiedMs) <= now();
          const earlier = shown[type].get(String(row.record.id));
          if (!visible && !earlier) return undefined;
          const version = visible ? { values: row.record.values, modifiedMs: row.modifiedMs } : earlier!;
          return sqlRow(type, row.record.id, version.values, row.record.createdMs, version.modifiedMs);
        })
        .filter((row): row is Record<string, string | number | null> => row !== undefined);
    }
    const known = new Set(rows.length ? Object.keys(rows[0]) : [...Object.values(columns.customer), 'id']);
    const check = (column: string) => {
      if (rows.length && !known.has(column))
        throw badQuery(`Search error occurred: Field '${column}' for record '${query.table}' was not found.`);
    };
    for (const condition of query.where) check(condition.column);
    for (const item of query.order) check(item.column);
    for (const item of query.select.items) check(item.column);
    const compare = (a: string | number | null, b: string | number | null) =>
      a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1;
    const matched = rows
      .filter((row) =>
        query.where.every(({ column, op, value }) => {
          const cell = row[column];
          if (cell === null) return false;
          const left = typeof value === 'number' && typeof cell === 'string' ? Number(cell) : cell;
          const order = compare(left, value);
          return op === '='
            ? order === 0
            : op === '<>' || op === '!='
              ? order !== 0
              : op === '<'
                ? order < 0
                : op === '<='
                  ? order <= 0
                  : op === '>'
                    ? order > 0
                    : order >= 0;
        }),
      )
      .sort((a, b) => {
        for (const { column, descending } of query.order) {
          const order = compare(a[column], b[column]);
          if (order) return descending ? -order : order;
        }
        return 0;
      });
    const reachable = matched.slice(0, REACHABLE);
    const page = reachable.slice(offset, offset + limit);
    const text = (column: string, value: string | number | null, format?: string) =>
      value === null
        ? null
        : timeColumns.has(column)
          ? format
            ? toChar(Number(value), format)
            : accountDate(Number(value))
          : String(value);
    const items = page.map((row) => {
      const item: Record<string, unknown> = { links: [] };
      if (query.select.star)
        for (const [column, value] of Object.entries(row)) item[column] = text(column, value);
      for (const { column, format, alias } of query.select.items)
        item[alias] = text(column, row[column], format);
      return item;
    });
    const self = (at: number) => {
      const url = new URL(`${ctx.protocol}://${ctx.host}${ctx.path}`);
      url.searchParams.set('limit', String(limit));
      url.searchParams.set('offset', String(at));
      return url.toString();
    };
    const hasMore = offset + limit < reachable.length;
    ctx.body = {
      links: [
        { rel: 'self', href: self(offset) },
        ...(hasMore ? [{ rel: 'next', href: self(offset + limit) }] : []),
      ],
      count: items.length,
      hasMore,
      items,
      offset,
      totalResults: matched.length,
    };
  });

  const typeOf = (ctx: Context): RecordType => {
    const type = ctx.params.type;
    if (type !== 'customer' && type !== 'contact')
      throw new FakeHttpError(404, `Record type '${type}' does not exist.`, 'NONEXISTENT_ID');
    return type;
  };
  const rowOf = (type: RecordType, id: string): Row => {
    const row = stores[type].get(id);
    if (!row)
      throw new FakeHttpError(
        404,
        `The record instance does not exist. Provide a valid record instance ID.`,
        'NONEXISTENT_ID',
      );
    return row;
  };
  const restRecord = (type: RecordType, row: Row, ctx?: Context) => ({
    links: ctx
      ? [
          {
            rel: 'self',
            href: `${ctx.protocol}://${ctx.host}/services/rest/record/v1/${type}/${row.record.id}`,
          },
        ]
      : [],
    id: String(row.record.id),
    ...row.record.values,
    dateCreated: new Date(wholeSecond(row.record.createdMs)).toISOString().replace('.000Z', 'Z'),
    lastModifiedDate: new Date(row.modifiedMs).toISOString().replace('.000Z', 'Z'),
  });
  const valuesOf = (type: RecordType, body: unknown): Values => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw badQuery('The request body must be a JSON object.');
    const values: Values = {};
    for (const [field, value] of Object.entries(body as Record<string, unknown>)) {
      if (['id', 'links', 'dateCreated', 'lastModifiedDate'].includes(field)) continue;
      if (!(field in columns[type]))
        throw Object.assign(
          new FakeHttpError(400, `Invalid field '${field}' for record '${type}'.`, 'USER_ERROR'),
        );
      if (field === 'subsidiary') {
        const id = (value as { id?: unknown } | null)?.id;
        if (typeof id !== 'string' && typeof id !== 'number')
          throw new FakeHttpError(400, 'subsidiary must be a reference {"id": "…"}.', 'USER_ERROR');
        values.subsidiary = { id: String(id) };
      } else if (field === 'isInactive') values.isInactive = value === true;
      else if (value === null || typeof value === 'string') values[field] = value;
      else throw new FakeHttpError(400, `Invalid value for field '${field}'.`, 'USER_ERROR');
    }
    return values;
  };

  router.post('/services/rest/record/v1/:type', (ctx) => {
    const type = typeOf(ctx);
    const values = valuesOf(type, ctx.request.body);
    if (type === 'customer' && (!values.companyName || !values.subsidiary))
      throw new FakeHttpError(
        400,
        'Please enter value(s) for: Company Name, Primary Subsidiary',
        'USER_ERROR',
      );
    if (type === 'contact' && !values.firstName && !values.lastName)
      throw new FakeHttpError(400, 'Please enter value(s) for: Name', 'USER_ERROR');
    const entity = create(type, values, now());
    ctx.set('Location', `${ctx.protocol}://${ctx.host}/services/rest/record/v1/${type}/${entity.id}`);
    ctx.status = 204;
  });
  router.get('/services/rest/record/v1/:type/:id', (ctx) => {
    const type = typeOf(ctx);
    ctx.body = restRecord(type, rowOf(type, ctx.params.id), ctx);
  });
  router.patch('/services/rest/record/v1/:type/:id', (ctx) => {
    const type = typeOf(ctx);
    const row = rowOf(type, ctx.params.id);
    const values = valuesOf(type, ctx.request.body);
    shown[type].delete(ctx.params.id);
    stores[type].put(
      ctx.params.id,
      { ...row.record, values: { ...row.record.values, ...values } },
      wholeSecond(now()),
    );
    ctx.status = 204;
  });
  router.delete('/services/rest/record/v1/:type/:id', (ctx) => {
    const type = typeOf(ctx);
    const row = rowOf(type, ctx.params.id);
    stores[type].rows.delete(ctx.params.id);
    deleted.push({
      recordid: row.record.id,
      recordtype: type,
      deletedMs: wholeSecond(now()),
      name: nameOf(type, row.record.values),
    });
    ctx.status = 204;
  });

  await fake.start();

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const type = object as RecordType;
        const n = nextId;
        const values: Values =
          type === 'customer'
            ? {
                companyName: `Company ${n}`,
                email: `billing${n}@example.com`,
                phone: '555-0100',
                subsidiary: { id: '1' },
              }
            : {
                firstName: `First${n}`,
                lastName: `Last${n}`,
                email: `c${n}@example.com`,
                title: 'Buyer',
                subsidiary: { id: '1' },
              };
        return String(create(type, values, ms).id);
      }),
    touch(object, id, modifiedMs, options) {
      const type = object as RecordType;
      const row = stores[type].get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      if (options?.visibleFromMs !== undefined)
        shown[type].set(id, { values: row.record.values, modifiedMs: row.modifiedMs });
      else shown[type].delete(id);
      const values = { ...row.record.values, phone: `555-${String(modifiedMs % 10_000).padStart(4, '0')}` };
      stores[type].put(id, { ...row.record, values }, wholeSecond(modifiedMs), options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      const type = object as RecordType;
      const row = stores[type].get(id);
      if (!row) return;
      stores[type].rows.delete(id);
      deleted.push({
        recordid: row.record.id,
        recordtype: type,
        deletedMs: wholeSecond(atMs),
        name: nameOf(type, row.record.values),
      });
    },
    stored(object, id) {
      const type = object as RecordType;
      const row = stores[type].get(id);
      return row && restRecord(type, row);
    },
  });
}
