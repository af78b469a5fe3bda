import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for ServiceNow's Table API (https://developer.servicenow.com/dev.do#!/reference/api/latest/rest/c_TableAPI),
 * tables `incident` and `sys_user`, answering as its reference, the inbound REST rate-limiting page
 * (https://www.servicenow.com/docs/r/api-reference/rest-api-explorer/inbound-REST-API-rate-limiting.html)
 * and the encoded-query pages document:
 *
 * - `GET /api/now/table/{table}` answers `{result: [...]}`; `sysparm_limit` (default 10000, the
 *   most one answer holds) and `sysparm_offset`; a `Link` header (`first`, `prev`, `next`, `last`,
 *   `next` absent on the last page) and `X-Total-Count`.
 * - `sysparm_query`, an encoded query: conditions joined by `^` (`field=value`, `!=`, `>`, `>=`,
 *   `<`, `<=`), `ORDERBY<field>` / `ORDERBYDESC<field>`. Without an order the rows come in no time
 *   order (here: by sys_id, which is random). Times compare as `YYYY-MM-DD HH:MM:SS` in the
 *   integration user's time zone (UTC here), or `javascript:gs.dateGenerate('date','time')`. A
 *   condition on a field the table does not have is ignored, as an instance without
 *   `glide.invalid_query.returns_no_rows` does.
 * - `sysparm_fields`: only those fields come back (sys_id too only when named).
 * - Every value is a string; times `2024-01-01 12:00:00`, UTC, whole seconds; a reference field is
 *   `{link, value}` unless `sysparm_exclude_reference_link=true`.
 * - `POST` (201 `{result}`), `GET`/`PUT`/`PATCH` `/{sys_id}` (200 `{result}`), `DELETE` (204).
 *   Fields the table does not have are ignored on writes. A deleted record is gone: the Table API
 *   lists it nowhere (the audit of deletions is another, admin-only table).
 * - Errors `{error: {message, detail}, status: 'failure'}`; a rate-limit rule's 429 carries
 *   `Retry-After`, `X-RateLimit-Limit` (an hour's requests), `X-RateLimit-Reset` (epoch seconds) and
 *   `X-RateLimit-Rule`. Rules are set per instance by its administrators (no default limit): none here.
 * - OAuth2 bearer tokens (the instance's `oauth_token.do`; here the kit's token endpoint).
 */

type Row = Record<string, unknown> & { sys_id: string };

const tables = ['incident', 'sys_user'] as const;
type Table = (typeof tables)[number];
const maxLimit = 10_000;

/** The fields of each table, with the reference fields apart (their target table). */
const columns: Record<Table, string[]> = {
  incident: [
    'number',
    'short_description',
    'description',
    'urgency',
    'impact',
    'priority',
    'state',
    'category',
    'active',
    'caller_id',
    'assigned_to',
  ],
  sys_user: ['user_name', 'first_name', 'last_name', 'email', 'title', 'phone', 'active', 'manager'],
};
const references: Record<string, string> = {
  caller_id: 'sys_user',
  assigned_to: 'sys_user',
  manager: 'sys_user',
};
const system = [
  'sys_id',
  'sys_created_on',
  'sys_created_by',
  'sys_updated_on',
  'sys_updated_by',
  'sys_mod_count',
];

const second = (ms: number) => Math.floor(ms / 1000) * 1000;
const snTime = (ms: number) => new Date(second(ms)).toISOString().slice(0, 19).replace('T', ' ');
const sysId = (n: number) => createHash('md5').update(`sys-${n}`).digest('hex');

function parseTime(value: string): number | undefined {
  const generated = /^javascript:gs\.dateGenerate\('(\d{4}-\d{2}-\d{2})','(\d{2}:\d{2}:\d{2})'\)$/.exec(
    value,
  );
  const text = generated ? `${generated[1]} ${generated[2]}` : value;
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/.exec(text);
  return match ? Date.parse(`${match[1]}T${match[2]}Z`) : undefined;
}

type Condition = { field: string; op: string; value: string };

/** An encoded query's conditions and order (only what this fake models: AND of comparisons). */
function parseQuery(query: string, known: Set<string>) {
  const conditions: Condition[] = [];
  const order: { field: string; desc: boolean }[] = [];
  for (const part of query.split('^').filter(Boolean)) {
    const ordered = /^ORDERBY(DESC)?(\w+)$/.exec(part);
    if (ordered) {
      order.push({ field: ordered[2], desc: Boolean(ordered[1]) });
      continue;
    }
    if (part === 'NQ' || part.startsWith('OR'))
      throw new FakeHttpError(400, 'OR queries are not modeled by this fake', 'unsupported');
    const match = /^(\w+)(>=|<=|!=|=|>|<)(.*)$/.exec(part);
    if (!match) throw new FakeHttpError(400, `Invalid encoded query: ${part}`);
    // An unknown field's condition is ignored, as the instance does by default.
    if (known.has(match[1])) conditions.push({ field: match[1], op: match[2], value: match[3] });
  }
  return { conditions, order };
}

export async function startFakeServiceNow(): Promise<ConformanceFake> {
  const stores: Record<Table, RecordStore<Row>> = {
    incident: new RecordStore<Row>(),
    sys_user: new RecordStore<Row>(),
  };
  let counter = 0;
  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      error:
        error.status === 401
          ? { message: 'User Not Authenticated', detail: 'Required to provide Auth information' }
          : error.status === 429
            ? {
                message: 'Rate limit exceeded',
                detail: 'The request exceeds the rate limit rule for this user',
              }
            : error.status === 404 && error.code === 'record'
              ? {
                  message: 'No Record found',
                  detail: "Record doesn't exist or ACL restricts the record retrieval",
                }
              : { message: error.message, detail: error.code ?? null },
      status: 'failure',
    }),
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '1000',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 3_600_000) * 3600),
      'x-ratelimit-rule': 'a2b6c7d8e9f00112233445566778899a',
    }),
  });

  const tableOf = (ctx: Context): Table => {
    const table = ctx.params.table as Table;
    if (!tables.includes(table))
      throw new FakeHttpError(400, 'Invalid table', `Invalid table ${ctx.params.table}`);
    return table;
  };
  const known = (table: Table) => new Set([...columns[table], ...system]);

  /** What a listing shows of a row now: its visible version's time (a late commit shows its older one). */
  const before = new Map<string, { record: Row; modifiedMs: number }>();
  const shown = (table: Table) =>
    stores[table]
      .live()
      .flatMap((row) =>
        row.visibleFromMs !== undefined && row.visibleFromMs > fake.now()
          ? before.has(row.record.sys_id)
            ? [before.get(row.record.sys_id)!]
            : []
          : [{ record: row.record, modifiedMs: row.modifiedMs }],
      );

  const view = (table: Table, record: Row, ctx: Context) => {
    const exclude = String(ctx.query.sysparm_exclude_reference_link ?? 'false') === 'true';
    const wanted = ctx.query.sysparm_fields
      ? String(ctx.query.sysparm_fields)
          .split(',')
          .map((f) => f.trim())
      : undefined;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) {
      if (wanted && !wanted.includes(key)) continue;
      out[key] =
        references[key] && value !== '' && !exclude
          ? { link: `${fake.url}/api/now/table/${references[key]}/${String(value)}`, value }
          : value;
    }
    return out;
  };

  const rowOf = (table: Table, id: string) => {
    const row = stores[table].get(id);
    if (!row) throw new FakeHttpError(404, 'No Record found', 'record');
    return row.record;
  };

  /** A write's body: every value kept as text; fields the table lacks, and system fields, ignored. */
  const apply = (table: Table, record: Row, body: unknown) => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Exception while reading request', 'The payload is not valid JSON.');
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (!columns[table].includes(key)) continue;
      record[key] =
        value === null || value === undefined
          ? ''
          : typeof value === 'object'
            ? JSON.stringify(value)
            : String(value);
    }
  };

  const stamp = (table: Table, record: Row, ms: number, visibleFromMs?: number) => {
    const previous = stores[table].get(record.sys_id);
    if (visibleFromMs !== undefined && previous)
      before.set(record.sys_id, { record: { ...previous.record }, modifiedMs: previous.modifiedMs });
    else before.delete(record.sys_id);
    record.sys_updated_on = snTime(ms);
    record.sys_updated_by = 'integration';
    record.sys_mod_count = String(Number(record.sys_mod_count ?? -1) + 1);
    stores[table].put(record.sys_id, record, second(ms), visibleFromMs);
  };

  const create = (table: Table, body: unknown, ms: number): Row => {
    const n = ++counter;
    const record: Row = { sys_id: sysId(n) };
    for (const column of columns[table]) record[column] = '';
    if (table === 'incident')
      Object.assign(record, {
        number: `INC${String(10000 + n).padStart(7, '0')}`,
        urgency: '3',
        impact: '3',
        priority: '5',
        state: '1',
        active: 'true',
      });
    else record.active = 'true';
    apply(table, record, body);
    record.sys_created_on = snTime(ms);
    record.sys_created_by = 'integration';
    stamp(table, record, ms);
    return record;
  };

  const router = fake.router;

  router.get('/api/now/table/:table', (ctx) => {
    const table = tableOf(ctx);
    const asked = ctx.query.sysparm_limit === undefined ? maxLimit : Number(ctx.query.sysparm_limit);
    const offset = Number(ctx.query.sysparm_offset ?? 0);
    fake.logListing(ctx, { object: table, pageSize: asked, maxPageSize: maxLimit });
    if (!Number.isInteger(asked) || asked < 1)
      throw new FakeHttpError(400, `limit is ${String(ctx.query.sysparm_limit)}`, 'Invalid sysparm_limit');
    if (!Number.isInteger(offset) || offset < 0)
      throw new FakeHttpError(
        400,
        `offset is ${String(ctx.query.sysparm_offset)}`,
        'Negative offset is not supported',
      );
    const limit = Math.min(asked, maxLimit);
    const { conditions, order } = parseQuery(String(ctx.query.sysparm_query ?? ''), known(table));
    const valueOf = (row: { record: Row; modifiedMs: number }, field: string): number | string =>
      field === 'sys_updated_on'
        ? row.modifiedMs
        : field === 'sys_created_on'
          ? parseTime(String(row.record.sys_created_on))!
          : String(row.record[field] ?? '');
    const rows = shown(table)
      .filter((row) =>
        conditions.every(({ field, op, value }) => {
          const have = valueOf(row, field);
          let want: number | string = value;
          if (typeof have === 'number') {
            const time = parseTime(value);
            if (time === undefined)
              throw new FakeHttpError(400, `Invalid date: ${value}`, 'Dates are written yyyy-MM-dd HH:mm:ss');
            want = time;
          }
          switch (op) {
            case '=':
              return have === want;
            case '!=':
              return have !== want;
            case '>':
              return have > want;
            case '>=':
              return have >= want;
            case '<':
              return have < want;
            default:
              return have <= want;
          }
        }),
      )
      .sort((a, b) => {
        for (const { field, desc } of order) {
          const [x, y] = [valueOf(a, field), valueOf(b, field)];
          if (x !== y) return (x < y ? -1 : 1) * (desc ? -1 : 1);
        }
        return a.record.sys_id < b.record.sys_id ? -1 : a.record.sys_id > b.record.sys_id ? 1 : 0;
      });
    const link = (at: number, rel: string) => {
      const query = new URLSearchParams(ctx.querystring);
      query.set('sysparm_limit', String(limit));
      query.set('sysparm_offset', String(at));
      return `<${fake.url}/api/now/table/${table}?${query}>;rel="${rel}"`;
    };
    const last = Math.max(0, Math.floor((rows.length - 1) / limit) * limit);
    const links = [link(0, 'first')];
    if (offset > 0) links.push(link(Math.max(0, offset - limit), 'prev'));
    if (offset + limit < rows.length) links.push(link(offset + limit, 'next'));
    links.push(link(last, 'last'));
    ctx.set('Link', links.join(','));
    ctx.set('X-Total-Count', String(rows.length));
    ctx.body = { result: rows.slice(offset, offset + limit).map((row) => view(table, row.record, ctx)) };
  });

  router.get('/api/now/table/:table/:id', (ctx) => {
    const table = tableOf(ctx);
    ctx.body = { result: view(table, rowOf(table, ctx.params.id), ctx) };
  });

  router.post('/api/now/table/:table', (ctx) => {
    const table = tableOf(ctx);
    const record = create(table, ctx.request.body, fake.now());
    ctx.status = 201;
    ctx.set('Location', `${fake.url}/api/now/table/${table}/${record.sys_id}`);
    ctx.body = { result: view(table, record, ctx) };
  });

  const update = (ctx: Context) => {
    const table = tableOf(ctx);
    const record = rowOf(table, ctx.params.id);
    apply(table, record, ctx.request.body);
    stamp(table, record, fake.now());
    ctx.body = { result: view(table, record, ctx) };
  };
  router.patch('/api/now/table/:table/:id', update);
  router.put('/api/now/table/:table/:id', update);

  router.delete('/api/now/table/:table/:id', (ctx) => {
    const table = tableOf(ctx);
    rowOf(table, ctx.params.id);
    stores[table].remove(ctx.params.id, second(fake.now()));
    ctx.status = 204;
  });

  await fake.start();

  const tableNamed = (object: string): Table => {
    if (!tables.includes(object as Table)) throw new Error(`The ServiceNow fake has no ${object}`);
    return object as Table;
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
    seed: (object, modifiedTimes) => {
      const table = tableNamed(object);
      return modifiedTimes.map((ms) => {
        const n = counter + 1;
        const body =
          table === 'incident'
            ? {
                short_description: `Seed incident ${n}`,
                description: `Seeded ${n}`,
                category: 'inquiry',
                caller_id: sysId(1),
              }
            : {
                user_name: `seed.${n}`,
                first_name: 'Seed',
                last_name: String(n),
                email: `seed${n}@example.com`,
                title: 'Engineer',
                manager: sysId(1),
              };
        return create(table, body, ms).sys_id;
      });
    },
    touch(object, id, modifiedMs, options) {
      const table = tableNamed(object);
      stamp(table, rowOf(table, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      stores[tableNamed(object)].remove(id, second(atMs));
    },
    stored: (object, id) => stores[tableNamed(object)].get(id)?.record,
    stop: () => fake.stop(),
  };
}
