import { createHash, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Xero's Accounting API (https://developer.xero.com/documentation/api/accounting/overview),
 * Contacts and Invoices, written from its reference, its OpenAPI document (github.com/XeroAPI/Xero-OpenAPI,
 * xero_accounting.yaml: getContacts, getInvoices, the Pagination schema, the ifModifiedSince and
 * pageSize parameters), its limits page (https://developer.xero.com/documentation/guides/oauth2/limits/)
 * and its dates page (https://developer.xero.com/documentation/api/accounting/types#dates):
 *
 * - OAuth2 bearer tokens, and every call names its organisation in `xero-tenant-id` (a 403 without).
 * - `GET /api.xro/2.0/Contacts|Invoices`: `page` (from 1) with `pageSize` (default 100, at most
 *   1000) answers `pagination: {page, pageSize, pageCount, itemCount}`; without `page` every record
 *   comes in one answer (and invoices without their line items). `order` ("UpdatedDateUTC ASC",
 *   any element; unordered otherwise), `where` (`UpdatedDateUTC>=DateTime(2024,01,01,00,00,00)`,
 *   `Name=="..."`, joined by `&&`). The `If-Modified-Since` header (ISO 8601, an offset or UTC,
 *   fractions allowed; or an HTTP date) keeps records modified after that instant, as HTTP's
 *   header means (strictly after: verify against the reference, which says "since").
 * - Records carry `UpdatedDateUTC` as `/Date(1573755038314+0000)/`: milliseconds, kept as such.
 * - Contacts are never deleted: `ContactStatus: "ARCHIVED"` (sent with a POST) hides them from
 *   listings unless `includeArchived=true`, where they show archived at the time they were archived.
 *   An invoice is deleted with `Status: "DELETED"` (a draft) and stays listed with that status.
 * - Writes: `PUT` creates, `POST` creates or updates (`/Contacts/{ContactID}`), the body
 *   `{Contacts: [...]}` or one record; the answer the envelope with the records. A contact needs a
 *   unique `Name`; an invoice a `Type` and a `Contact`. Elements it does not know are ignored.
 * - Errors: a 400 `{ErrorNumber: 10, Type: "ValidationException", Message, Elements: [{...,
 *   ValidationErrors: [{Message}]}]}`; 401/403/404/429 as `{Type, Title, Status, Detail}`. Every
 *   answer carries `X-DayLimit-Remaining`, `X-MinLimit-Remaining`, `X-AppMinLimit-Remaining`; a 429
 *   adds `Retry-After` and `X-Rate-Limit-Problem` (`minute`, `day`, `concurrent`). Enforced here:
 *   the 5 calls in progress at once; the 60 a minute and 5000 a day are counted in the headers only,
 *   so the suite's hundreds of calls do not take minutes.
 */

type Row = { record: Record<string, unknown>; modifiedMs: number; visibleFromMs?: number; previous?: Row };

const objects = ['Contacts', 'Invoices'] as const;
type XeroObject = (typeof objects)[number];
const idField: Record<XeroObject, string> = { Contacts: 'ContactID', Invoices: 'InvoiceID' };
const maxPageSize = 1000;
const defaultPageSize = 100;
const minuteLimit = 60;
const dayLimit = 5000;
const concurrentLimit = 5;

const writable: Record<XeroObject, string[]> = {
  Contacts: (
    'Name FirstName LastName EmailAddress ContactNumber AccountNumber ContactStatus CompanyNumber ' +
    'TaxNumber Website IsSupplier IsCustomer DefaultCurrency Addresses Phones'
  ).split(' '),
  Invoices:
    'Type Contact Reference Date DueDate Status LineAmountTypes LineItems CurrencyCode InvoiceNumber Url'.split(
      ' ',
    ),
};

const xeroDate = (ms: number) => `/Date(${ms}+0000)/`;
const guid = (seed: string) => {
  const hex = createHash('md5').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

function sinceHeader(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value) ? `${value}Z` : value;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms))
    throw new FakeHttpError(400, `The If-Modified-Since header is not a date: ${value}`, 'validation');
  return ms;
}

type Clause = (row: Row) => boolean;

/** The `where` clauses this fake models: times compared to `DateTime(...)`, text compared to "...". */
function parseWhere(where: string): Clause[] {
  return where
    .split(/&&|\bAND\b/)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const time =
        /^UpdatedDateUTC\s*(>=|<=|==|>|<)\s*DateTime\((\d{4}),\s*(\d{1,2}),\s*(\d{1,2})(?:,\s*(\d{1,2}),\s*(\d{1,2}),\s*(\d{1,2}))?\)$/.exec(
          part,
        );
      if (time) {
        const [, op, y, mo, d, h = '0', mi = '0', s = '0'] = time;
        const at = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
        return (row) => comparisons[op](row.modifiedMs, at);
      }
      const text = /^(\w+)\s*(==|!=)\s*"((?:[^"\\]|\\.)*)"$/.exec(part);
      if (text) {
        const [, field, op, raw] = text;
        const value = raw.replace(/\\(.)/g, '$1');
        return (row) => (String(row.record[field] ?? '') === value) === (op === '==');
      }
      throw new FakeHttpError(400, `Invalid where clause: ${part}`, 'validation');
    });
}

const comparisons: Record<string, (a: number, b: number) => boolean> = {
  '>=': (a, b) => a >= b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '<': (a, b) => a < b,
  '==': (a, b) => a === b,
};

export async function startFakeXero(tenantId: string): Promise<ConformanceFake> {
  const stores: Record<XeroObject, Map<string, Row>> = { Contacts: new Map(), Invoices: new Map() };
  let counter = 0;
  let inFlight = 0;
  const calls: number[] = [];
  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.code === 'validation'
        ? {
            ErrorNumber: 10,
            Type: 'ValidationException',
            Message: 'A validation exception occurred',
            Elements: [{ ValidationErrors: [{ Message: error.message }] }],
          }
        : {
            Type: null,
            Title:
              { 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 429: 'TooManyRequests' }[
                error.status
              ] ?? 'Error',
            Status: error.status,
            Detail: error.status === 401 ? 'AuthenticationUnsuccessful' : error.message,
            Instance: randomUUID(),
            Extensions: {},
          },
    rateLimitHeaders: () => ({ 'x-rate-limit-problem': 'minute', 'x-minlimit-remaining': '0' }),
  });

  const objectOf = (ctx: Context): XeroObject => {
    const object = ctx.params.object as XeroObject;
    if (!objects.includes(object))
      throw new FakeHttpError(404, 'The resource you are looking for cannot be found');
    return object;
  };

  /** The version a listing shows now: a change committed late shows its previous version until then. */
  const shown = (row: Row): Row | undefined =>
    row.visibleFromMs !== undefined && row.visibleFromMs > fake.now() ? row.previous : row;

  const isGone = (object: XeroObject, record: Record<string, unknown>) =>
    object === 'Contacts' ? record.ContactStatus === 'ARCHIVED' : record.Status === 'DELETED';

  const stamp = (object: XeroObject, record: Record<string, unknown>, ms: number, visibleFromMs?: number) => {
    const id = String(record[idField[object]]);
    const before = stores[object].get(id);
    record.UpdatedDateUTC = xeroDate(ms);
    const row: Row = { record, modifiedMs: ms };
    if (visibleFromMs !== undefined && before) {
      row.visibleFromMs = visibleFromMs;
      row.previous = { record: { ...before.record }, modifiedMs: before.modifiedMs };
    }
    stores[object].set(id, row);
  };

  const apply = (object: XeroObject, record: Record<string, unknown>, body: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(body)) if (writable[object].includes(key)) record[key] = value;
  };

  const validate = (object: XeroObject, record: Record<string, unknown>) => {
    if (object === 'Contacts') {
      const name = String(record.Name ?? '').trim();
      if (!name) throw new FakeHttpError(400, 'The contact name must be specified.', 'validation');
      for (const row of stores.Contacts.values())
        if (
          row.record.ContactID !== record.ContactID &&
          row.record.Name === name &&
          row.record.ContactStatus !== 'ARCHIVED'
        )
          throw new FakeHttpError(
            400,
            `The contact name ${name} is already assigned to another contact. The contact name must be unique across all active contacts.`,
            'validation',
          );
    } else {
      if (!['ACCREC', 'ACCPAY'].includes(String(record.Type)))
        throw new FakeHttpError(400, 'Invoice Type must be specified', 'validation');
      const contact = record.Contact as { ContactID?: string; Name?: string } | undefined;
      if (!contact || (!contact.ContactID && !contact.Name))
        throw new FakeHttpError(
          400,
          'A Contact must be specified for this type of transaction',
          'validation',
        );
      if (contact.ContactID && !stores.Contacts.has(contact.ContactID))
        throw new FakeHttpError(400, 'The contact could not be found', 'validation');
      if (!['DRAFT', 'SUBMITTED', 'AUTHORISED', 'DELETED', 'VOIDED', 'PAID'].includes(String(record.Status)))
        throw new FakeHttpError(400, `Invalid status: ${String(record.Status)}`, 'validation');
    }
  };

  const create = (object: XeroObject, body: Record<string, unknown>, ms: number) => {
    const n = ++counter;
    const id = guid(`xero-${n}`);
    const record: Record<string, unknown> =
      object === 'Contacts'
        ? {
            ContactID: id,
            ContactStatus: 'ACTIVE',
            Name: '',
            EmailAddress: '',
            Addresses: [],
            Phones: [],
            ContactGroups: [],
            IsSupplier: false,
            IsCustomer: false,
            HasAttachments: false,
            HasValidationErrors: false,
          }
        : {
            InvoiceID: id,
            Type: '',
            InvoiceNumber: `INV-${String(n).padStart(4, '0')}`,
            Reference: '',
            Status: 'DRAFT',
            LineAmountTypes: 'Exclusive',
            LineItems: [],
            SubTotal: 0,
            TotalTax: 0,
            Total: 0,
            CurrencyCode: 'NZD',
            Date: xeroDate(Date.UTC(2024, 0, 1)),
            HasAttachments: false,
          };
    apply(object, record, body);
    validate(object, record);
    stamp(object, record, ms);
    return record;
  };

  const update = (object: XeroObject, id: string, body: Record<string, unknown>, ms: number) => {
    const row = stores[object].get(id);
    if (!row || (object === 'Invoices' && row.record.Status === 'DELETED'))
      throw new FakeHttpError(404, 'The resource you are looking for cannot be found');
    const record = { ...row.record };
    apply(object, record, body);
    validate(object, record);
    stamp(object, record, ms);
    return record;
  };

  /** A write's records: `{Contacts: [...]}` or one record. */
  const bodyRecords = (object: XeroObject, body: unknown): Record<string, unknown>[] => {
    if (!body || typeof body !== 'object')
      throw new FakeHttpError(400, 'The request body is empty or not valid JSON', 'validation');
    const list = (body as Record<string, unknown>)[object];
    return Array.isArray(list) ? (list as Record<string, unknown>[]) : [body as Record<string, unknown>];
  };

  const envelope = (object: XeroObject, records: unknown[], extra: Record<string, unknown> = {}) => ({
    Id: randomUUID(),
    Status: 'OK',
    ProviderName: 'Ferry conformance',
    DateTimeUTC: `/Date(${fake.now()})/`,
    ...extra,
    [object]: records,
  });

  const router = fake.router;
  router.use(async (ctx, next) => {
    if (ctx.get('xero-tenant-id') !== tenantId)
      throw new FakeHttpError(
        403,
        'AuthorizationUnsuccessful: the xero-tenant-id header is missing or names another organisation',
      );
    const now = Date.now();
    while (calls.length && calls[0] <= now - 86_400_000) calls.shift();
    calls.push(now);
    const lastMinute = calls.filter((at) => at > now - 60_000).length;
    ctx.set('X-DayLimit-Remaining', String(Math.max(0, dayLimit - calls.length)));
    ctx.set('X-MinLimit-Remaining', String(Math.max(0, minuteLimit - lastMinute)));
    ctx.set('X-AppMinLimit-Remaining', '9999');
    if (inFlight >= concurrentLimit)
      throw new FakeHttpError(429, 'Rate limit exceeded', undefined, {
        'Retry-After': '1',
        'X-Rate-Limit-Problem': 'concurrent',
      });
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
    }
  });

  router.get('/api.xro/2.0/:object', (ctx) => {
    const object = objectOf(ctx);
    const paged = ctx.query.page !== undefined;
    const page = Number(ctx.query.page ?? 1);
    const asked = ctx.query.pageSize === undefined ? defaultPageSize : Number(ctx.query.pageSize);
    // Unpaged, everything comes at once: logged as no page size, which no reader should rely on.
    fake.logListing(ctx, { object, pageSize: paged ? asked : 0, maxPageSize });
    if (!Number.isInteger(page) || page < 1)
      throw new FakeHttpError(400, 'page must be a positive integer', 'validation');
    if (!Number.isInteger(asked) || asked < 1)
      throw new FakeHttpError(400, 'pageSize must be a positive integer', 'validation');
    const size = Math.min(asked, maxPageSize);
    const since = sinceHeader(ctx.get('if-modified-since') || undefined);
    const clauses = parseWhere(String(ctx.query.where ?? ''));
    const archived = String(ctx.query.includeArchived ?? 'false').toLowerCase() === 'true';
    const rows = [...stores[object].values()]
      .map(shown)
      .filter((row): row is Row => row !== undefined)
      .filter(
        (row) =>
          (since === undefined || row.modifiedMs > since) &&
          (object !== 'Contacts' || archived || row.record.ContactStatus !== 'ARCHIVED') &&
          clauses.every((clause) => clause(row)),
      );
    const order = String(ctx.query.order ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [field, direction = 'ASC'] = part.split(/\s+/);
        return { field, desc: direction.toUpperCase() === 'DESC' };
      });
    const key = (row: Row, field: string) =>
      field === 'UpdatedDateUTC' ? row.modifiedMs : String(row.record[field] ?? '');
    rows.sort((a, b) => {
      for (const { field, desc } of order) {
        const [x, y] = [key(a, field), key(b, field)];
        if (x !== y) return (x < y ? -1 : 1) * (desc ? -1 : 1);
      }
      const [x, y] = [String(a.record[idField[object]]), String(b.record[idField[object]])];
      return x < y ? -1 : x > y ? 1 : 0;
    });
    if (!paged) {
      const records = rows.map((row) =>
        object === 'Invoices' ? { ...row.record, LineItems: undefined } : row.record,
      );
      ctx.body = envelope(object, records);
      return;
    }
    ctx.body = envelope(
      object,
      rows.slice((page - 1) * size, page * size).map((row) => row.record),
      {
        pagination: {
          page,
          pageSize: size,
          pageCount: Math.ceil(rows.length / size),
          itemCount: rows.length,
        },
      },
    );
  });

  router.get('/api.xro/2.0/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = stores[object].get(ctx.params.id);
    if (!row) throw new FakeHttpError(404, 'The resource you are looking for cannot be found');
    ctx.body = envelope(object, [row.record]);
  });

  router.put('/api.xro/2.0/:object', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = envelope(
      object,
      bodyRecords(object, ctx.request.body).map((body) => create(object, body, fake.now())),
    );
  });

  router.post('/api.xro/2.0/:object', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = envelope(
      object,
      bodyRecords(object, ctx.request.body).map((body) => {
        const id = body[idField[object]];
        return typeof id === 'string' && id
          ? update(object, id, body, fake.now())
          : create(object, body, fake.now());
      }),
    );
  });

  router.post('/api.xro/2.0/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const [body] = bodyRecords(object, ctx.request.body);
    ctx.body = envelope(object, [update(object, ctx.params.id, body ?? {}, fake.now())]);
  });

  await fake.start();

  const objectNamed = (object: string): XeroObject => {
    if (!objects.includes(object as XeroObject)) throw new Error(`The Xero fake has no ${object}`);
    return object as XeroObject;
  };
  const seedContact = () => {
    const n = counter + 1;
    return create(
      'Contacts',
      {
        Name: `Seed Contact ${n}`,
        FirstName: 'Seed',
        LastName: String(n),
        EmailAddress: `seed${n}@example.com`,
      },
      Date.UTC(2020, 0, 1),
    );
  };
  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    requests: fake.requests,
    setClock: (now) => fake.setClock(now),
    seed: (name, modifiedTimes) => {
      const object = objectNamed(name);
      return modifiedTimes.map((ms) => {
        if (object === 'Contacts') {
          const n = counter + 1;
          return String(
            create(
              object,
              {
                Name: `Seed Contact ${n}`,
                FirstName: 'Seed',
                LastName: String(n),
                EmailAddress: `seed${n}@example.com`,
              },
              ms,
            ).ContactID,
          );
        }
        const contact = seedContact();
        return String(
          create(
            object,
            {
              Type: 'ACCREC',
              Contact: { ContactID: contact.ContactID, Name: contact.Name },
              Reference: `Seed ${counter}`,
              LineItems: [{ Description: 'Consulting', Quantity: 1, UnitAmount: 100 }],
            },
            ms,
          ).InvoiceID,
        );
      });
    },
    touch(name, id, modifiedMs, options) {
      const object = objectNamed(name);
      const row = stores[object].get(id);
      if (!row) throw new Error(`No ${name} ${id}`);
      stamp(object, { ...row.record }, modifiedMs, options?.visibleFromMs);
    },
    remove(name, id, atMs) {
      const object = objectNamed(name);
      const row = stores[object].get(id);
      if (!row) return;
      stamp(
        object,
        { ...row.record, ...(object === 'Contacts' ? { ContactStatus: 'ARCHIVED' } : { Status: 'DELETED' }) },
        atMs,
      );
    },
    stored: (name, id) => {
      const object = objectNamed(name);
      const record = stores[object].get(id)?.record;
      return record && !isGone(object, record) ? record : undefined;
    },
    stop: () => fake.stop(),
  };
}
