import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  basicUserCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Freshdesk's API v2 (https://developers.freshdesk.com/api/), written from its
 * reference; notes and sources in /work/notes/fakes/freshdesk.md.
 *
 * - Auth: the API key as the Basic user name (`{key}:X`).
 * - Times are whole seconds (`2015-08-18T16:18:14Z`).
 * - Tickets: `GET /api/v2/tickets` with `updated_since` (inclusive), `order_by`
 *   (`created_at` default, `due_by`, `updated_at`, `status`), `order_type` (`desc` default), the
 *   `filter`s (`deleted` lists the trash), `include` (`description`, `stats`, `requester`,
 *   `company`; 2 more credits each); without `updated_since` only tickets created in the last 30
 *   days; `description`/`description_text` only with `include=description`; at most 300 pages.
 * - Contacts: `GET /api/v2/contacts` with `_updated_since` (inclusive) and `state`
 *   (`verified`, `unverified`, `blocked`, `deleted`); deleted contacts only with `state=deleted`.
 * - Companies: `GET /api/v2/companies`, no filter.
 * - `page` and `per_page` (default 30, at most 100), `Link: <…>; rel="next"` while more follow;
 *   unknown query parameters refused (`invalid_field`).
 * - Deletes: a ticket goes to the trash (`deleted: true`, still readable by id, listed by
 *   `filter=deleted`, `PUT /tickets/{id}/restore`); a contact is soft deleted the same way
 *   (`state=deleted`, `/restore`, `DELETE /contacts/{id}/hard_delete`); a company is gone for good.
 * - Writes: unknown members and unknown custom fields refused (`invalid_field`), choices checked
 *   (`invalid_value`), a requester or contact identity required (`missing_field`), a taken contact
 *   email or company name 409 (`duplicate_value`); errors
 *   `{description: "Validation failed", errors: [{field, message, code}]}` or `{code, message}`.
 * - `/ticket_fields`, `/contact_fields`, `/company_fields`, with every choice (custom statuses
 *   too); records carry every custom field in `custom_fields`, null when unset.
 * - `X-Ratelimit-Total`/`-Remaining`/`-Used-CurrentRequest` on every answer, `Retry-After` on a 429.
 */

type FreshdeskRecord = Record<string, unknown> & {
  id: number;
  created_at: string;
  updated_at: string;
  custom_fields: Record<string, unknown>;
};
type Row = StoredRecord<FreshdeskRecord>;

const objects = ['tickets', 'contacts', 'companies'] as const;
type FreshdeskObject = (typeof objects)[number];

const DAY = 86_400_000;
const PER_PAGE_MAX = 100;
const PER_PAGE_DEFAULT = 30;
/** The ticket list goes no further than page 300. */
const TICKET_PAGE_MAX = 300;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
/** Freshdesk writes times to the second, in UTC. */
const freshdeskTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');

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
  'attachments',
  'cc_emails',
  'custom_fields',
  'due_by',
  'email_config_id',
  'fr_due_by',
  'group_id',
  'parent_id',
  'product_id',
  'source',
  'tags',
  'company_id',
  'internal_agent_id',
  'internal_group_id',
  'lookup_parameter',
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
  'avatar',
  'custom_fields',
  'description',
  'job_title',
  'language',
  'tags',
  'time_zone',
  'lookup_parameter',
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
  'lookup_parameter',
];
const membersOf: Record<FreshdeskObject, string[]> = {
  tickets: ticketMembers,
  contacts: contactMembers,
  companies: companyMembers,
};

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
    label_for_customers: label,
    displayed_to_customers: true,
    created_at: '2020-01-01T00:00:00Z',
    updated_at: '2020-01-01T00:00:00Z',
    ...extra,
  };
}

const STATUS_CHOICES = {
  '2': ['Open', 'Being Processed'],
  '3': ['Pending', 'Awaiting your Reply'],
  '4': ['Resolved', 'This ticket has been Resolved'],
  '5': ['Closed', 'This ticket has been Closed'],
  // A custom status: accounts add their own, from 6 on.
  '6': ['Waiting on Customer', 'Awaiting your Reply'],
};
const PRIORITY_CHOICES = { Low: 1, Medium: 2, High: 3, Urgent: 4 };
const SOURCE_CHOICES = { Email: 1, Portal: 2, Phone: 3, Chat: 7, 'Feedback Widget': 9, 'Outbound Email': 10 };

const ticketFields = [
  field(1, 'requester', 'Search a requester', 'default_requester', true, {
    required_for_agents: true,
    portal_cc: false,
    portal_cc_to: 'company',
  }),
  field(2, 'subject', 'Subject', 'default_subject', true, { required_for_agents: true }),
  field(3, 'ticket_type', 'Type', 'default_ticket_type', true, {
    choices: ['Question', 'Incident', 'Problem', 'Feature Request'],
  }),
  field(4, 'source', 'Source', 'default_source', true, { choices: SOURCE_CHOICES }),
  field(5, 'status', 'Status', 'default_status', true, {
    required_for_agents: true,
    choices: STATUS_CHOICES,
  }),
  field(6, 'priority', 'Priority', 'default_priority', true, {
    required_for_agents: true,
    choices: PRIORITY_CHOICES,
  }),
  field(7, 'group', 'Group', 'default_group', true, { choices: {} }),
  field(8, 'agent', 'Agent', 'default_agent', true, { choices: {} }),
  field(9, 'description', 'Description', 'default_description', true, { required_for_agents: true }),
  field(10, 'cf_tier', 'Tier', 'custom_dropdown', false, {
    required_for_agents: true,
    required_for_closure: true,
    choices: ['Gold', 'Silver'],
  }),
  field(11, 'cf_vip', 'VIP', 'custom_checkbox', false),
  field(12, 'cf_renewal', 'Renewal', 'custom_date', false),
  field(13, 'cf_seats', 'Seats', 'custom_number', false),
  field(14, 'cf_notes', 'Notes', 'custom_paragraph', false),
];
const contactFields = [
  field(21, 'name', 'Full name', 'default_name', true, {
    required_for_agents: true,
    editable_in_signup: true,
  }),
  field(22, 'job_title', 'Title', 'default_job_title', true),
  field(23, 'email', 'Email', 'default_email', true),
  field(24, 'phone', 'Work phone', 'default_phone', true),
  field(25, 'company_name', 'Company', 'default_company_name', true),
  field(26, 'language', 'Language', 'default_language', true, {
    choices: [
      ['English', 'en'],
      ['French', 'fr'],
    ],
  }),
  field(30, 'department', 'Department', 'custom_text', false),
  field(31, 'seats', 'Seats', 'custom_number', false, { required_for_agents: true }),
  field(32, 'newsletter', 'Newsletter', 'custom_checkbox', false),
];
const companyFields = [
  field(41, 'name', 'Company Name', 'default_name', true, { required_for_agents: true }),
  field(42, 'description', 'Description', 'default_description', true),
  field(43, 'note', 'Notes', 'default_note', true),
  field(44, 'domains', 'Domains for this company', 'default_domains', true),
  field(45, 'health_score', 'Health score', 'default_health_score', true, {
    choices: ['At risk', 'Doing okay', 'Happy'],
  }),
  field(46, 'account_tier', 'Account tier', 'default_account_tier', true, {
    choices: ['Basic', 'Premium', 'Enterprise'],
  }),
  field(47, 'renewal_date', 'Renewal date', 'default_renewal_date', true),
  field(48, 'industry', 'Industry', 'default_industry', true, { choices: ['Paper', 'Software'] }),
  field(50, 'region', 'Region', 'custom_dropdown', false, { choices: ['EMEA', 'APAC', 'AMER'] }),
  field(51, 'since', 'Customer since', 'custom_date', false),
];
const fieldsOf: Record<FreshdeskObject, Record<string, unknown>[]> = {
  tickets: ticketFields,
  contacts: contactFields,
  companies: companyFields,
};
const customFieldsOf = (object: FreshdeskObject) => fieldsOf[object].filter((f) => f.default === false);
const unsetCustomFields = (object: FreshdeskObject) =>
  Object.fromEntries(
    customFieldsOf(object).map((f) => [f.name as string, f.type === 'custom_checkbox' ? false : null]),
  );

interface Problem {
  field: string;
  message: string;
  code: string;
}
function validation(problems: Problem[], status = 400): FakeHttpError {
  return new FakeHttpError(status, JSON.stringify(problems), 'validation');
}
const invalidField = (name: string) =>
  validation([{ field: name, message: 'Unexpected/invalid field in request', code: 'invalid_field' }]);

export async function startFakeFreshdesk(): Promise<ConformanceFake> {
  const stores: Record<FreshdeskObject, RecordStore<FreshdeskRecord>> = {
    tickets: new RecordStore(),
    contacts: new RecordStore(),
    companies: new RecordStore(),
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
      'retry-after': '60',
      'x-ratelimit-total': '200',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-used-currentrequest': '1',
    }),
  });
  const now = () => fake.now();

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
  /** Any stored row, deleted (trashed) ones included: gets still find those. */
  const rowOf = (object: FreshdeskObject, id: string): Row => {
    const row = stores[object].rows.get(id);
    if (!row) throw new FakeHttpError(404, 'Record not found');
    return row;
  };
  const liveRowOf = (object: FreshdeskObject, id: string): Row => {
    const row = rowOf(object, id);
    if (row.deleted) throw new FakeHttpError(404, 'Record not found');
    return row;
  };
  const integer = (ctx: Context, name: string, fallback: number, max: number): number => {
    const raw = ctx.query[name];
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > max)
      throw validation([
        {
          field: name,
          message: `It should be a Positive Integer less than or equal to ${max}`,
          code: 'invalid_value',
        },
      ]);
    return value;
  };
  const time = (ctx: Context, name: string): number | undefined => {
    const raw = ctx.query[name];
    if (raw === undefined) return undefined;
    const ms =
      typeof raw === 'string' &&
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/.test(raw) &&
      Date.parse(raw);
    if (!ms && ms !== 0)
      throw validation([
        { field: name, message: "It should be in the 'valid date time' format", code: 'invalid_value' },
      ]);
    return ms;
  };
  const refuseUnknownParameters = (ctx: Context, allowed: string[]) => {
    for (const name of Object.keys(ctx.query)) if (!allowed.includes(name)) throw invalidField(name);
  };

  /** Choices of a field as the values a write may send. */
  const allowedValues = (f: Record<string, unknown>): string[] | undefined => {
    const choices = f.choices;
    if (Array.isArray(choices))
      return choices.map((choice) => (Array.isArray(choice) ? String(choice[1]) : String(choice)));
    if (choices && typeof choices === 'object') {
      const entries = Object.entries(choices);
      // Status is keyed by value; priority and source map label → value.
      return f.type === 'default_status'
        ? entries.map(([value]) => value)
        : entries.map(([, value]) => String(value));
    }
    return undefined;
  };
  const oneOf = (name: string, allowed: string[], value: unknown) => {
    if (value !== null && value !== undefined && !allowed.includes(String(value)))
      throw validation([
        {
          field: name,
          message: `It should be one of these values: '${allowed.join(',')}'`,
          code: 'invalid_value',
        },
      ]);
  };

  function checkValues(
    object: FreshdeskObject,
    body: unknown,
    existing?: FreshdeskRecord,
  ): Record<string, unknown> {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw validation([{ field: 'body', message: 'Invalid JSON body', code: 'invalid_json' }]);
    const values = body as Record<string, unknown>;
    for (const name of Object.keys(values)) if (!membersOf[object].includes(name)) throw invalidField(name);
    const custom = values.custom_fields;
    if (custom !== undefined) {
      if (!custom || typeof custom !== 'object' || Array.isArray(custom))
        throw validation([
          { field: 'custom_fields', message: 'It should be a/an key/value pair', code: 'datatype_mismatch' },
        ]);
      for (const [name, value] of Object.entries(custom)) {
        const f = customFieldsOf(object).find((candidate) => candidate.name === name);
        if (!f) throw invalidField(name);
        const allowed = allowedValues(f);
        if (allowed) oneOf(name, allowed, value);
      }
    }
    if (object === 'companies') {
      if ((!existing || 'name' in values) && (typeof values.name !== 'string' || !values.name))
        throw validation([{ field: 'name', message: 'It should be a/an String', code: 'missing_field' }]);
      for (const row of stores.companies.rows.values()) {
        if (row.record !== existing && typeof values.name === 'string' && row.record.name === values.name)
          throw validation(
            [{ field: 'name', message: 'It should be a unique value', code: 'duplicate_value' }],
            409,
          );
      }
      for (const name of ['health_score', 'account_tier', 'industry'])
        oneOf(name, allowedValues(companyFields.find((f) => f.name === name)!)!, values[name]);
      return values;
    }
    const identity =
      object === 'tickets'
        ? ['requester_id', 'email', 'facebook_id', 'phone', 'twitter_id', 'unique_external_id']
        : ['email', 'mobile', 'phone', 'twitter_id', 'unique_external_id'];
    if (!existing && !identity.some((name) => values[name] !== undefined && values[name] !== null)) {
      throw validation([
        {
          field: object === 'tickets' ? 'requester_id' : 'email',
          message: 'Please fill at least 1 of email, mobile, phone, twitter_id, unique_external_id fields',
          code: 'missing_field',
        },
      ]);
    }
    if (object === 'tickets') {
      oneOf('status', Object.keys(STATUS_CHOICES), values.status);
      oneOf('priority', Object.values(PRIORITY_CHOICES).map(String), values.priority);
      oneOf('source', Object.values(SOURCE_CHOICES).map(String), values.source);
    } else {
      if ((!existing || 'name' in values) && (typeof values.name !== 'string' || !values.name))
        throw validation([{ field: 'name', message: 'It should be a/an String', code: 'missing_field' }]);
      if (typeof values.email === 'string') {
        for (const row of stores.contacts.rows.values()) {
          if (row.record !== existing && row.record.email === values.email)
            throw validation(
              [{ field: 'email', message: 'It should be a unique value', code: 'duplicate_value' }],
              409,
            );
        }
      }
    }
    return values;
  }

  /**
   * A ticket's values as the ticket keeps them: the requester's identity (email, phone...) names a
   * contact, found or created, and only its id stays on the ticket.
   */
  function ticketValues(values: Record<string, unknown>): Record<string, unknown> {
    const identity = ['name', 'email', 'phone', 'twitter_id', 'facebook_id', 'unique_external_id'];
    const kept = Object.fromEntries(Object.entries(values).filter(([name]) => !identity.includes(name)));
    if (values.requester_id === undefined && identity.some((name) => values[name] !== undefined))
      kept.requester_id = 5000 + nextId;
    return kept;
  }

  function build(object: FreshdeskObject, values: Record<string, unknown>, ms: number): Row {
    const id = nextId++;
    const times = { created_at: freshdeskTime(ms), updated_at: freshdeskTime(ms) };
    let record: FreshdeskRecord;
    if (object === 'companies') {
      record = {
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
        custom_fields: { ...unsetCustomFields(object), ...(values.custom_fields as object) },
        ...times,
      };
    } else if (object === 'tickets') {
      const description = typeof values.description === 'string' ? values.description : '';
      record = {
        id,
        subject: null,
        description,
        description_text: description.replace(/<[^>]*>/g, ''),
        status: 2,
        priority: 1,
        source: 2,
        type: null,
        requester_id: null,
        responder_id: null,
        group_id: null,
        company_id: null,
        product_id: null,
        email_config_id: null,
        cc_emails: [],
        fwd_emails: [],
        reply_cc_emails: [],
        ticket_cc_emails: [],
        to_emails: null,
        tags: [],
        spam: false,
        is_escalated: false,
        fr_escalated: false,
        nr_escalated: false,
        association_type: null,
        support_email: null,
        due_by: freshdeskTime(ms + 3 * DAY),
        fr_due_by: freshdeskTime(ms + DAY),
        nr_due_by: null,
        attachments: [],
        ...ticketValues(values),
        custom_fields: { ...unsetCustomFields(object), ...(values.custom_fields as object) },
        ...times,
      };
    } else {
      record = {
        id,
        name: null,
        email: null,
        phone: null,
        mobile: null,
        twitter_id: null,
        facebook_id: null,
        unique_external_id: null,
        other_emails: [],
        company_id: null,
        view_all_tickets: false,
        other_companies: [],
        active: false,
        address: null,
        avatar: null,
        description: null,
        job_title: null,
        language: 'en',
        time_zone: 'Eastern Time (US & Canada)',
        tags: [],
        csat_rating: null,
        preferred_source: 'email',
        ...values,
        custom_fields: { ...unsetCustomFields(object), ...(values.custom_fields as object) },
        ...times,
      };
    }
    const row: Row = { record, modifiedMs: wholeSecond(ms) };
    stores[object].rows.set(String(id), row);
    return row;
  }

  function stamp(row: Row, ms: number, visibleFromMs?: number) {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.updated_at = freshdeskTime(ms);
  }

  /** A ticket as a list shows it: the description only when `include=description` asks for it. */
  function listed(object: FreshdeskObject, row: Row, include: string[]): FreshdeskRecord {
    const record: FreshdeskRecord = structuredClone(row.record);
    if (row.deleted) record.deleted = true;
    if (object === 'tickets') {
      if (!include.includes('description')) {
        delete record.description;
        delete record.description_text;
      }
      if (include.includes('stats'))
        record.stats = {
          agent_responded_at: null,
          requester_responded_at: null,
          first_responded_at: null,
          status_updated_at: record.updated_at,
          reopened_at: null,
          resolved_at: null,
          closed_at: null,
          pending_since: null,
        };
      if (include.includes('requester'))
        record.requester = {
          id: record.requester_id,
          name: 'Requester',
          email: 'requester@example.com',
          mobile: null,
          phone: null,
        };
    }
    return record;
  }

  const visible = (row: Row) => (row.visibleFromMs ?? row.modifiedMs) <= now();

  for (const [path, object] of [
    ['/api/v2/ticket_fields', 'tickets'],
    ['/api/v2/contact_fields', 'contacts'],
    ['/api/v2/company_fields', 'companies'],
  ] as const) {
    router.get(path, (ctx) => {
      ctx.body = fieldsOf[object];
    });
  }

  router.get('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const perPage = integer(ctx, 'per_page', PER_PAGE_DEFAULT, PER_PAGE_MAX);
    const page = integer(ctx, 'page', 1, object === 'tickets' ? TICKET_PAGE_MAX : Number.MAX_SAFE_INTEGER);
    fake.logListing(ctx, { object, pageSize: perPage, maxPageSize: PER_PAGE_MAX });
    let rows = [...stores[object].rows.values()].filter(visible);
    let include: string[] = [];
    if (object === 'tickets') {
      refuseUnknownParameters(ctx, [
        'filter',
        'requester_id',
        'email',
        'unique_external_id',
        'company_id',
        'updated_since',
        'order_by',
        'order_type',
        'include',
        'page',
        'per_page',
      ]);
      const filter = ctx.query.filter as string | undefined;
      if (filter !== undefined && !['new_and_my_open', 'watching', 'spam', 'deleted'].includes(filter))
        throw validation([
          {
            field: 'filter',
            message: "It should be one of these values: 'new_and_my_open,watching,spam,deleted'",
            code: 'invalid_value',
          },
        ]);
      include = typeof ctx.query.include === 'string' ? ctx.query.include.split(',') : [];
      for (const name of include)
        if (!['description', 'requester', 'stats', 'company'].includes(name))
          throw validation([
            {
              field: 'include',
              message: "It should be one of these values: 'description,requester,stats,company'",
              code: 'invalid_value',
            },
          ]);
      ctx.set('x-ratelimit-used-currentrequest', String(1 + 2 * include.length));
      rows = rows.filter((row) =>
        filter === 'deleted'
          ? row.deleted
          : !row.deleted &&
            !row.record.spam &&
            (filter !== 'new_and_my_open' || [2, 3].includes(Number(row.record.status))) &&
            (filter !== 'spam' || row.record.spam === true),
      );
      const orderBy = (ctx.query.order_by as string | undefined) ?? 'created_at';
      if (!['created_at', 'due_by', 'updated_at', 'status'].includes(orderBy))
        throw validation([
          {
            field: 'order_by',
            message: "It should be one of these values: 'created_at,due_by,updated_at,status'",
            code: 'invalid_value',
          },
        ]);
      const orderType = (ctx.query.order_type as string | undefined) ?? 'desc';
      if (!['asc', 'desc'].includes(orderType))
        throw validation([
          {
            field: 'order_type',
            message: "It should be one of these values: 'asc,desc'",
            code: 'invalid_value',
          },
        ]);
      const since = time(ctx, 'updated_since');
      // Without updated_since only the tickets created in the last 30 days are listed.
      rows =
        since === undefined
          ? rows.filter((row) => Date.parse(row.record.created_at) >= now() - 30 * DAY)
          : rows.filter((row) => row.modifiedMs >= since);
      for (const name of ['requester_id', 'company_id'] as const)
        if (ctx.query[name] !== undefined)
          rows = rows.filter((row) => String(row.record[name]) === ctx.query[name]);
      const key = (row: Row) =>
        orderBy === 'status'
          ? Number(row.record.status)
          : orderBy === 'updated_at'
            ? row.modifiedMs
            : Date.parse(String(row.record[orderBy]));
      rows.sort((a, b) => (key(a) - key(b) || a.record.id - b.record.id) * (orderType === 'asc' ? 1 : -1));
    } else if (object === 'contacts') {
      refuseUnknownParameters(ctx, [
        'email',
        'mobile',
        'phone',
        'company_id',
        'state',
        '_updated_since',
        'page',
        'per_page',
      ]);
      const state = ctx.query.state as string | undefined;
      if (state !== undefined && !['blocked', 'deleted', 'unverified', 'verified'].includes(state))
        throw validation([
          {
            field: 'state',
            message: "It should be one of these values: 'blocked,deleted,unverified,verified'",
            code: 'invalid_value',
          },
        ]);
      rows = rows.filter((row) =>
        state === 'deleted'
          ? row.deleted
          : !row.deleted && (state === undefined || (state === 'verified') === Boolean(row.record.active)),
      );
      const since = time(ctx, '_updated_since');
      if (since !== undefined) rows = rows.filter((row) => row.modifiedMs >= since);
      for (const name of ['email', 'mobile', 'phone', 'company_id'] as const)
        if (ctx.query[name] !== undefined)
          rows = rows.filter((row) => String(row.record[name]) === ctx.query[name]);
      rows.sort((a, b) => a.record.id - b.record.id);
    } else {
      refuseUnknownParameters(ctx, ['page', 'per_page']);
      rows = rows.filter((row) => !row.deleted).sort((a, b) => a.record.id - b.record.id);
    }
    const start = (page - 1) * perPage;
    if (start + perPage < rows.length) {
      const next = new URL(ctx.href);
      next.searchParams.set('page', String(page + 1));
      ctx.set('link', `<${next.toString()}>; rel="next"`);
    }
    ctx.body = rows.slice(start, start + perPage).map((row) => listed(object, row, include));
  });

  router.get('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const include = typeof ctx.query.include === 'string' ? ctx.query.include.split(',') : [];
    // Viewing one ticket gives its description; a deleted (trashed) ticket or contact still answers.
    ctx.body = listed(object, row, object === 'tickets' ? ['description', ...include] : include);
  });

  router.post('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const row = build(object, checkValues(object, ctx.request.body), now());
    ctx.status = 201;
    ctx.set('location', `${ctx.origin}/api/v2/${object}/${row.record.id}`);
    ctx.body = listed(object, row, ['description']);
  });

  router.put('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = liveRowOf(object, ctx.params.id);
    const checked = checkValues(object, ctx.request.body, row.record);
    const values = object === 'tickets' ? ticketValues(checked) : checked;
    Object.assign(row.record, values, {
      custom_fields: { ...row.record.custom_fields, ...(values.custom_fields as object) },
    });
    stamp(row, now());
    ctx.body = listed(object, row, ['description']);
  });

  router.put('/api/v2/:object/:id/restore', (ctx) => {
    const object = objectOf(ctx);
    if (object === 'companies') throw new FakeHttpError(404, `No route for ${ctx.path}`);
    const row = rowOf(object, ctx.params.id);
    if (row.deleted) {
      row.deleted = false;
      row.deletedMs = undefined;
      stamp(row, now());
    }
    ctx.status = 204;
  });

  function remove(object: FreshdeskObject, id: string, atMs: number) {
    const row = stores[object].remove(id, wholeSecond(atMs));
    if (!row) return;
    stamp(row, atMs);
    // A company is deleted for good; tickets go to the trash and contacts are soft deleted.
    if (object === 'companies') stores.companies.rows.delete(id);
  }

  router.delete('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    liveRowOf(object, ctx.params.id);
    remove(object, ctx.params.id, now());
    ctx.status = 204;
  });

  router.delete('/api/v2/contacts/:id/hard_delete', (ctx) => {
    const row = rowOf('contacts', ctx.params.id);
    if (!row.deleted && ctx.query.force !== 'true')
      throw validation([
        {
          field: 'contact',
          message: 'Contact should be soft deleted before being hard deleted',
          code: 'invalid_value',
        },
      ]);
    stores.contacts.rows.delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as FreshdeskObject].rows.get(id);
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
        const name = object as FreshdeskObject;
        const values =
          name === 'tickets'
            ? { subject: `Ticket ${nextId}`, description: '<p>Seeded</p>', email: `t${nextId}@example.com` }
            : name === 'companies'
              ? { name: `Company ${nextId}`, domains: [`company${nextId}.example`] }
              : { name: `Contact ${nextId}`, email: `c${nextId}@example.com` };
        return String(build(name, values, ms).record.id);
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      remove(object as FreshdeskObject, id, atMs);
    },
    stored: (object, id) => stores[object as FreshdeskObject].get(id)?.record,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
