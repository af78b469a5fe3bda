import { randomBytes } from 'node:crypto';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for the Salesforce REST API (v62.0) as its reference describes it: SOQL through
 * `GET /services/data/v62.0/query?q=SELECT … FROM … [WHERE …] [ORDER BY …]` answering
 * `{totalSize, done, records, nextRecordsUrl?}`, batches sized by `Sforce-Query-Options: batchSize=`
 * (200 to 2,000, default 2,000) and continued at `nextRecordsUrl` (a query locator holding the
 * result as it was when queried); records with `attributes: {type, url}`, datetimes as
 * `2024-01-01T00:00:00.000+0000`; `GET /sobjects/{Object}/{id}`; `POST /sobjects/{Object}` → 201
 * `{id, success, errors}`; `PATCH`/`DELETE /sobjects/{Object}/{id}` → 204;
 * `GET /sobjects/{Object}/describe`; errors as a JSON array `[{message, errorCode}]`;
 * `Sforce-Limit-Info: api-usage=n/limit` on answers. Only what Ferry uses.
 */

const version = '/services/data/v62.0';

interface FakeField {
  name: string;
  label: string;
  type: string;
  custom: boolean;
  nillable: boolean;
  createable: boolean;
  updateable: boolean;
  defaultedOnCreate: boolean;
  deprecatedAndHidden: boolean;
  picklistValues: { value: string; label: string; active: boolean; defaultValue: boolean }[];
}

type FakeRecord = Record<string, unknown> & { Id: string; SystemModstamp: string };

export interface FakeSalesforce extends ConformanceFake {
  /** Deletes a custom field from an object, as an admin would: describe and SOQL no longer know it. */
  removeField(sobject: string, name: string): void;
  /** The next request is refused as over the org's daily API request limit. */
  exhaustLimit(): void;
}

function field(name: string, type: string, label: string, extra: Partial<FakeField> = {}): FakeField {
  return {
    name,
    label,
    type,
    custom: name.endsWith('__c'),
    nillable: true,
    createable: true,
    updateable: true,
    defaultedOnCreate: false,
    deprecatedAndHidden: false,
    picklistValues: [],
    ...extra,
  };
}

function picklist(...values: string[]): FakeField['picklistValues'] {
  return values.map((value) => ({ value, label: value, active: true, defaultValue: false }));
}

const system = { createable: false, updateable: false, nillable: false, defaultedOnCreate: true };
const required = { nillable: false };

const sobjects: Record<
  string,
  { prefix: string; name: string; fields: FakeField[]; seed: Record<string, unknown> }
> = {
  Account: {
    prefix: '001',
    name: 'Name',
    fields: [
      field('Name', 'string', 'Account Name', required),
      field('Industry', 'picklist', 'Industry', { picklistValues: picklist('Banking', 'Energy') }),
      field('AnnualRevenue', 'currency', 'Annual Revenue'),
      field('Tier__c', 'picklist', 'Tier', { picklistValues: picklist('Gold', 'Silver') }),
      field('LegacyCode__c', 'string', 'Legacy code', { deprecatedAndHidden: true }),
    ],
    seed: {},
  },
  Contact: {
    prefix: '003',
    name: 'LastName',
    fields: [
      field('LastName', 'string', 'Last Name', required),
      field('FirstName', 'string', 'First Name'),
      field('Email', 'email', 'Email'),
      field('AccountId', 'reference', 'Account ID'),
    ],
    seed: {},
  },
  Lead: {
    prefix: '00Q',
    name: 'LastName',
    fields: [
      field('LastName', 'string', 'Last Name', required),
      field('Company', 'string', 'Company', required),
      field('Status', 'picklist', 'Lead Status', {
        nillable: false,
        defaultedOnCreate: true,
        picklistValues: picklist('Open - Not Contacted', 'Closed - Converted'),
      }),
      field('Email', 'email', 'Email'),
    ],
    seed: { Company: 'Acme' },
  },
  Opportunity: {
    prefix: '006',
    name: 'Name',
    fields: [
      field('Name', 'string', 'Opportunity Name', required),
      field('StageName', 'picklist', 'Stage', { ...required, picklistValues: picklist('Prospecting') }),
      field('CloseDate', 'date', 'Close Date', required),
      field('Amount', 'currency', 'Amount'),
    ],
    seed: { StageName: 'Prospecting', CloseDate: '2026-12-31' },
  },
};

function allFieldsOf(sobject: string): FakeField[] {
  return [
    field('Id', 'id', `${sobject} ID`, system),
    field('IsDeleted', 'boolean', 'Deleted', system),
    field('OwnerId', 'reference', 'Owner ID', { nillable: false, defaultedOnCreate: true }),
    field('CreatedDate', 'datetime', 'Created Date', system),
    field('LastModifiedDate', 'datetime', 'Last Modified Date', system),
    field('SystemModstamp', 'datetime', 'System Modstamp', system),
    ...sobjects[sobject].fields,
  ];
}

/** Salesforce's datetime text: milliseconds, and `+0000` rather than `Z`. */
function sfTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

function sfError(status: number, errorCode: string, message: string): FakeHttpError {
  return new FakeHttpError(status, message, errorCode);
}

/** An sObject named in a `/sobjects/…` URL: Salesforce answers 404 for one the org lacks. */
function resource(sobject: string): string {
  if (!Object.hasOwn(sobjects, sobject)) {
    throw sfError(404, 'NOT_FOUND', 'The requested resource does not exist');
  }
  return sobject;
}

function known(sobject: string): string {
  if (!Object.hasOwn(sobjects, sobject)) {
    throw sfError(400, 'INVALID_TYPE', `sObject type '${sobject}' is not supported.`);
  }
  return sobject;
}

interface Query {
  sobject: string;
  select: string[];
  where: ((record: FakeRecord) => boolean)[];
  orderBy?: string;
  limit?: number;
  offset?: number;
}

/**
 * The SOQL Ferry writes: a field list, one object, `AND`-joined comparisons (a datetime field with an
 * unquoted dateTime literal; any field `=` a quoted string, `\\` and `\'` escaped inside it, compared
 * case-insensitively), `ORDER BY`, `LIMIT` and `OFFSET` (at most 2,000). Anything else is
 * MALFORMED_QUERY.
 */
function parseSoql(soql: string, fieldsOf: (sobject: string) => FakeField[]): Query {
  const match =
    /^SELECT\s+(.+?)\s+FROM\s+(\w+)(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+([\w\s,]+?))?(?:\s+LIMIT\s+(\d+))?(?:\s+OFFSET\s+(\d+))?\s*$/is.exec(
      soql,
    );
  if (!match) throw sfError(400, 'MALFORMED_QUERY', `unexpected token: '${soql.slice(0, 40)}'`);
  const sobject = known(match[2]);
  // A deprecated and hidden field is described (flagged) but cannot be queried.
  const names = new Set(
    fieldsOf(sobject)
      .filter((f) => !f.deprecatedAndHidden)
      .map((f) => f.name),
  );
  const noSuchColumn = (name: string) =>
    sfError(
      400,
      'INVALID_FIELD',
      `No such column '${name}' on entity '${sobject}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name.`,
    );
  const select = match[1].split(',').map((name) => name.trim());
  for (const name of select) if (!names.has(name)) throw noSuchColumn(name);
  const where: Query['where'] = [];
  const clause =
    /\s*(\w+)\s*(>=|<=|>|<|=)\s*(?:'((?:\\.|[^'\\])*)'|(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|[+-]\d{2}:\d{2})))\s*(?:AND\s+|$)/iy;
  const text = match[3] ?? '';
  while (clause.lastIndex < text.length) {
    const at = clause.lastIndex;
    const found = clause.exec(text);
    if (!found) throw sfError(400, 'MALFORMED_QUERY', `unexpected token: '${text.slice(at, at + 40)}'`);
    const [, name, op, quoted, literal] = found;
    if (!names.has(name)) throw noSuchColumn(name);
    if (quoted !== undefined) {
      if (op !== '=') throw sfError(400, 'MALFORMED_QUERY', `unexpected token: '${op}'`);
      const value = quoted.replace(/\\(.)/g, '$1').toLowerCase();
      where.push((record) => String(record[name] ?? '').toLowerCase() === value);
      continue;
    }
    const bound = Date.parse(literal);
    where.push((record) => {
      const ms = Date.parse(String(record[name]).replace('+0000', 'Z'));
      return op === '>='
        ? ms >= bound
        : op === '<='
          ? ms <= bound
          : op === '>'
            ? ms > bound
            : op === '<'
              ? ms < bound
              : ms === bound;
    });
  }
  const offset = match[6] === undefined ? undefined : Number(match[6]);
  if (offset !== undefined && offset > 2000) {
    throw sfError(400, 'NUMBER_OUTSIDE_VALID_RANGE', 'Maximum SOQL offset allowed is 2000');
  }
  return {
    sobject,
    select,
    where,
    orderBy: match[4],
    ...(match[5] !== undefined && { limit: Number(match[5]) }),
    ...(offset !== undefined && { offset }),
  };
}

export async function startFakeSalesforce(): Promise<FakeSalesforce> {
  const records = new Map<string, FakeRecord[]>(Object.keys(sobjects).map((name) => [name, []]));
  const locators = new Map<string, { sobject: string; select: string[]; rows: FakeRecord[] }>();
  let counter = 0;
  let apiUsage = 0;
  /** Fields removed from this org (`Object.Field`). */
  const hidden = new Set<string>();
  const fieldsOf = (sobject: string) =>
    allFieldsOf(sobject).filter((f) => !hidden.has(`${sobject}.${f.name}`));

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => [
      {
        message: error.status === 401 ? 'Session expired or invalid' : error.message,
        errorCode: error.status === 401 ? 'INVALID_SESSION_ID' : (error.code ?? 'UNKNOWN_EXCEPTION'),
      },
    ],
    rateLimitCode: 'REQUEST_LIMIT_EXCEEDED',
  });

  const router = fake.router;
  let exhausted = false;
  router.use(async (ctx, next) => {
    apiUsage++;
    ctx.set('Sforce-Limit-Info', `api-usage=${apiUsage}/15000`);
    if (exhausted) {
      exhausted = false;
      throw sfError(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
    }
    await next();
  });

  const newId = (sobject: string) => `${sobjects[sobject].prefix}${String(++counter).padStart(12, '0')}AAA`;
  const recordOf = (sobject: string, id: string): FakeRecord => {
    const record = records.get(resource(sobject))!.find((r) => r.Id === id);
    if (!record) throw sfError(404, 'NOT_FOUND', 'The requested resource does not exist');
    return record;
  };
  const shaped = (sobject: string, record: FakeRecord, select?: string[]) => {
    const attributes = { type: sobject, url: `${version}/sobjects/${sobject}/${record.Id}` };
    if (!select) {
      return {
        attributes,
        ...Object.fromEntries(fieldsOf(sobject).map((f) => [f.name, record[f.name] ?? null])),
      };
    }
    return { attributes, ...Object.fromEntries(select.map((name) => [name, record[name] ?? null])) };
  };
  /** A body's fields, checked as Salesforce checks them on insert or update. */
  const checkedBody = (sobject: string, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw sfError(400, 'JSON_PARSER_ERROR', 'Cannot deserialize instance of sObject from the request body');
    }
    const byName = new Map(fieldsOf(sobject).map((f) => [f.name, f]));
    for (const name of Object.keys(body)) {
      const found = byName.get(name);
      if (!found)
        throw sfError(400, 'INVALID_FIELD', `No such column '${name}' on sobject of type ${sobject}`);
      if (!(creating ? found.createable : found.updateable)) {
        throw sfError(
          400,
          'INVALID_FIELD_FOR_INSERT_UPDATE',
          `Unable to create/update fields: ${name}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
        );
      }
    }
    if (creating) {
      const missing = fieldsOf(sobject)
        .filter((f) => f.createable && !f.nillable && !f.defaultedOnCreate)
        .filter((f) => (body as Record<string, unknown>)[f.name] === undefined)
        .map((f) => f.name);
      if (missing.length) {
        throw sfError(400, 'REQUIRED_FIELD_MISSING', `Required fields are missing: [${missing.join(', ')}]`);
      }
    }
    return body as Record<string, unknown>;
  };

  /** One batch from a locator, and the URL of the next while rows remain. */
  const batch = (locator: string, offset: number, batchSize: number) => {
    const held = locators.get(locator);
    if (!held) throw sfError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
    const rows = held.rows.slice(offset, offset + batchSize);
    const following = offset + rows.length;
    const done = following >= held.rows.length;
    return {
      totalSize: held.rows.length,
      done,
      ...(!done && { nextRecordsUrl: `${version}/query/${locator}-${following}` }),
      records: rows.map((record) => shaped(held.sobject, record, held.select)),
    };
  };
  const batchSizeOf = (header: string): number => {
    const size = /batchSize=(\d+)/.exec(header)?.[1];
    // Salesforce takes 200 to 2,000 and may return more or fewer than asked (verify out-of-range handling).
    return size ? Math.min(2000, Math.max(200, Number(size))) : 2000;
  };

  router.get(`${version}/query`, (ctx) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    if (!q) throw sfError(400, 'MALFORMED_QUERY', 'A query string is required');
    const query = parseSoql(q, fieldsOf);
    const byModstamp = /^SystemModstamp(\s+ASC)?\b/i.test(query.orderBy ?? '');
    const rows = records
      .get(query.sobject)!
      .filter((record) => query.where.every((test) => test(record)))
      .sort(
        (a, b) =>
          (byModstamp
            ? Date.parse(a.SystemModstamp.replace('+0000', 'Z')) -
              Date.parse(b.SystemModstamp.replace('+0000', 'Z'))
            : 0) || a.Id.localeCompare(b.Id),
      )
      .slice(query.offset ?? 0, query.limit === undefined ? undefined : (query.offset ?? 0) + query.limit);
    const locator = `01g${randomBytes(6).toString('hex').toUpperCase()}`;
    locators.set(locator, { sobject: query.sobject, select: query.select, rows });
    ctx.body = batch(locator, 0, batchSizeOf(ctx.get('sforce-query-options')));
  });

  router.get(`${version}/query/:locator`, (ctx) => {
    const match = /^(01g[0-9A-F]+)-(\d+)$/.exec(ctx.params.locator);
    if (!match) throw sfError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
    ctx.body = batch(match[1], Number(match[2]), batchSizeOf(ctx.get('sforce-query-options')));
  });

  router.get(`${version}/sobjects/:sobject/describe`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    ctx.body = {
      name: sobject,
      label: sobject,
      keyPrefix: sobjects[sobject].prefix,
      createable: true,
      updateable: true,
      deletable: true,
      fields: fieldsOf(sobject),
    };
  });

  router.get(`${version}/sobjects/:sobject/:id`, (ctx) => {
    const sobject = ctx.params.sobject;
    ctx.body = shaped(sobject, recordOf(sobject, ctx.params.id));
  });

  router.post(`${version}/sobjects/:sobject`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    const values = checkedBody(sobject, ctx.request.body, true);
    const now = sfTime(Date.now());
    const id = newId(sobject);
    records.get(sobject)!.push({
      ...values,
      Id: id,
      IsDeleted: false,
      OwnerId: '005000000000001AAA',
      CreatedDate: now,
      LastModifiedDate: now,
      SystemModstamp: now,
    });
    ctx.status = 201;
    ctx.body = { id, success: true, errors: [] };
  });

  router.patch(`${version}/sobjects/:sobject/:id`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    const record = recordOf(sobject, ctx.params.id);
    const now = sfTime(Date.now());
    Object.assign(record, checkedBody(sobject, ctx.request.body, false), {
      LastModifiedDate: now,
      SystemModstamp: now,
    });
    ctx.status = 204;
  });

  router.delete(`${version}/sobjects/:sobject/:id`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    const record = recordOf(sobject, ctx.params.id);
    records.set(
      sobject,
      records.get(sobject)!.filter((r) => r !== record),
    );
    ctx.status = 204;
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
    seed(sobject, modifiedTimes) {
      return modifiedTimes.map((ms) => {
        const id = newId(known(sobject));
        records.get(sobject)!.push({
          ...sobjects[sobject].seed,
          [sobjects[sobject].name]: `${sobject} ${counter}`,
          Id: id,
          IsDeleted: false,
          OwnerId: '005000000000001AAA',
          CreatedDate: sfTime(ms),
          LastModifiedDate: sfTime(ms),
          SystemModstamp: sfTime(ms),
        });
        return id;
      });
    },
    touch(sobject, id, modifiedMs) {
      const record = recordOf(sobject, id);
      record.LastModifiedDate = sfTime(modifiedMs);
      record.SystemModstamp = sfTime(modifiedMs);
    },
    stored: (sobject, id) => records.get(sobject)?.find((record) => record.Id === id),
    exhaustLimit() {
      exhausted = true;
    },
    removeField(sobject, name) {
      hidden.add(`${sobject}.${name}`);
    },
    stop: () => fake.stop(),
  };
}
