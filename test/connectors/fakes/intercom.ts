import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { INTERCOM_WORKSPACE_ID } from './intercom-webhooks.js';

/**
 * A local stand-in for Intercom's REST API 2.14, written from its reference
 * (https://developers.intercom.com/docs/references/rest-api/api.intercom.io) and the OpenAPI
 * documents in intercom/Intercom-OpenAPI; notes and sources in /work/notes/fakes/intercom.md.
 *
 * - Times are Unix seconds.
 * - Lists: `GET /contacts` (`per_page` default 50, at most 150) and `GET /conversations` (default
 *   20, at most 150) with `starting_after`, answered with `pages: {next: {page, starting_after}}`
 *   while more follow; `POST /companies/list` (`page`, `per_page` default 15, `order` by
 *   `last_request_at`, desc by default, only companies with users, no further than 10,000).
 * - Search: `POST /{contacts,conversations}/search` with a `query` of `AND`/`OR` filters (at most 15
 *   a group, 2 levels), `pagination: {per_page, starting_after}` (at most 150), `sort`. Timestamps
 *   are matched by calendar day **in the workspace's time zone** (`>` from the start of the next
 *   day, `<` before the start of the day, `=` the whole day; `!=`, `>=`, `<=`, `IN`, `NIN` refused).
 *   The contact search index lags: a contact's change becomes searchable only a few minutes after
 *   it is made (the fake: 5 minutes), and until then the search answers the previous version.
 * - Deletes: a contact or conversation is gone for good; a company is archived (gone from lists and
 *   gets). Nothing lists deletions (Intercom sends webhooks instead).
 * - `/data_attributes?model=`, archived attributes only with `include_archived=true`.
 * - Writes: unknown members refused (`parameter_invalid`), a taken email 409; contacts need one
 *   of email, external_id, role; companies are upserted by `company_id`; conversations are created
 *   from an existing contact.
 * - Errors `{type: "error.list", request_id, errors: [{code, message}]}`; `Intercom-Version`
 *   checked when sent; `X-RateLimit-Limit`/`-Remaining`/`-Reset` (no `Retry-After`) on answers.
 */

type IntercomRecord = Record<string, unknown> & { id: string; updated_at: number };

const objects = ['contacts', 'conversations', 'companies'] as const;
type IntercomObject = (typeof objects)[number];
const versions = ['2.7', '2.8', '2.9', '2.10', '2.11', '2.12', '2.13', '2.14', '2.15', '2.16', 'Unstable'];
const dateFields = [
  'created_at',
  'updated_at',
  'signed_up_at',
  'last_seen_at',
  'last_contacted_at',
  'last_replied_at',
  'waiting_since',
  'snoozed_until',
];
const searchable: Record<IntercomObject, string[]> = {
  contacts: [
    'id',
    'role',
    'name',
    'email',
    'email_domain',
    'phone',
    'external_id',
    'owner_id',
    ...dateFields,
  ],
  conversations: [
    'id',
    'state',
    'open',
    'read',
    'priority',
    'title',
    'source.type',
    'source.author.id',
    ...dateFields,
  ],
  companies: [],
};
const contactMembers = [
  'role',
  'external_id',
  'email',
  'phone',
  'name',
  'avatar',
  'signed_up_at',
  'last_seen_at',
  'owner_id',
  'unsubscribed_from_emails',
  'custom_attributes',
  'language_override',
];
const conversationMembers = ['read', 'title', 'custom_attributes', 'company_id'];
const companyMembers = ['name', 'plan', 'size', 'website', 'industry', 'custom_attributes', 'monthly_spend'];
const membersOf: Record<IntercomObject, string[]> = {
  contacts: contactMembers,
  conversations: conversationMembers,
  companies: companyMembers,
};
/** The contact conversations are created from (its id is the fake's, 24 hex digits as Intercom's). */
export const INTERCOM_CONTACT_ID = '6657add46abd0167d9419cd2';

const MINUTE = 60_000;
/** How long the contact search index takes to show a change ("a few minutes"). */
const CONTACT_SEARCH_LAG_MS = 5 * MINUTE;
/** The workspace's time zone, which the search's day boundaries follow: UTC−8 (no DST), not UTC. */
const WORKSPACE_OFFSET_SECONDS = -8 * 3600;
const DAY_SECONDS = 86_400;
const COMPANY_LIST_LIMIT = 10_000;

const attribute = (
  model: string,
  fullName: string,
  label: string,
  dataType: string,
  extra: Record<string, unknown> = {},
) => ({
  type: 'data_attribute',
  name: fullName.split('.').pop(),
  full_name: fullName,
  label,
  description: label,
  data_type: dataType,
  api_writable: true,
  ui_writable: true,
  messenger_writable: false,
  custom: false,
  archived: false,
  model,
  ...extra,
});
const dataAttributes: Record<string, Record<string, unknown>[]> = {
  contact: [
    attribute('contact', 'name', 'Name', 'string'),
    attribute('contact', 'email', 'Email', 'string'),
    attribute('contact', 'phone', 'Phone', 'string'),
    attribute('contact', 'role', 'Role', 'string', { options: ['user', 'lead'] }),
    attribute('contact', 'external_id', 'User ID', 'string'),
    attribute('contact', 'created_at', 'Signed up', 'date', { api_writable: false, ui_writable: false }),
    attribute('contact', 'updated_at', 'Last updated', 'date', { api_writable: false, ui_writable: false }),
    attribute('contact', 'last_seen_at', 'Last seen', 'date', { ui_writable: false }),
    attribute('contact', 'custom_attributes.tier', 'Tier', 'string', {
      id: 101,
      custom: true,
      options: ['gold', 'silver'],
    }),
    attribute('contact', 'custom_attributes.seats', 'Seats', 'integer', { id: 102, custom: true }),
    attribute('contact', 'custom_attributes.legacy_plan', 'Legacy plan', 'string', {
      id: 103,
      custom: true,
      archived: true,
    }),
  ],
  company: [
    attribute('company', 'name', 'Company name', 'string'),
    attribute('company', 'company_id', 'Company ID', 'string', { api_writable: false }),
    attribute('company', 'last_request_at', 'Company last seen', 'date', { api_writable: false }),
    attribute('company', 'monthly_spend', 'Monthly spend', 'float'),
    attribute('company', 'custom_attributes.region', 'Region', 'string', {
      id: 301,
      custom: true,
      options: ['EMEA', 'APAC'],
    }),
  ],
  conversation: [
    attribute('conversation', 'custom_attributes.escalated', 'Escalated', 'boolean', {
      id: 201,
      custom: true,
    }),
    attribute('conversation', 'custom_attributes.renewal', 'Renewal', 'date', { id: 202, custom: true }),
  ],
};

const seconds = (ms: number) => Math.floor(ms / 1000);
/** The start, in Unix seconds, of the workspace's calendar day holding `unixSeconds`. */
const dayStart = (unixSeconds: number) =>
  Math.floor((unixSeconds + WORKSPACE_OFFSET_SECONDS) / DAY_SECONDS) * DAY_SECONDS - WORKSPACE_OFFSET_SECONDS;

interface Filter {
  field: string;
  operator: string;
  value: unknown;
}
/** One version of a record: what lists (and, after its lag, the search) show from `visibleFrom` on. */
interface Version {
  record: IntercomRecord;
  modifiedMs: number;
  visibleFromMs?: number;
}
interface Row {
  id: string;
  versions: Version[];
  deleted?: boolean;
}

const lookup = (record: Record<string, unknown>, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], record);

export async function startFakeIntercom(): Promise<ConformanceFake> {
  const rows: Record<IntercomObject, Map<string, Row>> = {
    contacts: new Map(),
    conversations: new Map(),
    companies: new Map(),
  };
  const cursors = new Map<string, { list: string; offset: number; page: number }>();
  let nextId = 1;

  const fake: FakeProvider = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      type: 'error.list',
      request_id: randomBytes(16).toString('hex'),
      errors: [
        {
          code:
            error.code ??
            (error.status === 401
              ? 'unauthorized'
              : error.status === 404
                ? 'not_found'
                : error.status >= 500
                  ? 'server_error'
                  : 'parameter_invalid'),
          message: error.status === 401 ? 'Access Token Invalid' : error.message,
        },
      ],
    }),
    rateLimitCode: 'rate_limit_exceeded',
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '10000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(seconds(fake.now()) + 10),
    }),
  });
  const now = () => fake.now();

  const router = fake.router;
  router.use(async (ctx, next) => {
    const version = ctx.get('intercom-version');
    if (version && !versions.includes(version))
      throw new FakeHttpError(400, `Requested version ${version} is not valid`, 'intercom_version_invalid');
    ctx.set('x-ratelimit-limit', '10000');
    ctx.set('x-ratelimit-remaining', '9999');
    ctx.set('x-ratelimit-reset', String(seconds(now()) + 10));
    await next();
  });

  const objectOf = (ctx: Context): IntercomObject => {
    const object = ctx.params.object as IntercomObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, 'Resource Not Found', 'not_found');
    return object;
  };
  const notFound = (object: IntercomObject) =>
    new FakeHttpError(
      404,
      { contacts: 'User Not Found', conversations: 'Conversation Not Found', companies: 'Company Not Found' }[
        object
      ],
      { contacts: 'not_found', conversations: 'conversation_not_found', companies: 'company_not_found' }[
        object
      ],
    );
  const rowOf = (object: IntercomObject, id: string): Row => {
    const row = rows[object].get(id);
    if (!row || row.deleted) throw notFound(object);
    return row;
  };
  const latest = (row: Row) => row.versions.at(-1)!;
  /** The version a listing shows now: the newest visible by now, after `lagMs` unless dated otherwise. */
  const shown = (row: Row, lagMs: number): IntercomRecord | undefined => {
    for (let i = row.versions.length - 1; i >= 0; i--) {
      const version = row.versions[i];
      if ((version.visibleFromMs ?? version.modifiedMs + lagMs) <= now()) return version.record;
    }
    return undefined;
  };
  const listed = (object: IntercomObject, lagMs = 0): IntercomRecord[] =>
    [...rows[object].values()]
      .filter((row) => !row.deleted)
      .map((row) => shown(row, lagMs))
      .filter((record): record is IntercomRecord => record !== undefined);

  /** Records a change: a new version, stamped `ms` (seconds), shown from `visibleFromMs` if given. */
  function change(row: Row, apply: (record: IntercomRecord) => void, ms: number, visibleFromMs?: number) {
    const record = structuredClone(latest(row).record);
    apply(record);
    record.updated_at = seconds(ms);
    row.versions.push({
      record,
      modifiedMs: seconds(ms) * 1000,
      ...(visibleFromMs !== undefined && { visibleFromMs }),
    });
  }
  function add(object: IntercomObject, record: IntercomRecord, ms: number): IntercomRecord {
    rows[object].set(record.id, { id: record.id, versions: [{ record, modifiedMs: seconds(ms) * 1000 }] });
    return record;
  }

  /** One page of `items` after the cursor, with Intercom's `pages` object. */
  const paged = (
    list: string,
    items: IntercomRecord[],
    perPage: unknown,
    startingAfter: unknown,
    fallback: number,
  ) => {
    const size = perPage === undefined ? fallback : Number(perPage);
    if (!Number.isInteger(size) || size < 1 || size > 150)
      throw new FakeHttpError(400, 'per_page must be between 1 and 150', 'parameter_invalid');
    let offset = 0;
    let page = 1;
    if (startingAfter !== undefined && startingAfter !== null) {
      const saved = cursors.get(String(startingAfter));
      if (!saved || saved.list !== list)
        throw new FakeHttpError(400, 'Invalid starting_after value', 'parameter_invalid');
      ({ offset, page } = saved);
    }
    const data = items.slice(offset, offset + size);
    const pages: Record<string, unknown> = {
      type: 'pages',
      page,
      per_page: size,
      total_pages: Math.ceil(items.length / size),
    };
    if (offset + data.length < items.length) {
      const cursor = randomBytes(18).toString('base64');
      cursors.set(cursor, { list, offset: offset + data.length, page: page + 1 });
      pages.next = { page: page + 1, starting_after: cursor };
    }
    return { data, pages, total_count: items.length, size };
  };

  const answer = (object: IntercomObject, page: ReturnType<typeof paged>) =>
    object === 'contacts'
      ? { type: 'list', data: page.data, total_count: page.total_count, pages: page.pages }
      : {
          type: 'conversation.list',
          conversations: page.data,
          total_count: page.total_count,
          pages: page.pages,
        };

  /** Whether a record matches one search filter; dates by the workspace's calendar day. */
  const matches = (object: IntercomObject, record: IntercomRecord, filter: Filter): boolean => {
    const custom = filter.field.startsWith('custom_attributes.');
    if (!custom && !searchable[object].includes(filter.field))
      throw new FakeHttpError(400, `${filter.field} is not a searchable field`, 'invalid_field');
    const value = lookup(record, filter.field);
    if (dateFields.includes(filter.field)) {
      const asked = Number(filter.value);
      if (typeof filter.value === 'string' || !Number.isFinite(asked))
        throw new FakeHttpError(400, `${filter.field} must be a timestamp`, 'parameter_invalid');
      if (value === null || value === undefined) return false;
      const time = Number(value);
      switch (filter.operator) {
        case '>':
          return time >= dayStart(asked) + DAY_SECONDS;
        case '<':
          return time < dayStart(asked);
        case '=':
          return time >= dayStart(asked) && time < dayStart(asked) + DAY_SECONDS;
        default:
          throw new FakeHttpError(
            400,
            `Operator ${filter.operator} is not supported on date fields`,
            'parameter_invalid',
          );
      }
    }
    switch (filter.operator) {
      case '=':
        return value === filter.value;
      case '!=':
        return value !== filter.value;
      case 'IN':
      case 'NIN':
        if (!Array.isArray(filter.value))
          throw new FakeHttpError(400, 'IN and NIN need an array', 'parameter_invalid');
        return filter.value.includes(value) === (filter.operator === 'IN');
      case '>':
      case '<':
      case '>=':
      case '<=': {
        if (typeof value !== 'number') return false;
        const asked = Number(filter.value);
        return { '>': value > asked, '<': value < asked, '>=': value >= asked, '<=': value <= asked }[
          filter.operator
        ];
      }
      case '~':
        return String(value ?? '').includes(String(filter.value));
      case '!~':
        return !String(value ?? '').includes(String(filter.value));
      case '^':
        return String(value ?? '').startsWith(String(filter.value));
      case '$':
        return String(value ?? '').endsWith(String(filter.value));
      default:
        throw new FakeHttpError(400, `Unsupported operator ${filter.operator}`, 'parameter_invalid');
    }
  };
  const holds = (object: IntercomObject, record: IntercomRecord, query: unknown, depth = 0): boolean => {
    const node = query as { operator?: string; value?: unknown; field?: string };
    if (!node || typeof node !== 'object')
      throw new FakeHttpError(400, 'query is required', 'parameter_not_found');
    if (node.operator === 'AND' || node.operator === 'OR') {
      if (depth > 2)
        throw new FakeHttpError(400, 'Queries can be nested at most 2 levels deep', 'parameter_invalid');
      if (!Array.isArray(node.value) || node.value.length > 15)
        throw new FakeHttpError(
          400,
          'A composite filter needs a list of up to 15 filters',
          'parameter_invalid',
        );
      const results = node.value.map((inner) => holds(object, record, inner, depth + 1));
      return node.operator === 'AND' ? results.every(Boolean) : results.some(Boolean);
    }
    if (typeof node.field !== 'string' || typeof node.operator !== 'string')
      throw new FakeHttpError(400, 'A filter needs field, operator and value', 'parameter_invalid');
    return matches(object, record, node as Filter);
  };

  const checkValues = (
    object: IntercomObject,
    body: unknown,
    existing?: IntercomRecord,
  ): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Invalid JSON body', 'parameter_invalid');
    const values = body as Record<string, unknown>;
    for (const name of Object.keys(values)) {
      if (!membersOf[object].includes(name))
        throw new FakeHttpError(400, `${name} is not a valid parameter`, 'parameter_invalid');
    }
    if (object === 'contacts' && values.role !== undefined && !['user', 'lead'].includes(String(values.role)))
      throw new FakeHttpError(400, 'role must be user or lead', 'parameter_invalid');
    if (object === 'contacts' && typeof values.email === 'string') {
      const taken = [...rows.contacts.values()].find(
        (row) => !row.deleted && row.id !== existing?.id && latest(row).record.email === values.email,
      );
      if (taken)
        throw new FakeHttpError(
          409,
          `A contact matching those details already exists with id=${taken.id}`,
          'conflict',
        );
    }
    const custom = values.custom_attributes;
    if (custom !== undefined) {
      const model = { contacts: 'contact', conversations: 'conversation', companies: 'company' }[object];
      for (const name of Object.keys(custom as object)) {
        const known = dataAttributes[model].find(
          (a) => a.full_name === `custom_attributes.${name}` && !a.archived,
        );
        if (!known)
          throw new FakeHttpError(400, `Custom attribute '${name}' does not exist`, 'parameter_invalid');
      }
    }
    return values;
  };

  const contact = (values: Record<string, unknown>, ms: number): IntercomRecord => {
    const id = (0x6657a0000000000000000000n + BigInt(nextId++)).toString(16);
    const email = typeof values.email === 'string' ? values.email : null;
    return {
      type: 'contact',
      id,
      workspace_id: INTERCOM_WORKSPACE_ID,
      external_id: null,
      role: 'user',
      email: null,
      email_domain: email?.split('@')[1] ?? null,
      phone: null,
      name: null,
      avatar: null,
      owner_id: null,
      social_profiles: { type: 'list', data: [] },
      has_hard_bounced: false,
      marked_email_as_spam: false,
      unsubscribed_from_emails: false,
      created_at: seconds(ms),
      signed_up_at: null,
      last_seen_at: null,
      last_replied_at: null,
      last_contacted_at: null,
      last_email_opened_at: null,
      last_email_clicked_at: null,
      language_override: null,
      browser: null,
      browser_version: null,
      browser_language: null,
      os: null,
      location: {
        type: 'location',
        country: null,
        region: null,
        city: null,
        country_code: null,
        continent_code: null,
      },
      android_app_name: null,
      android_app_version: null,
      android_device: null,
      android_os_version: null,
      android_sdk_version: null,
      android_last_seen_at: null,
      ios_app_name: null,
      ios_app_version: null,
      ios_device: null,
      ios_os_version: null,
      ios_sdk_version: null,
      ios_last_seen_at: null,
      custom_attributes: {},
      tags: { type: 'list', data: [], url: `/contacts/${id}/tags`, total_count: 0, has_more: false },
      notes: { type: 'list', data: [], url: `/contacts/${id}/notes`, total_count: 0, has_more: false },
      companies: {
        type: 'list',
        data: [],
        url: `/contacts/${id}/companies`,
        total_count: 0,
        has_more: false,
      },
      ...values,
      updated_at: seconds(ms),
    };
  };
  const conversation = (from: { type: string; id: string }, body: string, ms: number): IntercomRecord => {
    const id = String(nextId++);
    return {
      type: 'conversation',
      id,
      title: null,
      created_at: seconds(ms),
      updated_at: seconds(ms),
      waiting_since: seconds(ms),
      snoozed_until: null,
      open: true,
      state: 'open',
      read: false,
      priority: 'not_priority',
      admin_assignee_id: null,
      team_assignee_id: null,
      tags: { type: 'tag.list', tags: [] },
      conversation_rating: null,
      source: {
        type: 'conversation',
        id: String(400_000 + nextId),
        delivered_as: 'customer_initiated',
        subject: '',
        body: `<p>${body}</p>`,
        author: { type: from.type, id: from.id, name: null, email: null },
        attachments: [],
        url: null,
        redacted: false,
      },
      contacts: { type: 'contact.list', contacts: [{ type: 'contact', id: from.id }] },
      teammates: { type: 'admin.list', admins: [] },
      custom_attributes: {},
      first_contact_reply: null,
      sla_applied: null,
      statistics: null,
      linked_objects: { type: 'list', data: [], total_count: 0, has_more: false },
      ai_agent_participated: false,
    };
  };
  const company = (values: Record<string, unknown>, ms: number, userCount: number): IntercomRecord => ({
    type: 'company',
    id: (0x6762f0000000000000000000n + BigInt(nextId++)).toString(16),
    company_id: null,
    app_id: INTERCOM_WORKSPACE_ID,
    name: null,
    remote_created_at: null,
    created_at: seconds(ms),
    last_request_at: seconds(ms),
    monthly_spend: 0,
    session_count: 0,
    user_count: userCount,
    size: null,
    website: null,
    industry: null,
    plan: {},
    tags: { type: 'tag.list', tags: [] },
    segments: { type: 'segment.list', segments: [] },
    custom_attributes: {},
    ...values,
    updated_at: seconds(ms),
  });
  add(
    'contacts',
    Object.assign(contact({ email: 'fixture@example.com', name: 'Fixture' }, Date.UTC(2020, 0, 1)), {
      id: INTERCOM_CONTACT_ID,
    }),
    Date.UTC(2020, 0, 1),
  );

  router.get('/data_attributes', (ctx) => {
    const model = (ctx.query.model as string | undefined) ?? 'contact';
    if (!Object.hasOwn(dataAttributes, model))
      throw new FakeHttpError(
        400,
        'model must be one of contact, company, conversation',
        'parameter_invalid',
      );
    const archived = ctx.query.include_archived === 'true';
    ctx.body = { type: 'list', data: dataAttributes[model].filter((a) => archived || !a.archived) };
  });

  // Companies without users are left out; the list is ordered by last_request_at.
  router.post('/companies/list', (ctx) => {
    const perPage = ctx.query.per_page === undefined ? 15 : Number(ctx.query.per_page);
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 60 || !Number.isInteger(page) || page < 1)
      throw new FakeHttpError(
        400,
        'page and per_page must be positive integers, per_page at most 60',
        'parameter_invalid',
      );
    fake.logListing(ctx, { object: 'companies', pageSize: perPage, maxPageSize: 60 });
    if (page * perPage > COMPANY_LIST_LIMIT)
      throw new FakeHttpError(
        400,
        'The company list returns at most 10,000 companies; use the Scroll API for more',
        'bad_request',
      );
    const order = (ctx.query.order as string | undefined) ?? 'desc';
    if (!['asc', 'desc'].includes(order))
      throw new FakeHttpError(400, 'order must be asc or desc', 'parameter_invalid');
    const companies = listed('companies')
      .filter((record) => Number(record.user_count) > 0)
      .sort(
        (a, b) =>
          (Number(a.last_request_at) - Number(b.last_request_at) || a.id.localeCompare(b.id)) *
          (order === 'desc' ? -1 : 1),
      );
    const totalPages = Math.ceil(companies.length / perPage);
    ctx.body = {
      type: 'list',
      data: companies.slice((page - 1) * perPage, page * perPage),
      pages: {
        type: 'pages',
        next: page < totalPages ? `https://api.intercom.io/companies/list?page=${page + 1}` : null,
        page,
        per_page: perPage,
        total_pages: totalPages,
      },
      total_count: companies.length,
    };
  });

  router.post('/companies', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const { company_id: companyId, remote_created_at: remoteCreatedAt, ...rest } = body;
    if (typeof companyId !== 'string' || !companyId)
      throw new FakeHttpError(400, 'company_id is required to create a company', 'parameter_not_found');
    const values = checkValues('companies', rest);
    const existing = [...rows.companies.values()].find(
      (row) => !row.deleted && latest(row).record.company_id === companyId,
    );
    if (existing) {
      change(existing, (record) => Object.assign(record, values), now());
      ctx.body = latest(existing).record;
      return;
    }
    ctx.body = add(
      'companies',
      company({ ...values, company_id: companyId, remote_created_at: remoteCreatedAt ?? null }, now(), 0),
      now(),
    );
  });

  router.get('/:object', (ctx) => {
    const object = objectOf(ctx);
    if (object === 'companies') throw new FakeHttpError(404, 'Resource Not Found', 'not_found');
    const page = paged(
      object,
      listed(object),
      ctx.query.per_page,
      ctx.query.starting_after,
      object === 'contacts' ? 50 : 20,
    );
    fake.logListing(ctx, { object, pageSize: page.size, maxPageSize: 150 });
    ctx.body = answer(object, page);
  });

  router.post('/:object/search', (ctx) => {
    const object = objectOf(ctx);
    if (object === 'companies') throw new FakeHttpError(404, 'Resource Not Found', 'not_found');
    const body = (ctx.request.body ?? {}) as {
      query?: unknown;
      pagination?: { per_page?: unknown; starting_after?: unknown };
      sort?: { field?: string; order?: string };
    };
    // Contacts are searched in an index that catches up with changes a few minutes late.
    const found = listed(object, object === 'contacts' ? CONTACT_SEARCH_LAG_MS : 0).filter((record) =>
      holds(object, record, body.query),
    );
    const sort = body.sort;
    if (sort) {
      if (
        !sort.field ||
        !searchable[object].includes(sort.field) ||
        !['ascending', 'descending'].includes(sort.order ?? '')
      )
        throw new FakeHttpError(
          400,
          'sort needs a searchable field and ascending or descending',
          'parameter_invalid',
        );
      const key = sort.field;
      found.sort(
        (a, b) =>
          (Number(lookup(a, key)) - Number(lookup(b, key)) || a.id.localeCompare(b.id)) *
          (sort.order === 'descending' ? -1 : 1),
      );
    }
    const page = paged(
      `search:${object}`,
      found,
      body.pagination?.per_page,
      body.pagination?.starting_after,
      object === 'contacts' ? 50 : 20,
    );
    fake.logListing(ctx, { object, pageSize: page.size, maxPageSize: 150 });
    ctx.body = answer(object, page);
  });

  router.get('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = latest(rowOf(object, ctx.params.id)).record;
  });

  router.post('/contacts', (ctx) => {
    const values = checkValues('contacts', ctx.request.body);
    if (!values.email && !values.external_id && !values.role)
      throw new FakeHttpError(
        400,
        'requires at least one of email, external_id or role',
        'parameter_not_found',
      );
    ctx.body = add('contacts', contact(values, now()), now());
  });

  router.post('/conversations', (ctx) => {
    const body = (ctx.request.body ?? {}) as { from?: { type?: string; id?: string }; body?: unknown };
    const from = body.from;
    if (!from || !['user', 'lead', 'contact'].includes(from.type ?? '') || typeof from.id !== 'string')
      throw new FakeHttpError(400, 'from must be {type: user, lead or contact, id}', 'parameter_invalid');
    if (typeof body.body !== 'string' || !body.body)
      throw new FakeHttpError(400, 'body is required', 'parameter_not_found');
    rowOf('contacts', from.id);
    const record = add(
      'conversations',
      conversation({ type: from.type === 'contact' ? 'user' : from.type!, id: from.id }, body.body, now()),
      now(),
    );
    ctx.body = {
      type: 'user_message',
      id: (record.source as { id: string }).id,
      created_at: record.created_at,
      body: body.body,
      message_type: 'inapp',
      conversation_id: record.id,
    };
  });

  router.put('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const values = checkValues(object, ctx.request.body, latest(row).record);
    change(
      row,
      (record) =>
        Object.assign(record, values, {
          custom_attributes: {
            ...(record.custom_attributes as object),
            ...(values.custom_attributes as object),
          },
        }),
      now(),
    );
    ctx.body = latest(row).record;
  });

  router.delete('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const record = latest(row).record;
    row.deleted = true;
    ctx.body =
      object === 'contacts'
        ? { id: record.id, external_id: record.external_id, type: 'contact', deleted: true }
        : { id: record.id, object: object === 'companies' ? 'company' : 'conversation', deleted: true };
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = rows[object as IntercomObject].get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
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
    setClock: (clock) => fake.setClock(clock),
    seed: (object, times) =>
      times.map((ms) => {
        const record =
          object === 'contacts'
            ? contact(
                {
                  email: `c${nextId}@example.com`,
                  name: `Contact ${nextId}`,
                  custom_attributes: { tier: 'gold', seats: 3 },
                },
                ms,
              )
            : object === 'companies'
              ? company(
                  {
                    company_id: `remote-${nextId}`,
                    name: `Company ${nextId}`,
                    custom_attributes: { region: 'EMEA' },
                  },
                  ms,
                  1,
                )
              : Object.assign(
                  conversation({ type: 'user', id: INTERCOM_CONTACT_ID }, `Question ${nextId}`, ms),
                  {
                    custom_attributes: { escalated: false, renewal: seconds(ms) },
                  },
                );
        return add(object as IntercomObject, record, ms).id;
      }),
    touch(object, id, modifiedMs, options) {
      change(storedRow(object, id), () => undefined, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      storedRow(object, id).deleted = true;
    },
    stored: (object, id) => {
      const row = rows[object as IntercomObject].get(id);
      return row && !row.deleted ? latest(row).record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
