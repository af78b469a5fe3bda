import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for the Zoho CRM REST API v6 as its reference describes it:
 * `GET /crm/v6/{module}` with `fields` (required, at most 50), `per_page` (≤ 200), `page` or
 * `page_token`, `sort_by`/`sort_order`, and an `If-Modified-Since` header (records modified after
 * it; 304 with no body when there are none); `{data, info: {per_page, count, page, sort_by,
 * sort_order, more_records, next_page_token, previous_page_token, page_token_expiry}}`, 204 with
 * no body when a module has no records; `GET /crm/v6/{module}/{id}`; `GET …/search?criteria=
 * (Field:equals:value)` (parentheses and commas in a value escaped with a backslash) with
 * `page`/`per_page`; writes `POST /crm/v6/{module}` and `PUT …/{id}` with `{data: [record]}`,
 * `DELETE …/{id}`, each answering `{data: [{code, details, message, status}]}`;
 * `GET /crm/v6/settings/fields?module=`; errors as `{code, details, message, status: "error"}`;
 * credentials as `Authorization: Zoho-oauthtoken <token>`. Only what Ferry uses.
 */

const modules: Record<string, { name: string; seed: Record<string, unknown> }> = {
  Leads: { name: 'Last_Name', seed: { Company: 'Acme' } },
  Contacts: { name: 'Last_Name', seed: {} },
  Accounts: { name: 'Account_Name', seed: {} },
  Deals: { name: 'Deal_Name', seed: { Stage: 'Qualification' } },
};

interface ZohoField {
  api_name: string;
  field_label: string;
  display_label: string;
  data_type: string;
  read_only: boolean;
  field_read_only: boolean;
  system_mandatory: boolean;
  custom_field: boolean;
  pick_list_values: { display_value: string; actual_value: string; id: string }[];
}

type ZohoRecord = Record<string, unknown> & { id: string; Modified_Time: string };

function field(api: string, type: string, label: string, extra: Partial<ZohoField> = {}): ZohoField {
  return {
    api_name: api,
    field_label: label,
    display_label: label,
    data_type: type,
    read_only: false,
    field_read_only: false,
    system_mandatory: false,
    custom_field: false,
    pick_list_values: [],
    ...extra,
  };
}

const picklist = (...values: string[]) =>
  values.map((value, i) => ({ display_value: value, actual_value: value, id: `90000${i}` }));

function fieldsOf(module: string): ZohoField[] {
  const system = { read_only: true, field_read_only: true };
  const common = [
    field('Owner', 'ownerlookup', 'Owner'),
    field('Created_Time', 'datetime', 'Created Time', system),
    field('Modified_Time', 'datetime', 'Modified Time', system),
    field(modules[module].name, 'text', modules[module].name.replace('_', ' '), { system_mandatory: true }),
  ];
  switch (module) {
    case 'Leads':
      return [
        ...common,
        field('Company', 'text', 'Company', { system_mandatory: true }),
        field('Email', 'email', 'Email'),
        field('Lead_Status', 'picklist', 'Lead Status', {
          pick_list_values: picklist('-None-', 'Contacted'),
        }),
        field('Tier', 'picklist', 'Tier', {
          custom_field: true,
          pick_list_values: picklist('Gold', 'Silver'),
        }),
      ];
    case 'Contacts':
      return [...common, field('First_Name', 'text', 'First Name'), field('Email', 'email', 'Email')];
    case 'Deals':
      return [
        ...common,
        field('Stage', 'picklist', 'Stage', {
          system_mandatory: true,
          pick_list_values: picklist('Qualification'),
        }),
        field('Amount', 'currency', 'Amount'),
        field('Closing_Date', 'date', 'Closing Date'),
      ];
    default:
      return [...common, field('Website', 'website', 'Website'), field('Employees', 'integer', 'Employees')];
  }
}

/** Zoho writes times in the account's time zone with an offset (UTC here). */
const zohoTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
const msOf = (record: ZohoRecord) => Date.parse(record.Modified_Time);

function zohoError(status: number, code: string, message: string): FakeHttpError {
  return new FakeHttpError(status, message, code);
}

export async function startFakeZoho(): Promise<ConformanceFake> {
  const records = new Map<string, ZohoRecord[]>(Object.keys(modules).map((name) => [name, []]));
  /** Page tokens: each stands for its query's matches and the next offset. */
  const tokens = new Map<string, { ids: string[]; offset: number; fields: string[] }>();
  let counter = 0;

  const fake = new FakeProvider({
    credentialOf: (ctx) => /^Zoho-oauthtoken\s+(.+)$/.exec(ctx.get('authorization'))?.[1],
    errorBody: (error) =>
      error.status === 401
        ? { code: 'INVALID_TOKEN', details: {}, message: 'invalid oauth token', status: 'error' }
        : {
            code: error.code ?? (error.status === 429 ? 'TOO_MANY_REQUESTS' : 'INTERNAL_ERROR'),
            details: {},
            message: error.message,
            status: 'error',
          },
    rateLimitCode: 'TOO_MANY_REQUESTS',
  });

  const moduleOf = (name: string): string => {
    if (!Object.hasOwn(modules, name)) {
      throw zohoError(400, 'INVALID_MODULE', 'the module name given seems to be invalid');
    }
    return name;
  };
  const newId = () => `5725767000000${String(++counter).padStart(6, '0')}`;
  const project = (module: string, record: ZohoRecord, fields?: string[]) =>
    fields ? Object.fromEntries(['id', ...fields].map((name) => [name, record[name] ?? null])) : record;
  const perPageOf = (ctx: Context): number => {
    const perPage = ctx.query.per_page === undefined ? 200 : Number(ctx.query.per_page);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 200) {
      throw zohoError(400, 'INVALID_DATA', 'invalid data: per_page');
    }
    return perPage;
  };
  const success = (message: string, details: Record<string, unknown>) => ({
    data: [{ code: 'SUCCESS', details, message, status: 'success' }],
  });
  /** `{data: [record]}`, one record, its fields known and mandatory ones present on insert. */
  const writeBody = (module: string, body: unknown, creating: boolean): Record<string, unknown> => {
    const list = (body as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(list) || list.length !== 1 || !list[0] || typeof list[0] !== 'object') {
      throw zohoError(400, 'INVALID_DATA', 'body must hold one record in data');
    }
    const values = list[0] as Record<string, unknown>;
    const fields = new Map(fieldsOf(module).map((f) => [f.api_name, f]));
    for (const name of Object.keys(values)) {
      const found = fields.get(name);
      if (found?.read_only) throw zohoError(400, 'INVALID_DATA', `the field ${name} is read only`);
    }
    if (creating) {
      const missing = fieldsOf(module).find((f) => f.system_mandatory && !values[f.api_name]);
      if (missing) throw zohoError(400, 'MANDATORY_NOT_FOUND', 'required field not found');
    }
    return values;
  };

  const router = fake.router;

  router.get('/crm/v6/settings/fields', (ctx) => {
    const module = moduleOf(typeof ctx.query.module === 'string' ? ctx.query.module : '');
    ctx.body = { fields: fieldsOf(module) };
  });

  router.get('/crm/v6/:module/search', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const criteria = typeof ctx.query.criteria === 'string' ? ctx.query.criteria : '';
    const known = new Set(['id', ...fieldsOf(module).map((f) => f.api_name)]);
    const tests: ((record: ZohoRecord) => boolean)[] = [];
    // `(Field:equals:value)` groups joined by `and`; `\` escapes `(`, `)`, `,` and itself in a value.
    const group = /\((\w+):equals:((?:\\.|[^\\()])*)\)/gy;
    let at = 0;
    while (at < criteria.length) {
      group.lastIndex = at;
      const match = group.exec(criteria);
      if (!match) throw zohoError(400, 'INVALID_QUERY', 'invalid query formed');
      const [, name, escaped] = match;
      if (!known.has(name)) throw zohoError(400, 'INVALID_QUERY', `invalid query formed: ${name}`);
      const value = escaped.replace(/\\(.)/g, '$1').toLowerCase();
      tests.push((record) => String(record[name] ?? '').toLowerCase() === value);
      at = group.lastIndex;
      if (criteria.startsWith('and', at)) at += 3;
    }
    if (!tests.length)
      throw zohoError(400, 'REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing');
    const perPage = perPageOf(ctx);
    const page = Number(ctx.query.page ?? 1);
    const found = records.get(module)!.filter((record) => tests.every((test) => test(record)));
    const slice = found.slice((page - 1) * perPage, page * perPage);
    if (!slice.length) {
      ctx.status = 204;
      return;
    }
    ctx.body = {
      data: slice,
      info: { per_page: perPage, count: slice.length, page, more_records: page * perPage < found.length },
    };
  });

  router.get('/crm/v6/:module', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const perPage = perPageOf(ctx);
    let ids: string[];
    let offset: number;
    let fields: string[];
    if (typeof ctx.query.page_token === 'string') {
      const held = tokens.get(ctx.query.page_token);
      if (!held) throw zohoError(400, 'INVALID_DATA', 'invalid data: page_token');
      ({ ids, offset, fields } = held);
    } else {
      const named = typeof ctx.query.fields === 'string' ? ctx.query.fields.split(',').filter(Boolean) : [];
      if (!named.length) {
        throw zohoError(400, 'REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing');
      }
      if (named.length > 50)
        throw zohoError(400, 'LIMIT_EXCEEDED', 'the number of fields exceeds the limit of 50');
      fields = named;
      const header = ctx.get('if-modified-since');
      const modifiedAfter = header ? Date.parse(header) : undefined;
      if (header && !Number.isFinite(modifiedAfter))
        throw zohoError(400, 'INVALID_DATA', 'invalid If-Modified-Since');
      const byModified = ctx.query.sort_by === 'Modified_Time';
      const descending = ctx.query.sort_order !== 'asc';
      const matching = records
        .get(module)!
        .filter((record) => modifiedAfter === undefined || msOf(record) > modifiedAfter!)
        .sort((a, b) => (byModified ? msOf(a) - msOf(b) : 0) || a.id.localeCompare(b.id));
      if (descending) matching.reverse();
      if (modifiedAfter !== undefined && !matching.length) {
        ctx.status = 304;
        return;
      }
      ids = matching.map((record) => record.id);
      const page = Number(ctx.query.page ?? 1);
      offset = (page - 1) * perPage;
    }
    const byId = new Map(records.get(module)!.map((record) => [record.id, record]));
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
      tokens.set(next, { ids, offset: offset + perPage, fields });
    }
    ctx.body = {
      data: slice.map((record) => project(module, record, fields)),
      info: {
        per_page: perPage,
        count: slice.length,
        page: Math.floor(offset / perPage) + 1,
        sort_by: ctx.query.sort_by ?? 'id',
        sort_order: ctx.query.sort_order ?? 'desc',
        more_records: more,
        next_page_token: next,
        previous_page_token: null,
        page_token_expiry: more ? new Date(Date.now() + 86_400_000).toISOString() : null,
      },
    };
  });

  router.get('/crm/v6/:module/:id', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const record = records.get(module)!.find((r) => r.id === ctx.params.id);
    if (!record) {
      ctx.status = 204;
      return;
    }
    ctx.body = { data: [record] };
  });

  router.post('/crm/v6/:module', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const values = writeBody(module, ctx.request.body, true);
    const now = zohoTime(Date.now());
    const id = newId();
    records.get(module)!.push({ ...values, id, Created_Time: now, Modified_Time: now });
    ctx.status = 201;
    ctx.body = success('record added', { id, Created_Time: now, Modified_Time: now });
  });

  const existing = (module: string, id: string): ZohoRecord => {
    const record = records.get(module)!.find((r) => r.id === id);
    if (!record) throw zohoError(400, 'INVALID_DATA', 'the related id given seems to be invalid');
    return record;
  };

  router.put('/crm/v6/:module/:id', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const record = existing(module, ctx.params.id);
    Object.assign(record, writeBody(module, ctx.request.body, false), {
      Modified_Time: zohoTime(Date.now()),
    });
    ctx.body = success('record updated', { id: record.id, Modified_Time: record.Modified_Time });
  });

  router.delete('/crm/v6/:module/:id', (ctx) => {
    const module = moduleOf(ctx.params.module);
    const record = existing(module, ctx.params.id);
    records.set(
      module,
      records.get(module)!.filter((r) => r !== record),
    );
    ctx.body = success('record deleted', { id: record.id });
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
    seed(module, modifiedTimes) {
      moduleOf(module);
      return modifiedTimes.map((ms) => {
        const id = newId();
        records.get(module)!.push({
          ...modules[module].seed,
          [modules[module].name]: `${module} ${counter}`,
          Owner: { name: 'Ada Admin', id: '5725767000000100001', email: 'ada@example.com' },
          id,
          Created_Time: zohoTime(ms),
          Modified_Time: zohoTime(ms),
        });
        return id;
      });
    },
    touch(module, id, modifiedMs) {
      existing(module, id).Modified_Time = zohoTime(modifiedMs);
    },
    stored: (module, id) => records.get(module)?.find((record) => record.id === id),
    stop: () => fake.stop(),
  };
}
