import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { basicUserCredential, FakeHttpError, FakeProvider, type StoredRecord } from '../kit/fake-provider.js';

/**
 * A local stand-in for Recurly's API v2021-02-25 (https://recurly.com/developers/api/v2021-02-25/),
 * written from its reference and guides (pagination, versioning, errors, rate limits):
 *
 * - Auth: the private API key as the Basic user name. The version is asked for in `Accept:
 *   application/vnd.recurly.v2021-02-25` (`+json` too); a request without a version gets the
 *   newest, an unknown version a 406 `invalid_api_version`; answers carry `Recurly-Version`.
 * - Times ISO 8601 to the second (`2019-10-31T18:33:31Z`); a stored time is truncated to its second.
 * - Lists (`GET /accounts`, `/subscriptions`, `/invoices`): `limit` 1 to 200 (default 20),
 *   `sort` `created_at` (default) or `updated_at`, `order` `desc` (default) or `asc`,
 *   `begin_time`/`end_time` on the sort's timestamp, both bounds included, `ids`; accounts also
 *   `state` (`active`, `inactive`), `email`; answers `{object: "list", has_more, next, data}` where
 *   `next` is the path of the next page (the query, with a `cursor` standing for the position
 *   after the page's last record in the sort), null on the last page.
 * - Accounts: `POST /accounts` (201; `code` required and unique, else 422 `validation`), `PUT
 *   /accounts/{account_id}` (200), `DELETE /accounts/{account_id}` deactivates (200: the account,
 *   `state: inactive`, `deleted_at` and `updated_at` stamped): inactive accounts stay listed; an
 *   account is addressed by `id` or `code-<code>`. `custom_fields` is a list of `{name, value}`
 *   whose names must be defined (`GET /custom_field_definitions`); a write changes only the names
 *   it sends. Unknown members are refused (400 `bad_request`: a stricter reading than the
 *   reference states). Subscriptions and invoices are read here; neither is ever deleted.
 * - Errors `{error: {type, message, params?: [{param, message}]}}`; `X-RateLimit-Limit`,
 *   `-Remaining`, `-Reset` (Unix seconds) on answers; a 429 `rate_limited`.
 */

type RecurlyRecord = Record<string, unknown> & { id: string };
type Row = StoredRecord<RecurlyRecord> & { seq: number; createdMs: number };

const objects = ['accounts', 'subscriptions', 'invoices'] as const;
type RecurlyObject = (typeof objects)[number];
const singular: Record<RecurlyObject, string> = {
  accounts: 'account',
  subscriptions: 'subscription',
  invoices: 'invoice',
};
const LIMIT_MAX = 200;
const LIMIT_DEFAULT = 20;
const VERSION = 'v2021-02-25';
const KNOWN_VERSIONS = ['v2019-10-10', 'v2021-02-25'];
const customFieldDefinitions = [
  { name: 'tier', display_name: 'Tier', user_access: 'write' },
  { name: 'account_manager', display_name: 'Account manager', user_access: 'write' },
];
const accountMembers = [
  'code',
  'username',
  'email',
  'preferred_locale',
  'cc_emails',
  'first_name',
  'last_name',
  'company',
  'vat_number',
  'tax_exempt',
  'bill_to',
  'address',
  'custom_fields',
];

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const recurlyTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');

function errorType(error: FakeHttpError): string {
  if (error.status === 401) return 'unauthorized';
  if (error.status === 429) return 'rate_limited';
  if (error.status >= 500) return 'internal_server_error';
  return error.code ?? (error.status === 404 ? 'not_found' : 'bad_request');
}

const validation = (param: string, message: string) =>
  Object.assign(new FakeHttpError(422, `${param} ${message}`, 'validation'), {
    params: [{ param, message }],
  });

export async function startFakeRecurly(): Promise<ConformanceFake> {
  const stores: Record<RecurlyObject, Map<string, Row>> = {
    accounts: new Map(),
    subscriptions: new Map(),
    invoices: new Map(),
  };
  let seq = 1;

  const fake: FakeProvider = new FakeProvider({
    credentialOf: basicUserCredential,
    errorBody: (error) => ({
      error: {
        type: errorType(error),
        message:
          error.status === 401
            ? 'The API key is not valid for this site.'
            : error.status === 429
              ? 'You have made too many API requests in the last 5 minutes.'
              : error.message,
        ...((error as { params?: unknown }).params !== undefined && {
          params: (error as { params?: unknown }).params,
        }),
        ...(error.code === 'invalid_api_version' && {
          acceptable_accept_headers: KNOWN_VERSIONS.map((version) => `application/vnd.recurly.${version}`),
        }),
      },
    }),
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '2000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(fake.now() / 1000) + 300),
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    const accept = ctx.get('accept');
    const asked = /application\/vnd\.recurly\.(v\d{4}-\d{2}-\d{2})(\+json)?/.exec(accept)?.[1];
    if (asked && !KNOWN_VERSIONS.includes(asked))
      throw new FakeHttpError(
        406,
        "That accept header isn't in the format we use to specify an API version.",
        'invalid_api_version',
      );
    ctx.set('recurly-version', `recurly.${asked ?? VERSION}`);
    ctx.set('x-ratelimit-limit', '2000');
    ctx.set('x-ratelimit-remaining', '1999');
    ctx.set('x-ratelimit-reset', String(Math.ceil(now() / 1000) + 300));
    await next();
  });

  const put = (object: RecurlyObject, record: RecurlyRecord, ms: number): Row => {
    const row: Row = { record, modifiedMs: wholeSecond(ms), createdMs: wholeSecond(ms), seq: seq++ };
    stores[object].set(record.id, row);
    return row;
  };
  const newId = () => `r${(seq * 7919).toString(36).padStart(11, '0')}`;
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.updated_at = recurlyTime(ms);
  };

  const newAccount = (values: Record<string, unknown>, ms: number): RecurlyRecord => ({
    id: newId(),
    object: 'account',
    state: 'active',
    hosted_login_token: `hlt${seq}`,
    has_live_subscription: false,
    has_active_subscription: false,
    has_future_subscription: false,
    has_canceled_subscription: false,
    has_paused_subscription: false,
    has_past_due_invoice: false,
    username: null,
    email: null,
    preferred_locale: null,
    cc_emails: null,
    first_name: null,
    last_name: null,
    company: null,
    vat_number: null,
    tax_exempt: false,
    bill_to: 'self',
    address: null,
    custom_fields: [],
    ...values,
    created_at: recurlyTime(ms),
    updated_at: recurlyTime(ms),
    deleted_at: null,
  });
  const fixtureMs = Date.UTC(2020, 0, 1);
  const fixture = put(
    'accounts',
    newAccount({ code: 'fixture', email: 'fixture@example.com' }, fixtureMs),
    fixtureMs,
  );
  const accountMini = () => ({
    object: 'account',
    id: fixture.record.id,
    code: 'fixture',
    email: 'fixture@example.com',
    first_name: null,
    last_name: null,
    company: null,
    parent_account_id: null,
    bill_to: 'self',
  });

  const objectOf = (ctx: Context): RecurlyObject => {
    const object = ctx.params.object as RecurlyObject;
    if (!objects.includes(object))
      throw new FakeHttpError(404, `Couldn't find resource ${ctx.path}`, 'not_found');
    return object;
  };
  /** By id, or `code-<code>` (accounts). */
  const rowOf = (object: RecurlyObject, key: string): Row => {
    const row = key.startsWith('code-')
      ? [...stores[object].values()].find((candidate) => candidate.record.code === key.slice(5))
      : stores[object].get(key);
    if (!row) throw new FakeHttpError(404, `Couldn't find ${singular[object]} with id = ${key}`, 'not_found');
    return row;
  };

  const timeParam = (ctx: Context, name: string): number | undefined => {
    const value = ctx.query[name];
    if (value === undefined) return undefined;
    const ms =
      typeof value === 'string' ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`) : NaN;
    if (Number.isNaN(ms))
      throw new FakeHttpError(400, `${name} is not a valid ISO8601 timestamp`, 'bad_request');
    return ms;
  };

  router.get('/custom_field_definitions', (ctx) => {
    ctx.body = {
      object: 'list',
      has_more: false,
      next: null,
      data: customFieldDefinitions.map((definition, index) => ({
        id: `cfd${index + 1}`,
        object: 'custom_field_definition',
        related_type: 'account',
        ...definition,
        tooltip: null,
        created_at: recurlyTime(fixtureMs),
        updated_at: recurlyTime(fixtureMs),
        deleted_at: null,
      })),
    };
  });

  router.get('/:object', (ctx) => {
    const object = objectOf(ctx);
    const known = ['limit', 'order', 'sort', 'begin_time', 'end_time', 'ids', 'cursor'];
    if (object === 'accounts') known.push('state', 'email', 'subscriber', 'past_due');
    if (object !== 'accounts') known.push('state');
    for (const name of Object.keys(ctx.query)) {
      if (!known.includes(name))
        throw new FakeHttpError(400, `${name} is not a permitted parameter`, 'bad_request');
    }
    const limit = ctx.query.limit === undefined ? LIMIT_DEFAULT : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX)
      throw new FakeHttpError(400, `limit must be between 1 and ${LIMIT_MAX}`, 'bad_request');
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: LIMIT_MAX });
    const sort = String(ctx.query.sort ?? 'created_at');
    if (!['created_at', 'updated_at'].includes(sort))
      throw new FakeHttpError(400, 'sort must be created_at or updated_at', 'bad_request');
    const order = String(ctx.query.order ?? 'desc');
    if (!['asc', 'desc'].includes(order))
      throw new FakeHttpError(400, 'order must be asc or desc', 'bad_request');
    const begin = timeParam(ctx, 'begin_time');
    const end = timeParam(ctx, 'end_time');
    const ids = ctx.query.ids === undefined ? undefined : String(ctx.query.ids).split(',');
    const state = ctx.query.state === undefined ? undefined : String(ctx.query.state);
    const email = ctx.query.email === undefined ? undefined : String(ctx.query.email);
    const sign = order === 'asc' ? 1 : -1;
    const key = (row: Row): [number, number] => [
      sort === 'updated_at' ? row.modifiedMs : row.createdMs,
      row.seq,
    ];
    const compare = (a: [number, number], b: [number, number]) => (a[0] - b[0] || a[1] - b[1]) * sign;
    let after: [number, number] | undefined;
    if (ctx.query.cursor !== undefined) {
      const match = /^(\d+):(\d+)$/.exec(Buffer.from(String(ctx.query.cursor), 'base64url').toString('utf8'));
      if (!match) throw new FakeHttpError(400, 'cursor is invalid', 'bad_request');
      after = [Number(match[1]), Number(match[2])];
    }
    const found = [...stores[object].values()]
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => {
        const [time] = key(row);
        return (
          (begin === undefined || time >= begin) &&
          (end === undefined || time <= end) &&
          (!ids || ids.includes(row.record.id)) &&
          (state === undefined || row.record.state === state) &&
          (email === undefined || row.record.email === email)
        );
      })
      .map((row) => ({ row, at: key(row) }))
      .sort((a, b) => compare(a.at, b.at))
      .filter(({ at }) => !after || compare(at, after) > 0);
    const page = found.slice(0, limit);
    let next: string | null = null;
    if (found.length > limit) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(ctx.query))
        if (name !== 'cursor') params.set(name, String(value));
      const last = page.at(-1)!.at;
      params.set('cursor', Buffer.from(`${last[0]}:${last[1]}`).toString('base64url'));
      next = `/${object}?${params.toString()}`;
    }
    ctx.body = { object: 'list', has_more: next !== null, next, data: page.map(({ row }) => row.record) };
  });

  router.get('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = rowOf(object, ctx.params.id).record;
  });

  /** An account write's body, checked as Recurly checks it; custom fields merged by name. */
  const accountValues = (ctx: Context, row?: Row): Record<string, unknown> => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (!ctx.is('json') || !body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'The request body must be a JSON object', 'invalid_content_type');
    const values: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      if (!accountMembers.includes(name))
        throw new FakeHttpError(400, `${name} is not a permitted parameter`, 'bad_request');
      if (name === 'custom_fields') {
        if (!Array.isArray(value)) throw validation('custom_fields', 'must be a list of {name, value}');
        const merged = new Map(
          ((row?.record.custom_fields as { name: string; value: string }[]) ?? []).map((field) => [
            field.name,
            field,
          ]),
        );
        for (const field of value as { name?: unknown; value?: unknown }[]) {
          if (!customFieldDefinitions.some((definition) => definition.name === field?.name))
            throw validation('custom_fields', `${String(field?.name)} is not a defined custom field`);
          if (field.value === null || field.value === '') merged.delete(String(field.name));
          else merged.set(String(field.name), { name: String(field.name), value: String(field.value) });
        }
        values.custom_fields = [...merged.values()];
      } else if (
        name === 'email' &&
        value !== null &&
        (typeof value !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
      ) {
        throw validation('email', 'is not a valid email address');
      } else {
        values[name] = value;
      }
    }
    return values;
  };

  router.post('/accounts', (ctx) => {
    const values = accountValues(ctx);
    if (typeof values.code !== 'string' || !values.code) throw validation('code', "can't be blank");
    if ([...stores.accounts.values()].some((row) => row.record.code === values.code))
      throw validation('code', 'has already been taken');
    const ms = now();
    const row = put('accounts', newAccount(values, ms), ms);
    ctx.status = 201;
    ctx.body = row.record;
  });

  router.put('/accounts/:id', (ctx) => {
    const row = rowOf('accounts', ctx.params.id);
    const values = accountValues(ctx, row);
    if ('code' in values && values.code !== row.record.code) {
      if ([...stores.accounts.values()].some((other) => other.record.code === values.code))
        throw validation('code', 'has already been taken');
    }
    Object.assign(row.record, values);
    stamp(row, now());
    ctx.body = row.record;
  });

  const deactivate = (row: Row, ms: number) => {
    row.record.state = 'inactive';
    row.record.deleted_at = recurlyTime(ms);
    row.deleted = true;
    row.deletedMs = wholeSecond(ms);
    stamp(row, ms);
  };

  router.delete('/accounts/:id', (ctx) => {
    const row = rowOf('accounts', ctx.params.id);
    if (row.record.state !== 'inactive') deactivate(row, now());
    ctx.body = row.record;
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as RecurlyObject].get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
    return row;
  };

  return {
    url: fake.url,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    seed: (object, times) =>
      times.map((ms) => {
        const name = object as RecurlyObject;
        const n = seq;
        const t = recurlyTime(ms);
        const record: RecurlyRecord =
          name === 'accounts'
            ? newAccount(
                {
                  code: `acct-${n}`,
                  email: `a${n}@example.com`,
                  first_name: `First${n}`,
                  last_name: `Last${n}`,
                  company: `Company ${n}`,
                  custom_fields: [{ name: 'tier', value: 'gold' }],
                },
                ms,
              )
            : name === 'subscriptions'
              ? {
                  id: newId(),
                  object: 'subscription',
                  uuid: `${n.toString(16).padStart(32, '0')}`,
                  account: accountMini(),
                  plan: { object: 'plan', id: 'plan1', code: 'basic', name: 'Basic' },
                  state: 'active',
                  currency: 'USD',
                  unit_amount: 10,
                  quantity: 1,
                  current_period_started_at: t,
                  current_period_ends_at: recurlyTime(ms + 30 * 86_400_000),
                  activated_at: t,
                  canceled_at: null,
                  expires_at: null,
                  created_at: t,
                  updated_at: t,
                }
              : {
                  id: newId(),
                  object: 'invoice',
                  type: 'charge',
                  origin: 'purchase',
                  state: 'paid',
                  account: accountMini(),
                  number: String(1000 + n),
                  currency: 'USD',
                  total: 10,
                  paid: 10,
                  balance: 0,
                  created_at: t,
                  updated_at: t,
                  due_at: t,
                  closed_at: t,
                };
        return put(name, record, ms).record.id;
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      // Only accounts are ever removed: deactivated, still listed as `inactive`.
      const row = storedRow(object, id);
      if (object === 'accounts') deactivate(row, atMs);
      else stores[object as RecurlyObject].delete(id);
    },
    stored: (object, id) => {
      const row = stores[object as RecurlyObject].get(id);
      return row && !row.deleted ? row.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
