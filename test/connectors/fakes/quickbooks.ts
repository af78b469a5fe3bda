import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for the QuickBooks Online Accounting API v3
 * (https://developer.intuit.com/app/developer/qbo/docs/develop/explore-the-quickbooks-online-api/data-queries,
 * .../learn/explore-the-quickbooks-online-api/change-data-capture, the Customer and Invoice entity
 * references, .../develop/troubleshooting/error-codes), answering as they document:
 *
 * - OAuth bearer tokens; every path sits under `/v3/company/{realmId}` (the company, given at
 *   connect time). A stale token answers 401 with a lower-case `fault` body.
 * - `GET /query?query=<statement>` (or `POST /query`, the statement as `application/text`):
 *   `SELECT * | count(*) | <fields> FROM <Entity> [WHERE a op v AND …] [ORDERBY f [ASC|DESC]]
 *   [STARTPOSITION n] [MAXRESULTS n]`; operators `=`, `<`, `>`, `<=`, `>=`, `IN (…)`, `LIKE '%…'`;
 *   conditions joined by `AND` only; strings in single quotes (`\'` escapes one). `STARTPOSITION` is
 *   1-based, `MAXRESULTS` defaults to 100 and cannot pass 1000. Answers `{QueryResponse: {<Entity>:
 *   [...], startPosition, maxResults}, time}`, `{QueryResponse: {}, time}` when nothing matched.
 *   Without `ORDERBY` the order is unspecified (by `Id` here).
 * - `MetaData.CreateTime` / `MetaData.LastUpdatedTime` are ISO 8601 to the second in the company's
 *   time zone (`2015-07-24T10:35:08-07:00`, Pacific here); queries filter and sort on
 *   `MetaData.LastUpdatedTime` (`Metadata.` is accepted too).
 * - Customers are never deleted: they are made inactive (`Active: false`), and a query leaves
 *   inactive ones out unless it names `Active`. Invoices are deleted (`POST /invoice?operation=delete`
 *   with `Id` and `SyncToken`), and then listed nowhere but CDC.
 * - `GET /cdc?entities=Customer,Invoice&changedSince=<time>` lists every entity changed since then
 *   (inclusive here), inactive customers included, deleted invoices as `{Id, status: "Deleted",
 *   domain, MetaData: {LastUpdatedTime}}`; `changedSince` at most 30 days back; at most 1000
 *   entities in one answer (400 beyond). Answers `{CDCResponse: [{QueryResponse: [{Customer: [...]},
 *   {Invoice: [...]}]}], time}`.
 * - Create: `POST /customer|invoice` (the entity as the body; a customer needs a unique
 *   `DisplayName` or a name part, an invoice a `CustomerRef` and `Line`); answers `{<Entity>, time}`.
 *   Update: the same `POST` with `Id` and the current `SyncToken` (400 "Stale Object Error", code
 *   5010, when it is not current); `sparse: true` changes only the members sent, otherwise writable
 *   members left out are cleared. `GET /customer/{id}`, `/invoice/{id}`.
 * - Errors `{Fault: {Error: [{Message, Detail, code, element?}], type}, time}`; throttling answers
 *   429 (`ThrottleExceeded`, 500 requests a minute per company).
 */

type Json = Record<string, unknown>;
type Row = StoredRecord<Json>;

const REALM = '9130350000000001';
const MAX_RESULTS = 1000;
const DEFAULT_RESULTS = 100;
const CDC_MAX = 1000;
const CDC_DAYS = 30;
const PER_MINUTE = 500;
const entities = ['Customer', 'Invoice'] as const;
type Entity = (typeof entities)[number];

/** Pacific time, as the company's clock writes it (daylight saving from March to November, roughly). */
function qboTime(ms: number): string {
  const date = new Date(Math.floor(ms / 1000) * 1000);
  const month = date.getUTCMonth();
  const offsetHours = month >= 2 && month <= 9 ? -7 : -8;
  const local = new Date(date.getTime() + offsetHours * 3_600_000).toISOString().slice(0, 19);
  return `${local}-0${-offsetHours}:00`;
}

class Fault extends FakeHttpError {
  constructor(
    status: number,
    message: string,
    readonly detail: string,
    code: string,
    readonly type = 'ValidationFault',
  ) {
    super(status, message, code);
  }
}
const queryFault = (detail: string) =>
  new Fault(400, 'Error parsing query', `QueryParserError: ${detail}`, '4000');

/** A parsed query statement. */
interface Query {
  select: '*' | 'count' | string[];
  entity: Entity;
  where: { field: string; op: string; value: unknown }[];
  orderBy: { field: string; descending: boolean }[];
  start: number;
  max: number;
}

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at];
    if (/\s/.test(char)) {
      at++;
    } else if (char === "'") {
      let value = '';
      at++;
      while (at < text.length && text[at] !== "'") {
        if (text[at] === '\\' && at + 1 < text.length) at++;
        value += text[at++];
      }
      if (text[at] !== "'") throw queryFault('unterminated string');
      at++;
      tokens.push(`'${value}`);
    } else if ('(),*'.includes(char)) {
      tokens.push(char);
      at++;
    } else if ('<>=!'.includes(char)) {
      let op = char;
      if (text[at + 1] === '=' || (char === '<' && text[at + 1] === '>')) op += text[++at];
      tokens.push(op);
      at++;
    } else {
      let word = '';
      while (at < text.length && !/[\s(),'<>=!]/.test(text[at])) word += text[at++];
      tokens.push(word);
    }
  }
  return tokens;
}

function literal(token: string | undefined): unknown {
  if (token === undefined) throw queryFault('a value is missing');
  if (token.startsWith("'")) return token.slice(1);
  if (/^(true|false)$/i.test(token)) return token.toLowerCase() === 'true';
  if (/^-?\d+(\.\d+)?$/.test(token)) return Number(token);
  throw queryFault(`Encountered "${token}"`);
}

function parseQuery(text: string): Query {
  const tokens = tokenize(text);
  let at = 0;
  const word = () => tokens[at]?.toUpperCase();
  const expect = (keyword: string) => {
    if (word() !== keyword) throw queryFault(`Encountered "${tokens[at] ?? '<EOF>'}", expected ${keyword}`);
    at++;
  };
  expect('SELECT');
  let select: Query['select'];
  if (tokens[at] === '*') {
    select = '*';
    at++;
  } else if (word() === 'COUNT') {
    at += 4; // count ( * )
    select = 'count';
  } else {
    const fields: string[] = [];
    while (word() !== 'FROM' && at < tokens.length) {
      if (tokens[at] !== ',') fields.push(tokens[at]);
      at++;
    }
    select = fields;
  }
  expect('FROM');
  const entity = entities.find((name) => name.toLowerCase() === tokens[at]?.toLowerCase());
  if (!entity) throw queryFault(`Unsupported entity "${tokens[at]}"`);
  at++;
  const query: Query = { select, entity, where: [], orderBy: [], start: 1, max: DEFAULT_RESULTS };
  if (word() === 'WHERE') {
    at++;
    for (;;) {
      const field = tokens[at++];
      const op = tokens[at++]?.toUpperCase();
      if (!field || !op) throw queryFault('an incomplete condition');
      if (op === 'IN') {
        if (tokens[at++] !== '(') throw queryFault('IN needs a list');
        const values: unknown[] = [];
        while (tokens[at] !== ')') {
          if (tokens[at] !== ',') values.push(literal(tokens[at]));
          at++;
          if (at >= tokens.length) throw queryFault('an unclosed list');
        }
        at++;
        query.where.push({ field, op, value: values });
      } else if (['=', '<', '>', '<=', '>=', 'LIKE'].includes(op)) {
        query.where.push({ field, op, value: literal(tokens[at++]) });
      } else throw queryFault(`Encountered "${op}"`);
      if (word() === 'AND') {
        at++;
        continue;
      }
      if (word() === 'OR') throw queryFault('OR is not supported');
      break;
    }
  }
  if (word() === 'ORDERBY' || (word() === 'ORDER' && tokens[at + 1]?.toUpperCase() === 'BY')) {
    at += word() === 'ORDER' ? 2 : 1;
    for (;;) {
      const field = tokens[at++];
      let descending = false;
      if (word() === 'ASC' || word() === 'DESC') descending = tokens[at++].toUpperCase() === 'DESC';
      query.orderBy.push({ field, descending });
      if (tokens[at] !== ',') break;
      at++;
    }
  }
  while (at < tokens.length) {
    const keyword = word();
    const value = Number(tokens[at + 1]);
    if ((keyword !== 'STARTPOSITION' && keyword !== 'MAXRESULTS') || !Number.isInteger(value))
      throw queryFault(`Encountered "${tokens[at]}"`);
    if (keyword === 'STARTPOSITION') query.start = value;
    else query.max = value;
    at += 2;
  }
  if (query.max < 1 || query.max > MAX_RESULTS)
    throw new Fault(400, 'Invalid query', `MAXRESULTS must be between 1 and ${MAX_RESULTS}`, '4001');
  if (query.start < 1) throw new Fault(400, 'Invalid query', 'STARTPOSITION must be at least 1', '4001');
  return query;
}

export { REALM as QUICKBOOKS_REALM };

export async function startFakeQuickbooks(): Promise<ConformanceFake> {
  const stores: Record<Entity, RecordStore<Json>> = {
    Customer: new RecordStore(),
    Invoice: new RecordStore(),
  };
  let nextId = 1;
  const budget = new RequestWindow(PER_MINUTE, 60_000);

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => {
      const time = qboTime(Date.now());
      if (error.status === 401)
        return {
          fault: {
            error: [
              {
                message: 'message=AuthenticationFailed; errorCode=003200; statusCode=401',
                detail: 'Token expired or invalid',
                code: '3200',
              },
            ],
            type: 'AUTHENTICATION',
          },
          time,
        };
      const fault = error instanceof Fault ? error : undefined;
      const message =
        error.status === 429 ? 'message=ThrottleExceeded; errorCode=003001; statusCode=429' : error.message;
      return {
        Fault: {
          Error: [
            {
              Message: message,
              Detail: fault?.detail ?? (error.status === 429 ? 'Request rate limit exceeded' : error.message),
              code: error.code ?? (error.status === 429 ? '3001' : error.status >= 500 ? '10000' : '2020'),
            },
          ],
          type: fault?.type ?? (error.status >= 500 ? 'SystemFault' : 'ValidationFault'),
        },
        time,
      };
    },
  });
  const now = () => fake.now();
  const router = fake.router;

  // 500 requests a minute per company, counted on real time.
  router.use(async (ctx, next) => {
    const taken = budget.take();
    if (!taken.allowed)
      throw new FakeHttpError(429, 'ThrottleExceeded', '3001', {
        'Retry-After': String(taken.retryAfterSeconds),
      });
    const realm = /^\/v3\/company\/([^/]+)\//.exec(ctx.path)?.[1];
    if (realm !== undefined && realm !== REALM)
      throw new Fault(
        403,
        'ApplicationAuthorizationFailed',
        `The realm ${realm} is not authorized`,
        '003100',
        'SecurityFault',
      );
    await next();
  });

  const entityOf = (name: string): Entity => {
    const entity = entities.find((candidate) => candidate.toLowerCase() === name.toLowerCase());
    if (!entity) throw new Fault(400, 'Unsupported Operation', `Operation ${name} is not supported.`, '500');
    return entity;
  };
  const valueAt = (row: Row, field: string): unknown => {
    const path = field.replace(/^Metadata\./i, 'MetaData.').split('.');
    if (path[0] === 'MetaData' && path[1] === 'LastUpdatedTime') return row.modifiedMs;
    if (path[0] === 'MetaData' && path[1] === 'CreateTime')
      return Date.parse(String((row.record.MetaData as Json).CreateTime));
    let value: unknown = row.record;
    for (const part of path) value = (value as Json | undefined)?.[part];
    // A reference compares by its value (`CustomerRef = '12'`).
    if (value && typeof value === 'object' && 'value' in value) return (value as Json).value;
    return value;
  };
  const comparable = (field: string, value: unknown) =>
    /Time$|Date$/.test(field) && typeof value === 'string' ? Date.parse(value) : value;
  const holds = (row: Row, condition: Query['where'][number]) => {
    const actual = valueAt(row, condition.field);
    const wanted = comparable(condition.field, condition.value);
    const left =
      typeof wanted === 'number' && typeof actual === 'string' && /^-?\d+$/.test(actual)
        ? Number(actual)
        : actual;
    switch (condition.op) {
      case '=':
        return left === wanted;
      case '<':
        return (left as number) < (wanted as number);
      case '>':
        return (left as number) > (wanted as number);
      case '<=':
        return (left as number) <= (wanted as number);
      case '>=':
        return (left as number) >= (wanted as number);
      case 'IN':
        return (condition.value as unknown[])
          .map((value) => comparable(condition.field, value))
          .includes(left);
      default: {
        const pattern = String(condition.value)
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          .replace(/%/g, '.*');
        return new RegExp(`^${pattern}$`, 'i').test(String(actual));
      }
    }
  };

  const runQuery = (ctx: Context, text: string) => {
    const query = parseQuery(text);
    if (query.select !== 'count')
      fake.logListing(ctx, { object: query.entity, pageSize: query.max, maxPageSize: MAX_RESULTS });
    const namesActive = query.where.some((condition) => condition.field === 'Active');
    const rows = stores[query.entity]
      .live()
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => namesActive || row.record.Active !== false)
      .filter((row) => query.where.every((condition) => holds(row, condition)));
    const order = query.orderBy.length ? query.orderBy : [{ field: 'Id', descending: false }];
    rows.sort((a, b) => {
      for (const { field, descending } of order) {
        const [x, y] = [valueAt(a, field), valueAt(b, field)].map((value) =>
          field === 'Id' ? Number(value) : (value as number | string),
        );
        if (x !== y) return (x! < y! ? -1 : 1) * (descending ? -1 : 1);
      }
      return Number(a.record.Id) - Number(b.record.Id);
    });
    if (query.select === 'count') return { QueryResponse: { totalCount: rows.length }, time: qboTime(now()) };
    const page = rows.slice(query.start - 1, query.start - 1 + query.max);
    const fields = query.select === '*' ? undefined : query.select;
    const shown = page.map((row) =>
      fields
        ? Object.fromEntries(
            Object.entries(row.record).filter(
              ([name]) =>
                fields.includes(name) || ['Id', 'SyncToken', 'MetaData', 'domain', 'sparse'].includes(name),
            ),
          )
        : row.record,
    );
    return {
      QueryResponse: shown.length
        ? { [query.entity]: shown, startPosition: query.start, maxResults: shown.length }
        : {},
      time: qboTime(now()),
    };
  };

  router.get('/v3/company/:realmId/query', (ctx) => {
    if (typeof ctx.query.query !== 'string') throw queryFault('the query parameter is missing');
    ctx.body = runQuery(ctx, ctx.query.query);
  });
  router.post('/v3/company/:realmId/query', async (ctx) => {
    const text = typeof ctx.request.body === 'string' ? ctx.request.body : await rawText(ctx);
    ctx.body = runQuery(ctx, text);
  });

  router.get('/v3/company/:realmId/cdc', (ctx) => {
    const names = String(ctx.query.entities ?? '')
      .split(',')
      .filter(Boolean);
    if (!names.length) throw new Fault(400, 'Invalid request', 'entities is required', '2020');
    const wanted = names.map(entityOf);
    const since = Date.parse(String(ctx.query.changedSince ?? ''));
    if (Number.isNaN(since))
      throw new Fault(400, 'Invalid request', 'changedSince is required (ISO 8601)', '2020');
    if (since < now() - CDC_DAYS * 86_400_000)
      throw new Fault(
        400,
        'Invalid request',
        `changedSince must be within the last ${CDC_DAYS} days`,
        '2020',
      );
    const responses = wanted.map((entity) => {
      const changed = [...stores[entity].rows.values()]
        .filter((row) => (row.deleted ? row.deletedMs! : (row.visibleFromMs ?? row.modifiedMs)) <= now())
        .filter((row) => row.modifiedMs >= since)
        .sort((a, b) => a.modifiedMs - b.modifiedMs || Number(a.record.Id) - Number(b.record.Id))
        .map((row) =>
          row.deleted
            ? {
                domain: 'QBO',
                status: 'Deleted',
                Id: row.record.Id,
                MetaData: { LastUpdatedTime: qboTime(row.deletedMs!) },
              }
            : row.record,
        );
      return changed;
    });
    const total = responses.reduce((sum, list) => sum + list.length, 0);
    if (total > CDC_MAX)
      throw new Fault(
        400,
        'Invalid request',
        `The response would hold more than ${CDC_MAX} entities; narrow changedSince`,
        '2020',
      );
    ctx.body = {
      CDCResponse: [
        {
          QueryResponse: wanted.map((entity, index) =>
            responses[index].length
              ? {
                  [entity]: responses[index],
                  startPosition: 1,
                  maxResults: responses[index].length,
                  totalCount: responses[index].length,
                }
              : {},
          ),
        },
      ],
      time: qboTime(now()),
    };
  });

  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = Math.floor(ms / 1000) * 1000;
    row.visibleFromMs = visibleFromMs;
    const meta = row.record.MetaData as Json;
    meta.LastUpdatedTime = qboTime(ms);
    row.record.SyncToken = String(Number(row.record.SyncToken) + 1);
  };
  const readOnly = [
    'Id',
    'SyncToken',
    'MetaData',
    'domain',
    'sparse',
    'Balance',
    'FullyQualifiedName',
    'TotalAmt',
    'DocNumber',
  ];
  const defaults: Record<Entity, Json> = {
    Customer: {
      Title: null,
      GivenName: null,
      MiddleName: null,
      FamilyName: null,
      CompanyName: null,
      DisplayName: null,
      PrimaryEmailAddr: null,
      PrimaryPhone: null,
      Notes: null,
      Active: true,
      Taxable: false,
      Job: false,
      BillWithParent: false,
      Balance: 0,
      CurrencyRef: { value: 'USD', name: 'United States Dollar' },
      PreferredDeliveryMethod: 'Print',
    },
    Invoice: {
      TxnDate: null,
      CustomerRef: null,
      Line: [],
      CustomerMemo: null,
      PrivateNote: null,
      DueDate: null,
      Balance: 0,
      TotalAmt: 0,
      CurrencyRef: { value: 'USD', name: 'United States Dollar' },
    },
  };
  const derive = (entity: Entity, record: Json) => {
    if (entity === 'Customer') {
      if (!record.DisplayName)
        record.DisplayName =
          [record.GivenName, record.FamilyName].filter(Boolean).join(' ') || record.CompanyName || null;
      record.FullyQualifiedName = record.DisplayName;
    } else {
      const total = (record.Line as Json[]).reduce((sum, line) => sum + Number(line.Amount ?? 0), 0);
      record.TotalAmt = total;
      record.Balance = total;
    }
  };
  const check = (entity: Entity, record: Json, id?: string) => {
    if (entity === 'Customer') {
      if (!record.DisplayName)
        throw new Fault(
          400,
          'Required param missing, need to supply the required value for the API',
          'Required parameter DisplayName or a name part is missing in the request',
          '2020',
          'ValidationFault',
        );
      const taken = stores.Customer.live().find(
        (row) => row.record.DisplayName === record.DisplayName && row.record.Id !== id,
      );
      if (taken)
        throw new Fault(
          400,
          'Duplicate Name Exists Error',
          `The name supplied already exists. : Id=${String(taken.record.Id)}`,
          '6240',
        );
    } else {
      const customer = (record.CustomerRef as Json | null)?.value;
      if (!customer || !stores.Customer.get(String(customer)))
        throw new Fault(
          400,
          'Invalid Reference Id',
          'Invalid Reference Id : Customer assigned to this transaction has been deleted or does not exist',
          '2500',
        );
      if (!Array.isArray(record.Line) || !record.Line.length)
        throw new Fault(
          400,
          'Required param missing, need to supply the required value for the API',
          'Required parameter Line is missing in the request',
          '2020',
        );
    }
  };
  const create = (entity: Entity, values: Json, ms: number): Row => {
    const id = String(nextId++);
    const record: Json = {
      ...structuredClone(defaults[entity]),
      ...values,
      Id: id,
      SyncToken: '0',
      domain: 'QBO',
      sparse: false,
      MetaData: { CreateTime: qboTime(ms), LastUpdatedTime: qboTime(ms) },
    };
    if (entity === 'Invoice') {
      record.DocNumber = String(1000 + Number(id));
      record.TxnDate ??= qboTime(ms).slice(0, 10);
    }
    derive(entity, record);
    check(entity, record);
    stores[entity].put(id, record, Math.floor(ms / 1000) * 1000);
    return stores[entity].rows.get(id)!;
  };

  const bodyOf = (ctx: Context): Json => {
    const body = ctx.request.body as Json | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new Fault(
        400,
        'Request has invalid or unsupported property',
        'The request body must be a JSON object',
        '2010',
      );
    return body;
  };

  router.post('/v3/company/:realmId/:entity', (ctx) => {
    const entity = entityOf(ctx.params.entity);
    const body = bodyOf(ctx);
    const operation = ctx.query.operation;
    if (body.Id === undefined) {
      if (operation !== undefined) throw new Fault(400, 'Required param missing', 'Id is required', '2020');
      const values = Object.fromEntries(Object.entries(body).filter(([name]) => !readOnly.includes(name)));
      ctx.body = { [entity]: create(entity, values, now()).record, time: qboTime(now()) };
      return;
    }
    const row = stores[entity].get(String(body.Id));
    if (!row)
      throw new Fault(
        400,
        'Object Not Found',
        `Object Not Found : Something you're trying to use has been made inactive or is not found.`,
        '610',
      );
    if (String(body.SyncToken) !== row.record.SyncToken)
      throw new Fault(
        400,
        'Stale Object Error',
        `Stale Object Error : You and another user were working on the same thing. SyncToken ${String(body.SyncToken)} is not current.`,
        '5010',
      );
    if (operation === 'delete') {
      if (entity === 'Customer')
        throw new Fault(
          400,
          'Unsupported Operation',
          'Operation Delete is not supported for Customer; make it inactive.',
          '500',
        );
      stores[entity].remove(row.record.Id as string, now());
      ctx.body = { [entity]: { domain: 'QBO', status: 'Deleted', Id: row.record.Id }, time: qboTime(now()) };
      return;
    }
    if (operation !== undefined && operation !== 'update')
      throw new Fault(
        400,
        'Unsupported Operation',
        `Operation ${String(operation)} is not supported.`,
        '500',
      );
    const values = Object.fromEntries(Object.entries(body).filter(([name]) => !readOnly.includes(name)));
    const updated: Json =
      body.sparse === true
        ? { ...row.record, ...values }
        : { ...row.record, ...structuredClone(defaults[entity]), ...values };
    derive(entity, updated);
    check(entity, updated, String(row.record.Id));
    row.record = {
      ...updated,
      Id: row.record.Id,
      SyncToken: row.record.SyncToken,
      MetaData: row.record.MetaData,
      domain: 'QBO',
      sparse: false,
    };
    stamp(row, now());
    ctx.body = { [entity]: row.record, time: qboTime(now()) };
  });

  router.get('/v3/company/:realmId/:entity/:id', (ctx) => {
    const entity = entityOf(ctx.params.entity);
    const row = stores[entity].get(ctx.params.id);
    if (!row)
      throw new Fault(
        400,
        'Object Not Found',
        `Object Not Found : Something you're trying to use has been made inactive or is not found.`,
        '610',
      );
    ctx.body = { [entity]: row.record, time: qboTime(now()) };
  });

  // The company's first customer, which invoices are made out to.
  create('Customer', { DisplayName: 'Analytical Engines Ltd' }, Date.UTC(2020, 0, 1));

  await fake.start();

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const entity = entityOf(object);
        const n = nextId;
        if (entity === 'Customer')
          return String(
            create(
              entity,
              {
                GivenName: `First${n}`,
                FamilyName: `Last${n}`,
                CompanyName: `Org ${n}`,
                PrimaryEmailAddr: { Address: `c${n}@example.com` },
              },
              ms,
            ).record.Id,
          );
        const customer = stores.Customer.get('1')!;
        return String(
          create(
            entity,
            {
              CustomerRef: { value: customer.record.Id, name: customer.record.DisplayName },
              Line: [
                {
                  Amount: 100,
                  DetailType: 'SalesItemLineDetail',
                  SalesItemLineDetail: { ItemRef: { value: '1', name: 'Services' } },
                },
              ],
              PrivateNote: `Seeded ${n}`,
            },
            ms,
          ).record.Id,
        );
      }),
    touch(object, id, modifiedMs, options) {
      const row = stores[entityOf(object)].get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      row.record[object === 'Invoice' ? 'PrivateNote' : 'Notes'] = `Edited at ${modifiedMs}`;
      stamp(row, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      const entity = entityOf(object);
      if (entity === 'Invoice') {
        stores.Invoice.remove(id, atMs);
        return;
      }
      // Customers are made inactive: a query leaves them out, CDC lists them with Active false.
      const row = stores.Customer.get(id);
      if (!row) return;
      row.record.Active = false;
      stamp(row, atMs);
    },
    stored: (object, id) => {
      const row = stores[entityOf(object)].get(id);
      return row && row.record.Active !== false ? row.record : undefined;
    },
  });
}

async function rawText(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
