import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for the Zoho CRM REST API (v6), written from Zoho's reference
 * (https://www.zoho.com/crm/developer/docs/api/v6/) and its published OpenAPI documents
 * (github.com/zoho/crm-oas):
 *
 * - `GET /crm/v6/{module}`: `fields` required (at most 50), `per_page` (default and maximum 200),
 *   `page` for the first 2,000 records only (`DISCRETE_PAGINATION_LIMIT_EXCEEDED` beyond), then
 *   `page_token` from `info.next_page_token` (never with `page`; expires after a day; at most
 *   100,000 records), `sort_by` (`id`, `Created_Time`, `Modified_Time`) and `sort_order` (default
 *   `desc`), and `If-Modified-Since` (records modified after it; 304 with no body when there are
 *   none). 204 with no body when a page has no records.
 * - Times in the org's time zone (+05:30 here) to the second: `2024-01-01T05:30:00+05:30`.
 * - `GET /crm/v6/{module}/{id}` (every field, null when empty); `GET …/search?criteria=` with
 *   `(Field:operator:value)` groups joined by `and`/`or` (parentheses, commas and backslashes in a
 *   value escaped with `\`), at most 10 criteria, the first 2,000 matches only.
 * - Deletion moves a record to the recycle bin: `GET …/deleted?type=all|recycle|permanent`
 *   (with `If-Modified-Since`) lists `{id, display_name, type, deleted_by, created_by,
 *   deleted_time}`; after 60 days a record is deleted for good (`type: permanent`).
 * - Writes `POST` and `PUT …/{id}` with `{data: [record]}`, `DELETE …/{id}`, answering
 *   `{data: [{code, details, message, status}]}`; a record's error comes in that array
 *   (`MANDATORY_NOT_FOUND` with `api_name`, `INVALID_DATA` with `expected_data_type`).
 * - `GET /crm/v6/settings/fields?module=`: fields with `pick_list_values` marked `type: used` or
 *   `unused` (no longer offered).
 * - Errors `{code, details, message, status: "error"}`; credentials `Authorization:
 *   Zoho-oauthtoken <token>`.
 */

const modules: Record<string, { name: string; seed: Record<string, unknown> }> = {
  Leads: { name: 'Last_Name', seed: { Company: 'Acme' } },
  Contacts: { name: 'Last_Name', seed: {} },
  Accounts: { name: 'Account_Name', seed: {} },
  Deals: { name: 'Deal_Name', seed: { Stage: 'Qualification' } },
};

interface PicklistValue {
  display_value: string;
  actual_value: string;
  reference_value: string;
  colour_code: string | null;
  id: string;
  sequence_number: number;
  type: 'used' | 'unused';
}

interface ZohoField {
  api_name: string;
  field_label: string;
  display_label: string;
  data_type: string;
  json_type: string;
  read_only: boolean;
  field_read_only: boolean;
  system_mandatory: boolean;
  custom_field: boolean;
  visible: boolean;
  length: number;
  pick_list_values: PicklistValue[];
}

type ZohoRecord = Record<string, unknown> & { id: string; Modified_Time: string };

const jsonTypes: Record<string, string> = {
  ownerlookup: 'jsonobject',
  lookup: 'jsonobject',
  integer: 'integer',
  currency: 'double',
  double: 'double',
  boolean: 'boolean',
};

function field(api: string, type: string, label: string, extra: Partial<ZohoField> = {}): ZohoField {
  return {
    api_name: api,
    field_label: label,
    display_label: label,
    data_type: type,
    json_type: jsonTypes[type] ?? 'string',
    read_only: false,
    field_read_only: false,
    system_mandatory: false,
    custom_field: false,
    visible: true,
    length: type === 'text' ? 255 : 100,
    pick_list_values: [],
    ...extra,
  };
}

const picklist = (used: string[], unused: string[] = []): PicklistValue[] =>
  [
    ...used.map((value) => [value, 'used'] as const),
    ...unused.map((value) => [value, 'unused'] as const),
  ].map(([value, type], i) => ({
    display_value: value,
    actual_value: value,
    reference_value: value,
    colour_code: null,
    id: `90000${i}`,
    sequence_number: i,
    type,
  }));

function fieldsOf(module: string): ZohoField[] {
  const system = { read_only: true, field_read_only: true };
  const common = [
    field('Owner', 'ownerlookup', 'Owner'),
    field('Created_Time', 'datetime', 'Created Time', system),
    field('Modified_Time', 'datetime', 'Modified Time', system),
    field('Created_By', 'ownerlookup', 'Created By', system),
    field('Modified_By', 'ownerlookup', 'Modified By', system),
    field(modules[module].name, 'text', modules[module].name.replace('_', ' '), { system_mandatory: true }),
  ];
  switch (module) {
    case 'Leads':
      return [
        ...common,
        field('Company', 'text', 'Company', { system_mandatory: true }),
        field('Email', 'email', 'Email'),
        field('Lead_Status', 'picklist', 'Lead Status', {
          pick_list_values: picklist(['-None-', 'Contacted']),
        }),
        // Bronze is no longer offered (type: unused) but kept on old records.
        field('Tier', 'picklist', 'Tier', {
          custom_field: true,
          pick_list_values: picklist(['Gold', 'Silver'], ['Bronze']),
        }),
      ];
    case 'Contacts':
      return [
        ...common,
        field('First_Name', 'text', 'First Name'),
        field('Email', 'email', 'Email'),
        field('Account_Name', 'lookup', 'Account Name'),
      ];
    case 'Deals':
      return [
        ...common,
        field('Stage', 'picklist', 'Stage', {
          system_mandatory: true,
          pick_list_values: picklist(['Qualification']),
        }),
        field('Amount', 'currency', 'Amount'),
        field('Closing_Date', 'date', 'Closing Date'),
      ];
    default:
      return [...common, field('Website', 'website', 'Website'), field('Employees', 'integer', 'Employees')];
  }
}

/** The org's time zone: Zoho writes times in it, with its offset, to the second. */
const offsetMs = (5 * 60 + 30) * 60_000;
const toSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
function zohoTime(ms: number): string {
  return new Date(toSecond(ms) + offsetMs).toISOString().replace(/\.\d{3}Z$/, '+05:30');
}
const msOf = (record: ZohoRecord) => Date.parse(record.Modified_Time);

function zohoError(
  status: number,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): FakeHttpError {
  return Object.assign(new FakeHttpError(status, message, code), { details });
}

/** A record-level error, answered inside `data` as Zoho answers writes. */
class RecordError extends FakeHttpError {
  constructor(
    code: string,
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(400, message, code);
  }
}

const pageLimit = 2000;
const tokenLimit = 100_000;
const tokenLifetimeMs = 86_400_000;
const recycleBinMs = 60 * 86_400_000;
const maxFields = 50;
const maxPerPage = 200;
const user = { name: 'Ada Admin', id: '5725767000000100001', email: 'ada@example.com' };

interface Row {
  record: ZohoRecord;
  previous?: ZohoRecord;
  visibleFromMs: number;
  deletedMs?: number;
}

export async function startFakeZoho(): Promise<ConformanceFake> {
  const rows = new Map<string, Row[]>(Object.keys(modules).map((name) => [name, []]));
  /** Page tokens: each stands for its query's matches (as listed then) and the next offset. */
  const tokens = new Map<
    string,
    { module: string; ids: string[]; offset: number; fields: string[]; expires: number }
  >();
  let counter = 0;

  const fake = new FakeProvider({
    credentialOf: (ctx) => /^Zoho-oauthtoken\s+(.+)$/.exec(ctx.get('authorization'))?.[1],
    errorBody: (error) => {
      const details = (error as { details?: Record<string, unknown> }).details ?? {};
      if (error instanceof RecordError) {
        return { data: [{ code: error.code, details, message: error.message, status: 'error' }] };
      }
      return error.status === 401
        ? { code: 'INVALID_TOKEN', details: {}, message: 'invalid oauth token', status: 'error' }
        : {
            code: error.code ?? (error.status === 429 ? 'TOO_MANY_REQUESTS' : 'INTERNAL_ERROR'),
            details,
            message: error.message,
            status: 'error',
          };
    },
    rateLimitCode: 'TOO_MANY_REQUESTS',
  });
  const now = () => fake.now();

  const moduleOf = (name: string): string => {
    if (!Object.hasOwn(modules, name)) {
      throw zohoError(400, 'INVALID_MODULE', 'the module name given seems to be invalid', { module: name });
    }
    return name;
  };
  const newId = () => `5725767000000${String(++counter).padStart(6, '0')}`;
  /** What readers see now: the previous version until a late change commits. */
  const visible = (row: Row) =>
    row.deletedMs !== undefined && row.deletedMs <= now()
      ? undefined
      : row.visibleFromMs <= now()
        ? row.record
        : row.previous;
  const live = (module: string) =>
    rows
      .get(module)!
      .map(visible)
      .filter((r): r is ZohoRecord => r !== undefined);
  const rowOf = (module: string, id: string) =>
    rows.get(module)!.find((r) => r.record.id === id && r.deletedMs === undefined);

  const project = (record: ZohoRecord, fields?: string[]) =>
    fields ? Object.fromEntries(['id', ...fields].map((name) => [name, record[name] ?? null])) : record;
  const perPageOf = (ctx: Context): number => {
    const perPage = ctx.query.per_page === undefined ? maxPerPage : Number(ctx.query.per_page);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > maxPerPage) {
      throw zohoError(400, 'INVALID_DATA', 'invalid data', {
        param_name: 'per_page',
        maximum_length: maxPerPage,
      });
    }
    return perPage;
  };
  const pageOf = (ctx: Context, perPage: number): number => {
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(page) || page < 1)
      throw zohoError(400, 'INVALID_DATA', 'invalid data', { param_name: 'page' });
    if (page * perPage > pageLimit) {
      throw zohoError(
        400,
        'DISCRETE_PAGINATION_LIMIT_EXCEEDED',
        `You can only get the first ${pageLimit} records without using page_token param.`,
        { limit: pageLimit },
      );
    }
    return page;
  };
  /** `If-Modified-Since`: records modified after it (to the second). */
  const modifiedAfter = (ctx: Context): number | undefined => {
    const header = ctx.get('if-modified-since');
    if (!header) return undefined;
    const ms = Date.parse(header);
    if (!Number.isFinite(ms)) {
      throw zohoError(400, 'INVALID_DATA', 'invalid data', { header_name: 'If-Modified-Since' });
    }
    return toSecond(ms);
  };
  const success = (message: string, details: Record<string, unknown>) => ({
    data: [{ code: 'SUCCESS', details, message, status: 'success' }],
  });

  const expectedTypes: Record<string, string> = {
    currency: 'double',
    double: 'double',
    integer: 'integer',
    boolean: 'boolean',
  };
  /** `{data: [record]}`, one record, checked as Zoho checks a record (errors answered inside `data`). */
  const writeBody = (module: string, body: unknown, creating: boolean): Record<string, unknown> => {
    const list = (body as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(list) || list.length === 0 || list.length > 100) {
      throw zohoError(400, 'INVALID_DATA', 'invalid data', {
        expected_data_type: 'jsonarray',
        api_name: 'data',
      });
    }
    if (list.length !== 1 || !list[0] || typeof list[0] !== 'object') {
      throw zohoError(400, 'INVALID_DATA', 'the fake takes one record at a time');
    }
    const values = list[0] as Record<string, unknown>;
    const fields = new Map(fieldsOf(module).map((f) => [f.api_name, f]));
    for (const [name, value] of Object.entries(values)) {
      const found = fields.get(name);
      if (!found) continue; // Zoho ignores names it does not know (verify).
      const path = `$.data[0].${name}`;
      if (found.read_only) {
        throw new RecordError('INVALID_DATA', 'invalid data', { api_name: name, json_path: path });
      }
      const expected = expectedTypes[found.data_type];
      const fits =
        value === null ||
        !expected ||
        (expected === 'boolean'
          ? typeof value === 'boolean'
          : typeof value === 'number' && (expected === 'double' || Number.isInteger(value)));
      if (!fits) {
        throw new RecordError('INVALID_DATA', 'invalid data', {
          expected_data_type: expected,
          api_name: name,
          json_path: path,
        });
      }
    }
    if (creating) {
      const missing = fieldsOf(module).find((f) => f.system_mandatory && (values[f.api_name] ?? '') === '');
      if (missing) {
        throw new RecordError('MANDATORY_NOT_FOUND', 'required field not found', {
          api_name: missing.api_name,
          json_path: `$.data[0].${missing.api_name}`,
        });
      }
    }
    return values;
  };

  const insert = (module: string, values: Record<string, unknown>, ms: number): Row => {
    const stamp = zohoTime(ms);
    const record: ZohoRecord = {
      ...Object.fromEntries(fieldsOf(module).map((f) => [f.api_name, null])),
      ...values,
      Owner: values.Owner ?? user,
      Created_By: user,
      Modified_By: user,
      id: newId(),
      Created_Time: stamp,
      Modified_Time: stamp,
    };
    const row: Row = { record, visibleFromMs: ms };
    rows.get(module)!.push(row);
    return row;
  };
  const edit = (row: Row, values: Record<string, unknown>, ms: number, visibleFromMs = ms) => {
    const shown = visible(row);
    row.previous = shown && { ...shown };
    Object.assign(row.record, values, { Modified_Time: zohoTime(ms), Modified_By: user });
    row.visibleFromMs = visibleFromMs;
  };

  const router = fake.router;

  router.get('/crm/v6/settings/fields', (ctx) => {
    const module = typeof ctx.query.module === 'string' ? ctx.query.module : '';
    if (!module)
      throw zohoError(400, 'REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing', {
        param_name: 'module',
      });
    ctx.body = { fields: fieldsOf(moduleOf(module)) };
  });

  router.get('/crm/v6/:module/deleted', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const type = typeof ctx.query.type === 'string' ? ctx.query.type : 'all';
    if (!['all', 'recycle', 'permanent'].includes(type)) {
      throw zohoError(400, 'INVALID_DATA', 'invalid data', { param_name: 'type' });
    }
    const perPage = perPageOf(ctx);
    const page = pageOf(ctx, perPage);
    const after = modifiedAfter(ctx);
    fake.logListing(ctx, { object: module, pageSize: perPage, maxPageSize: maxPerPage });
    const deleted = rows
      .get(module)!
      .filter((r) => r.deletedMs !== undefined && r.deletedMs <= now())
      .map((r) => ({ row: r, kind: r.deletedMs! + recycleBinMs <= now() ? 'permanent' : 'recycle' }))
      .filter(({ kind }) => type === 'all' || kind === type)
      .filter(({ row }) => after === undefined || row.deletedMs! > after)
      .sort((a, b) => b.row.deletedMs! - a.row.deletedMs!);
    const slice = deleted.slice((page - 1) * perPage, page * perPage);
    if (!slice.length) {
      ctx.status = after === undefined ? 204 : 304;
      return;
    }
    ctx.body = {
      data: slice.map(({ row, kind }) => ({
        deleted_by: { name: user.name, id: user.id },
        id: row.record.id,
        display_name: row.record[modules[module].name] ?? null,
        type: kind,
        created_by: { name: user.name, id: user.id },
        deleted_time: zohoTime(row.deletedMs!),
      })),
      info: { per_page: perPage, count: slice.length, page, more_records: page * perPage < deleted.length },
    };
  });

  router.get('/crm/v6/:module/search', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const criteria = typeof ctx.query.criteria === 'string' ? ctx.query.criteria : '';
    if (!criteria)
      throw zohoError(400, 'REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing', {
        param_name: 'criteria',
      });
    const known = new Map(fieldsOf(module).map((f) => [f.api_name, f]));
    let position = 0;
    let count = 0;
    const invalid = (detail: Record<string, unknown> = {}) =>
      zohoError(400, 'INVALID_QUERY', 'invalid query formed', detail);
    // (Field:operator:value), and/or, parentheses; `\` escapes `(`, `)`, `,` and itself in a value.
    const condition = (): ((r: ZohoRecord) => boolean) => {
      if (criteria[position] !== '(') throw invalid();
      position++;
      if (criteria[position] === '(') {
        const inner = expression();
        if (criteria[position] !== ')') throw invalid();
        position++;
        return inner;
      }
      const head = /^(\w+):(\w+):/.exec(criteria.slice(position));
      if (!head) throw invalid();
      const [, name, operator] = head;
      position += head[0].length;
      let raw = '';
      while (position < criteria.length && criteria[position] !== ')') {
        if (criteria[position] === '\\' && position + 1 < criteria.length) {
          raw += criteria[position + 1];
          position += 2;
        } else raw += criteria[position++];
      }
      if (criteria[position] !== ')') throw invalid();
      position++;
      if (++count > 10)
        throw zohoError(400, 'LIMIT_EXCEEDED', 'the number of criteria exceeds the limit of 10');
      if (name !== 'id' && !known.has(name)) throw invalid({ api_name: name });
      const value = raw.toLowerCase();
      const text = (r: ZohoRecord) => {
        const v = r[name];
        return v === null || v === undefined
          ? ''
          : typeof v === 'object'
            ? String((v as { name?: unknown }).name ?? '')
            : String(v);
      };
      switch (operator) {
        case 'equals':
          return (r) => text(r).toLowerCase() === value;
        case 'not_equal':
          return (r) => text(r).toLowerCase() !== value;
        case 'starts_with':
          return (r) => text(r).toLowerCase().startsWith(value);
        case 'in': {
          const values = value.split(',');
          return (r) => values.includes(text(r).toLowerCase());
        }
        default:
          throw invalid({ operator });
      }
    };
    const expression = (): ((r: ZohoRecord) => boolean) => {
      let result = condition();
      while (criteria.startsWith('and', position) || criteria.startsWith('or', position)) {
        const isAnd = criteria.startsWith('and', position);
        position += isAnd ? 3 : 2;
        const left = result;
        const right = condition();
        result = isAnd ? (r) => left(r) && right(r) : (r) => left(r) || right(r);
      }
      return result;
    };
    const test = expression();
    if (position !== criteria.length) throw invalid();
    const perPage = perPageOf(ctx);
    const page = pageOf(ctx, perPage);
    fake.logListing(ctx, { object: module, pageSize: perPage, maxPageSize: maxPerPage });
    const fields =
      typeof ctx.query.fields === 'string' ? ctx.query.fields.split(',').filter(Boolean) : undefined;
    const found = live(module)
      .filter(test)
      .sort((a, b) => a.id.localeCompare(b.id));
    const slice = found.slice((page - 1) * perPage, page * perPage);
    if (!slice.length) {
      ctx.status = 204;
      return;
    }
    ctx.body = {
      data: slice.map((record) => project(record, fields)),
      info: {
        per_page: perPage,
        count: slice.length,
        page,
        more_records: page * perPage < Math.min(found.length, pageLimit),
      },
    };
  });

  router.get('/crm/v6/:module', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const perPage = perPageOf(ctx);
    let ids: string[];
    let offset: number;
    let fields: string[];
    if (typeof ctx.query.page_token === 'string') {
      if (ctx.query.page !== undefined) {
        throw zohoError(400, 'AMBIGUITY_DURING_PROCESSING', 'You cannot use both page and page_token.', {
          ambiguity_due_to: ['page', 'page_token'],
        });
      }
      const held = tokens.get(ctx.query.page_token);
      if (!held || held.module !== module)
        throw zohoError(400, 'INVALID_DATA', 'invalid data', { param_name: 'page_token' });
      if (held.expires <= now())
        throw zohoError(400, 'EXPIRED_VALUE', 'the given page_token has expired', {
          param_name: 'page_token',
        });
      ({ ids, offset, fields } = held);
      if (offset >= tokenLimit) {
        throw zohoError(
          400,
          'PAGINATION_LIMIT_EXCEEDED',
          `You can only get up to first ${tokenLimit} records using page_token param.`,
        );
      }
    } else {
      const named = typeof ctx.query.fields === 'string' ? ctx.query.fields.split(',').filter(Boolean) : [];
      if (!named.length) {
        throw zohoError(400, 'REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing', {
          param_name: 'fields',
        });
      }
      if (named.length > maxFields) {
        throw zohoError(400, 'LIMIT_EXCEEDED', `the number of fields exceeds the limit of ${maxFields}`, {
          param_name: 'fields',
          limit: maxFields,
        });
      }
      fields = named;
      const sortBy = typeof ctx.query.sort_by === 'string' ? ctx.query.sort_by : 'id';
      if (!['id', 'Created_Time', 'Modified_Time'].includes(sortBy)) {
        throw zohoError(400, 'INVALID_DATA', 'invalid data', { param_name: 'sort_by' });
      }
      const descending = ctx.query.sort_order !== 'asc';
      const after = modifiedAfter(ctx);
      const key = (r: ZohoRecord) => (sortBy === 'id' ? 0 : Date.parse(String(r[sortBy])));
      const matching = live(module)
        .filter((record) => after === undefined || msOf(record) > after)
        .sort((a, b) => key(a) - key(b) || a.id.localeCompare(b.id));
      if (descending) matching.reverse();
      if (after !== undefined && !matching.length) {
        fake.logListing(ctx, { object: module, pageSize: perPage, maxPageSize: maxPerPage });
        ctx.status = 304;
        return;
      }
      ids = matching.map((record) => record.id);
      offset = (pageOf(ctx, perPage) - 1) * perPage;
    }
    fake.logListing(ctx, { object: module, pageSize: perPage, maxPageSize: maxPerPage });
    const byId = new Map(live(module).map((record) => [record.id, record]));
    const slice = ids
      .slice(offset, offset + perPage)
      .map((id) => byId.get(id))
      .filter((record): record is ZohoRecord => record !== undefined);
    if (!slice.length) {
      ctx.status = 204;
      return;
    }
    const more = offset + perPage < ids.length;
    let next: string | null = null;
    if (more) {
      next = `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
      tokens.set(next, { module, ids, offset: offset + perPage, fields, expires: now() + tokenLifetimeMs });
    }
    ctx.body = {
      data: slice.map((record) => project(record, fields)),
      info: {
        per_page: perPage,
        count: slice.length,
        page: Math.floor(offset / perPage) + 1,
        sort_by: ctx.query.sort_by ?? 'id',
        sort_order: ctx.query.sort_order ?? 'desc',
        more_records: more,
        next_page_token: next,
        previous_page_token: null,
        page_token_expiry: more ? new Date(now() + tokenLifetimeMs).toISOString() : null,
      },
    };
  });

  router.get('/crm/v6/:module/:id', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const row = rowOf(module, ctx.params.id);
    const record = row && visible(row);
    if (!record) {
      ctx.status = 204;
      return;
    }
    const fields =
      typeof ctx.query.fields === 'string' ? ctx.query.fields.split(',').filter(Boolean) : undefined;
    ctx.body = { data: [project(record, fields)] };
  });

  router.post('/crm/v6/:module', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const row = insert(module, writeBody(module, ctx.request.body, true), now());
    const { id, Created_Time, Modified_Time } = row.record;
    ctx.status = 201;
    ctx.body = success('record added', {
      Modified_Time,
      Modified_By: { name: user.name, id: user.id },
      Created_Time,
      id,
      Created_By: { name: user.name, id: user.id },
    });
  });

  const existing = (module: string, id: string): Row => {
    const row = rowOf(module, id);
    if (!row) throw new RecordError('INVALID_DATA', 'the related id given seems to be invalid', { id });
    return row;
  };

  router.put('/crm/v6/:module/:id', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const row = existing(module, ctx.params.id);
    edit(row, writeBody(module, ctx.request.body, false), now());
    ctx.body = success('record updated', {
      Modified_Time: row.record.Modified_Time,
      Modified_By: { name: user.name, id: user.id },
      Created_Time: row.record.Created_Time,
      id: row.record.id,
      Created_By: { name: user.name, id: user.id },
    });
  });

  router.delete('/crm/v6/:module/:id', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const row = existing(module, ctx.params.id);
    row.deletedMs = toSecond(now());
    ctx.body = success('record deleted', { id: row.record.id });
  });

  await fake.start();

  const liveRow = (module: string, id: string): Row => {
    const row = rowOf(moduleOf(module), id);
    if (!row) throw new Error(`no ${module} ${id} in the fake`);
    return row;
  };

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
    seed(module, modifiedTimes) {
      moduleOf(module);
      return modifiedTimes.map(
        (ms) =>
          insert(module, { ...modules[module].seed, [modules[module].name]: `${module} ${counter + 1}` }, ms)
            .record.id,
      );
    },
    touch(module, id, modifiedMs, options) {
      edit(liveRow(module, id), {}, modifiedMs, options?.visibleFromMs ?? modifiedMs);
    },
    remove(module, id, atMs) {
      liveRow(module, id).deletedMs = toSecond(atMs);
    },
    stored: (module, id) =>
      rows.get(module)?.find((row) => row.record.id === id && row.deletedMs === undefined)?.record,
    stop: () => fake.stop(),
  };
}
