import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { basicUserCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Freshdesk's API v2 (https://developers.freshdesk.com/api/): the API key as
 * the Basic user name; tickets listed with `updated_since`, `order_by`/`order_type`, and only the
 * last 30 days' tickets when `updated_since` is left out; contacts listed with `_updated_since`;
 * companies listed with no filter; `page`/`per_page` (≤ 100) with a `Link: <…>; rel="next"` header
 * while more follow; `POST` (201), `PUT` (200) and `DELETE` (204; tickets and contacts are soft
 * deleted and leave lists) of each; unknown members refused as `invalid_field`; `/ticket_fields`,
 * `/contact_fields` and `/company_fields` with default and custom fields;
 * errors as `{description, errors: [{field, message, code}]}` (validation) or `{code, message}`;
 * `X-Ratelimit-Total`/`-Remaining`/`-Used-CurrentRequest` on every answer, `Retry-After` on a 429.
 */

type FreshdeskRecord = Record<string, unknown> & {
  id: number;
  created_at: string;
  updated_at: string;
  custom_fields: Record<string, unknown>;
};
type Stored = { record: FreshdeskRecord; deleted: boolean };

const objects = ['tickets', 'contacts', 'companies'] as const;
type FreshdeskObject = (typeof objects)[number];

/** Freshdesk writes times to the second, in UTC. */
const freshdeskTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const ticketMembers = [
  'name',
  'requester_id',
  'email',
  'facebook_id',
  'phone',
  'twitter_id',
  'unique_external_id',
  'subject',
  'type',
  'status',
  'priority',
  'description',
  'responder_id',
  'cc_emails',
  'custom_fields',
  'due_by',
  'fr_due_by',
  'group_id',
  'product_id',
  'source',
  'tags',
  'company_id',
];
const contactMembers = [
  'name',
  'email',
  'phone',
  'mobile',
  'twitter_id',
  'unique_external_id',
  'other_emails',
  'company_id',
  'view_all_tickets',
  'other_companies',
  'address',
  'description',
  'job_title',
  'language',
  'tags',
  'time_zone',
  'custom_fields',
];

const companyMembers = [
  'name',
  'description',
  'note',
  'domains',
  'health_score',
  'account_tier',
  'renewal_date',
  'industry',
  'custom_fields',
];
const membersOf: Record<string, string[]> = { companies: companyMembers };

const ticketFields = [
  field(1, 'requester', 'Search a requester', 'default_requester', true, { required_for_agents: true }),
  field(2, 'subject', 'Subject', 'default_subject', true, { required_for_agents: true }),
  field(3, 'status', 'Status', 'default_status', true, {
    required_for_agents: true,
    choices: { '2': ['Open', 'Being Processed'], '3': ['Pending', 'Awaiting your Reply'] },
  }),
  field(4, 'priority', 'Priority', 'default_priority', true, { choices: { Low: 1, Medium: 2 } }),
  field(10, 'cf_tier', 'Tier', 'custom_dropdown', false, {
    required_for_agents: true,
    choices: ['Gold', 'Silver'],
  }),
  field(11, 'cf_vip', 'VIP', 'custom_checkbox', false),
  field(12, 'cf_renewal', 'Renewal', 'custom_date', false),
];
const contactFields = [
  field(21, 'name', 'Full name', 'default_name', true, { required_for_agents: true }),
  field(22, 'email', 'Email', 'default_email', true),
  field(30, 'department', 'Department', 'custom_text', false),
  field(31, 'seats', 'Seats', 'custom_number', false, { required_for_agents: true }),
];

const companyFields = [
  field(41, 'name', 'Company Name', 'default_name', true, { required_for_agents: true }),
  field(42, 'domains', 'Domains for this company', 'default_domains', true),
  field(50, 'region', 'Region', 'custom_dropdown', false, { choices: ['EMEA', 'APAC', 'AMER'] }),
];

function field(
  id: number,
  name: string,
  label: string,
  type: string,
  isDefault: boolean,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    name,
    label,
    description: label,
    position: id,
    type,
    default: isDefault,
    required_for_agents: false,
    required_for_customers: false,
    customers_can_edit: !isDefault,
    created_at: '2020-01-01T00:00:00Z',
    updated_at: '2020-01-01T00:00:00Z',
    ...extra,
  };
}

function validation(field: string, message: string, code: string, status = 400): FakeHttpError {
  return new FakeHttpError(status, JSON.stringify([{ field, message, code }]), 'validation');
}

export async function startFakeFreshdesk(): Promise<ConformanceFake> {
  const records: Record<FreshdeskObject, Map<number, Stored>> = {
    tickets: new Map(),
    contacts: new Map(),
    companies: new Map(),
  };
  let nextId = 1;

  const fake = new FakeProvider({
    credentialOf: basicUserCredential,
    errorBody: (error) => {
      if (error.code === 'validation')
        return { description: 'Validation failed', errors: JSON.parse(error.message) as unknown };
      if (error.status === 401)
        return { code: 'invalid_credentials', message: 'You have to be logged in to perform this action.' };
      if (error.status === 429)
        return { code: 'rate_limit_exceeded', message: 'You have exceeded the limit of requests per minute' };
      if (error.status === 404) return { code: 'not_found', message: error.message };
      return { code: error.status >= 500 ? 'internal_error' : 'invalid_value', message: error.message };
    },
    rateLimitHeaders: () => ({
      'retry-after': '1',
      'x-ratelimit-total': '200',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-used-currentrequest': '1',
    }),
  });

  const router = fake.router;
  router.use(async (ctx, next) => {
    ctx.set('x-ratelimit-total', '200');
    ctx.set('x-ratelimit-remaining', '199');
    ctx.set('x-ratelimit-used-currentrequest', '1');
    await next();
  });

  const objectOf = (ctx: Context): FreshdeskObject => {
    const object = ctx.params.object as FreshdeskObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, `No route for ${ctx.path}`);
    return object;
  };
  const storedOf = (object: FreshdeskObject, id: string): Stored => {
    const stored = records[object].get(Number(id));
    if (!stored || stored.deleted) throw new FakeHttpError(404, 'Record not found');
    return stored;
  };
  const integer = (ctx: Context, name: string, fallback: number, min: number, max: number): number => {
    const raw = ctx.query[name];
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max)
      throw validation(name, `It should be a Positive Integer less than or equal to ${max}`, 'invalid_value');
    return value;
  };
  const time = (ctx: Context, name: string): number | undefined => {
    const raw = ctx.query[name];
    if (raw === undefined) return undefined;
    const ms =
      typeof raw === 'string' &&
      /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2}))?$/.test(raw) &&
      Date.parse(raw);
    if (!ms && ms !== 0)
      throw validation(name, "It should be in the 'valid date time' format", 'invalid_value');
    return ms;
  };

  const checkValues = (
    object: FreshdeskObject,
    body: unknown,
    creating: boolean,
  ): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw validation('body', 'Invalid JSON body', 'invalid_json');
    const values = body as Record<string, unknown>;
    const allowed = membersOf[object] ?? (object === 'tickets' ? ticketMembers : contactMembers);
    for (const name of Object.keys(values)) {
      if (!allowed.includes(name))
        throw validation(name, 'Unexpected/invalid field in request', 'invalid_field');
    }
    const identity = [
      'requester_id',
      'email',
      'facebook_id',
      'phone',
      'twitter_id',
      'unique_external_id',
      'mobile',
    ];
    if (object === 'companies') {
      if ((creating || 'name' in values) && (typeof values.name !== 'string' || !values.name))
        throw validation('name', 'It should be a/an String', 'missing_field');
      for (const { record } of records.companies.values()) {
        if (typeof values.name === 'string' && record.name === values.name)
          throw validation('name', 'It should be a unique value', 'duplicate_value', 409);
      }
      return values;
    }
    if (creating && !identity.some((name) => values[name] !== undefined && values[name] !== null)) {
      throw validation(
        object === 'tickets' ? 'requester_id' : 'email',
        'Please fill at least 1 of email, mobile, phone, twitter_id, unique_external_id fields',
        'missing_field',
      );
    }
    if (object === 'tickets') {
      if (values.status !== undefined && ![2, 3, 4, 5].includes(values.status as number))
        throw validation('status', 'It should be one of these values: 2,3,4,5', 'invalid_value');
      if (values.priority !== undefined && ![1, 2, 3, 4].includes(values.priority as number))
        throw validation('priority', 'It should be one of these values: 1,2,3,4', 'invalid_value');
    } else if ((creating || 'name' in values) && (typeof values.name !== 'string' || !values.name)) {
      throw validation('name', 'It should be a/an String', 'missing_field');
    }
    if (object === 'contacts' && typeof values.email === 'string') {
      for (const { record, deleted } of records.contacts.values()) {
        if (!deleted && record.email === values.email)
          throw validation('email', `It should be a unique value`, 'duplicate_value', 409);
      }
    }
    return values;
  };

  const build = (object: FreshdeskObject, values: Record<string, unknown>, ms: number): FreshdeskRecord => {
    const id = nextId++;
    const times = { created_at: freshdeskTime(ms), updated_at: freshdeskTime(ms) };
    if (object === 'companies') {
      return {
        id,
        name: null,
        description: null,
        note: null,
        domains: [],
        health_score: null,
        account_tier: null,
        renewal_date: null,
        industry: null,
        ...values,
        custom_fields: { region: null, ...(values.custom_fields as object) },
        ...times,
      };
    }
    if (object === 'tickets') {
      return {
        id,
        subject: null,
        description: null,
        description_text: null,
        status: 2,
        priority: 1,
        source: 2,
        type: null,
        requester_id: 1000 + id,
        responder_id: null,
        group_id: null,
        company_id: null,
        product_id: null,
        cc_emails: [],
        tags: [],
        spam: false,
        is_escalated: false,
        due_by: times.created_at,
        fr_due_by: times.created_at,
        ...values,
        custom_fields: {
          cf_tier: null,
          cf_vip: false,
          cf_renewal: null,
          ...(values.custom_fields as object),
        },
        ...times,
      };
    }
    return {
      id,
      name: null,
      email: null,
      phone: null,
      mobile: null,
      twitter_id: null,
      unique_external_id: null,
      other_emails: [],
      company_id: null,
      view_all_tickets: false,
      active: false,
      address: null,
      description: null,
      job_title: null,
      language: 'en',
      time_zone: 'Eastern Time (US & Canada)',
      tags: [],
      ...values,
      custom_fields: { department: null, seats: null, ...(values.custom_fields as object) },
      ...times,
    };
  };

  router.get('/api/v2/ticket_fields', (ctx) => {
    ctx.body = ticketFields;
  });
  router.get('/api/v2/contact_fields', (ctx) => {
    ctx.body = contactFields;
  });
  router.get('/api/v2/company_fields', (ctx) => {
    ctx.body = companyFields;
  });

  router.get('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const perPage = integer(ctx, 'per_page', 30, 1, 100);
    const page = integer(ctx, 'page', 1, 1, Number.MAX_SAFE_INTEGER);
    let rows = [...records[object].values()].filter((row) => !row.deleted).map((row) => row.record);
    if (object === 'tickets') {
      for (const name of Object.keys(ctx.query)) {
        if (name === '_updated_since')
          throw validation(name, 'Unexpected/invalid field in request', 'invalid_field');
      }
      const orderBy = (ctx.query.order_by as string | undefined) ?? 'created_at';
      if (!['created_at', 'due_by', 'updated_at', 'status'].includes(orderBy))
        throw validation(
          'order_by',
          'It should be one of these values: created_at,due_by,updated_at,status',
          'invalid_value',
        );
      const orderType = (ctx.query.order_type as string | undefined) ?? 'desc';
      if (!['asc', 'desc'].includes(orderType))
        throw validation('order_type', 'It should be one of these values: asc,desc', 'invalid_value');
      const since = time(ctx, 'updated_since');
      // Without updated_since only the tickets created in the last 30 days are listed.
      rows =
        since === undefined
          ? rows.filter((row) => Date.parse(row.created_at) >= Date.now() - 30 * 86_400_000)
          : rows.filter((row) => Date.parse(row.updated_at) >= since);
      const key = (row: FreshdeskRecord) =>
        orderBy === 'status' ? Number(row.status) : Date.parse(String(row[orderBy]));
      rows.sort((a, b) => (key(a) - key(b) || a.id - b.id) * (orderType === 'asc' ? 1 : -1));
    } else if (object === 'companies') {
      for (const name of ['updated_since', '_updated_since', 'order_by'])
        if (ctx.query[name] !== undefined)
          throw validation(name, 'Unexpected/invalid field in request', 'invalid_field');
    } else {
      if (ctx.query.updated_since !== undefined)
        throw validation('updated_since', 'Unexpected/invalid field in request', 'invalid_field');
      const since = time(ctx, '_updated_since');
      if (since !== undefined) rows = rows.filter((row) => Date.parse(row.updated_at) >= since);
    }
    const start = (page - 1) * perPage;
    if (start + perPage < rows.length) {
      const next = new URL(ctx.href);
      next.searchParams.set('page', String(page + 1));
      ctx.set('link', `<${next.toString()}>; rel="next"`);
    }
    ctx.body = rows.slice(start, start + perPage);
  });

  router.get('/api/v2/:object/:id', (ctx) => {
    ctx.body = storedOf(objectOf(ctx), ctx.params.id).record;
  });

  router.post('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const record = build(object, checkValues(object, ctx.request.body, true), Date.now());
    records[object].set(record.id, { record, deleted: false });
    ctx.status = 201;
    ctx.body = record;
  });

  router.put('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const { record } = storedOf(object, ctx.params.id);
    const values = checkValues(object, ctx.request.body, false);
    Object.assign(record, values, {
      custom_fields: { ...record.custom_fields, ...(values.custom_fields as object) },
      updated_at: freshdeskTime(Date.now()),
    });
    ctx.body = record;
  });

  router.delete('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    storedOf(object, ctx.params.id).deleted = true;
    // A company is deleted for good; tickets and contacts can be restored.
    if (object === 'companies') records.companies.delete(Number(ctx.params.id));
    ctx.status = 204;
  });

  await fake.start();

  return {
    url: fake.url,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    requests: fake.requests,
    seed: (object, times) =>
      times.map((ms) => {
        const name = object as FreshdeskObject;
        const values =
          name === 'tickets'
            ? { subject: `Ticket ${nextId}`, email: `t${nextId}@example.com` }
            : name === 'companies'
              ? { name: `Company ${nextId}`, domains: [`company${nextId}.example`] }
              : { name: `Contact ${nextId}`, email: `c${nextId}@example.com` };
        const record = build(name, values, ms);
        records[name].set(record.id, { record, deleted: false });
        return String(record.id);
      }),
    touch(object, id, modifiedMs) {
      storedOf(object as FreshdeskObject, id).record.updated_at = freshdeskTime(modifiedMs);
    },
    stored: (object, id) => {
      const stored = records[object as FreshdeskObject].get(Number(id));
      return stored && !stored.deleted ? stored.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
