import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Intercom's REST API 2.14 (https://developers.intercom.com/docs/references/rest-api/api.intercom.io,
 * the OpenAPI documents in intercom/Intercom-OpenAPI): contacts and conversations listed with
 * `per_page` (≤ 150) and `starting_after`, searched with `POST /…/search` (`query` of `AND`/`OR`
 * filters, `pagination: {per_page, starting_after}`, `sort`), answered with
 * `pages: {next: {page, starting_after}}` while more follow; timestamp filters matched by whole
 * UTC day as the reference says (`>` from the start of the next day, `<` before the start of the
 * day, `>=`/`<=`/`!=` refused); contacts created with `POST /contacts` (one of email, external_id,
 * role), conversations with `POST /conversations` from an existing contact (answering the
 * message, with its `conversation_id`); companies listed with `POST /companies/list` (`page`,
 * `per_page`, `order` by `last_request_at`, only companies with users) and upserted by
 * `company_id` with `POST /companies`; `PUT` and `DELETE` of each; `/data_attributes?model=`;
 * an `Intercom-Version` header checked when sent; errors as
 * `{type: "error.list", request_id, errors: [{code, message}]}`; `X-RateLimit-*` headers.
 */

type IntercomRecord = Record<string, unknown> & { id: string; updated_at: number };

const objects = ['contacts', 'conversations', 'companies'] as const;
type IntercomObject = (typeof objects)[number];
const versions = ['2.7', '2.8', '2.9', '2.10', '2.11', '2.12', '2.13', '2.14', 'Unstable'];
const dateFields = ['created_at', 'updated_at', 'signed_up_at', 'last_seen_at', 'waiting_since'];
const searchable: Record<IntercomObject, string[]> = {
  contacts: ['id', 'role', 'name', 'email', 'phone', 'external_id', ...dateFields],
  conversations: ['id', 'state', 'open', 'read', 'priority', 'title', ...dateFields],
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
    attribute('contact', 'role', 'Role', 'string', { options: ['user', 'lead'] }),
    attribute('contact', 'updated_at', 'Last updated', 'date', { api_writable: false, ui_writable: false }),
    attribute('contact', 'custom_attributes.tier', 'Tier', 'string', {
      id: 101,
      custom: true,
      options: ['gold', 'silver'],
    }),
    attribute('contact', 'custom_attributes.seats', 'Seats', 'integer', { id: 102, custom: true }),
  ],
  company: [
    attribute('company', 'name', 'Company name', 'string'),
    attribute('company', 'company_id', 'Company ID', 'string', { api_writable: false }),
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
const dayStart = (unixSeconds: number) => Math.floor(unixSeconds / 86_400) * 86_400;

interface Filter {
  field: string;
  operator: string;
  value: unknown;
}

export async function startFakeIntercom(): Promise<ConformanceFake> {
  const records: Record<IntercomObject, Map<string, IntercomRecord>> = {
    contacts: new Map(),
    conversations: new Map(),
    companies: new Map(),
  };
  const cursors = new Map<string, { list: string; offset: number; page: number }>();
  let nextId = 1;

  const fake = new FakeProvider({
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
      'retry-after': '1',
      'x-ratelimit-limit': '10000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1),
    }),
  });

  const router = fake.router;
  router.use(async (ctx, next) => {
    const version = ctx.get('intercom-version');
    if (version && !versions.includes(version))
      throw new FakeHttpError(400, `Requested version ${version} is not valid`, 'intercom_version_invalid');
    ctx.set('x-ratelimit-limit', '10000');
    ctx.set('x-ratelimit-remaining', '9999');
    ctx.set('x-ratelimit-reset', String(Math.ceil(Date.now() / 1000) + 10));
    await next();
  });

  const objectOf = (ctx: Context): IntercomObject => {
    const object = ctx.params.object as IntercomObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, 'Resource Not Found', 'not_found');
    return object;
  };
  const recordOf = (object: IntercomObject, id: string): IntercomRecord => {
    const record = records[object].get(id);
    if (!record)
      throw new FakeHttpError(
        404,
        {
          contacts: 'User Not Found',
          conversations: 'Conversation Not Found',
          companies: 'Company Not Found',
        }[object],
        { contacts: 'not_found', conversations: 'conversation_not_found', companies: 'company_not_found' }[
          object
        ],
      );
    return record;
  };

  /** One page of `items` after the cursor, with Intercom's `pages` object. */
  const paged = (list: string, items: IntercomRecord[], perPage: unknown, startingAfter: unknown) => {
    const size = perPage === undefined ? 50 : Number(perPage);
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
    return { data, pages, total_count: items.length };
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

  /** Whether a record matches one search filter; dates by whole UTC day, as the reference says. */
  const matches = (object: IntercomObject, record: IntercomRecord, filter: Filter): boolean => {
    if (!searchable[object].includes(filter.field))
      throw new FakeHttpError(400, `${filter.field} is not a searchable field`, 'invalid_field');
    const value = record[filter.field];
    if (dateFields.includes(filter.field)) {
      const asked = Number(filter.value);
      if (!Number.isFinite(asked))
        throw new FakeHttpError(400, `${filter.field} must be a timestamp`, 'parameter_invalid');
      const time = Number(value);
      switch (filter.operator) {
        case '>':
          return time >= dayStart(asked) + 86_400;
        case '<':
          return time < dayStart(asked);
        case '=':
          return time >= dayStart(asked) && time < dayStart(asked) + 86_400;
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
      case '~':
        return String(value ?? '').includes(String(filter.value));
      default:
        throw new FakeHttpError(400, `Unsupported operator ${filter.operator}`, 'parameter_invalid');
    }
  };
  const holds = (object: IntercomObject, record: IntercomRecord, query: unknown): boolean => {
    const node = query as { operator?: string; value?: unknown; field?: string };
    if (!node || typeof node !== 'object')
      throw new FakeHttpError(400, 'query is required', 'parameter_not_found');
    if (node.operator === 'AND' || node.operator === 'OR') {
      if (!Array.isArray(node.value) || node.value.length > 15)
        throw new FakeHttpError(
          400,
          'A composite filter needs a list of up to 15 filters',
          'parameter_invalid',
        );
      const results = node.value.map((inner) => holds(object, record, inner));
      return node.operator === 'AND' ? results.every(Boolean) : results.some(Boolean);
    }
    if (typeof node.field !== 'string' || typeof node.operator !== 'string')
      throw new FakeHttpError(400, 'A filter needs field, operator and value', 'parameter_invalid');
    return matches(object, record, node as Filter);
  };

  const checkValues = (object: IntercomObject, body: unknown): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Invalid JSON body', 'parameter_invalid');
    const values = body as Record<string, unknown>;
    for (const name of Object.keys(values)) {
      if (!membersOf[object].includes(name))
        throw new FakeHttpError(400, `${name} is not a valid parameter`, 'parameter_invalid');
    }
    if (object === 'contacts' && typeof values.email === 'string') {
      const taken = [...records.contacts.values()].find((contact) => contact.email === values.email);
      if (taken)
        throw new FakeHttpError(
          409,
          `A contact matching those details already exists with id=${taken.id}`,
          'conflict',
        );
    }
    return values;
  };

  const contact = (values: Record<string, unknown>, ms: number): IntercomRecord => {
    const id = (0x6657a0000000000000000000n + BigInt(nextId++)).toString(16);
    return {
      type: 'contact',
      id,
      workspace_id: 'ecahpwf5',
      external_id: null,
      role: 'user',
      email: null,
      phone: null,
      name: null,
      avatar: null,
      owner_id: null,
      has_hard_bounced: false,
      marked_email_as_spam: false,
      unsubscribed_from_emails: false,
      created_at: seconds(ms),
      signed_up_at: null,
      last_seen_at: null,
      custom_attributes: {},
      tags: { type: 'list', data: [], url: `/contacts/${id}/tags`, total_count: 0, has_more: false },
      location: { type: 'location', country: null, region: null, city: null },
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
        author: { type: from.type, id: from.id },
        attachments: [],
        redacted: false,
      },
      contacts: { type: 'contact.list', contacts: [{ type: 'contact', id: from.id }] },
      custom_attributes: {},
    };
  };
  const company = (values: Record<string, unknown>, ms: number, userCount: number): IntercomRecord => ({
    type: 'company',
    id: (0x6762f0000000000000000000n + BigInt(nextId++)).toString(16),
    company_id: null,
    app_id: 'ecahpwf5',
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
  records.contacts.set(
    INTERCOM_CONTACT_ID,
    Object.assign(contact({ email: 'fixture@example.com', name: 'Fixture' }, Date.UTC(2020, 0, 1)), {
      id: INTERCOM_CONTACT_ID,
    }),
  );

  router.get('/data_attributes', (ctx) => {
    const model = (ctx.query.model as string | undefined) ?? 'contact';
    if (!Object.hasOwn(dataAttributes, model))
      throw new FakeHttpError(
        400,
        'model must be one of contact, company, conversation',
        'parameter_invalid',
      );
    ctx.body = { type: 'list', data: dataAttributes[model] };
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
    const order = (ctx.query.order as string | undefined) ?? 'desc';
    if (!['asc', 'desc'].includes(order))
      throw new FakeHttpError(400, 'order must be asc or desc', 'parameter_invalid');
    const listed = [...records.companies.values()]
      .filter((record) => Number(record.user_count) > 0)
      .sort(
        (a, b) =>
          (Number(a.last_request_at) - Number(b.last_request_at) || a.id.localeCompare(b.id)) *
          (order === 'desc' ? -1 : 1),
      );
    const totalPages = Math.ceil(listed.length / perPage);
    ctx.body = {
      type: 'list',
      data: listed.slice((page - 1) * perPage, page * perPage),
      pages: {
        type: 'pages',
        next: page < totalPages ? `https://api.intercom.io/companies/list?page=${page + 1}` : null,
        page,
        per_page: perPage,
        total_pages: totalPages,
      },
      total_count: listed.length,
    };
  });

  router.post('/companies', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const { company_id: companyId, remote_created_at: remoteCreatedAt, ...rest } = body;
    if (typeof companyId !== 'string' || !companyId)
      throw new FakeHttpError(400, 'company_id is required to create a company', 'parameter_not_found');
    const values = checkValues('companies', rest);
    const existing = [...records.companies.values()].find((record) => record.company_id === companyId);
    if (existing) {
      Object.assign(existing, values, { updated_at: seconds(Date.now()) });
      ctx.body = existing;
      return;
    }
    const record = company(
      { ...values, company_id: companyId, remote_created_at: remoteCreatedAt ?? null },
      Date.now(),
      0,
    );
    records.companies.set(record.id, record);
    ctx.body = record;
  });

  router.get('/:object', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = answer(
      object,
      paged(object, [...records[object].values()], ctx.query.per_page, ctx.query.starting_after),
    );
  });

  router.post('/:object/search', (ctx) => {
    const object = objectOf(ctx);
    if (object === 'companies') throw new FakeHttpError(404, 'Resource Not Found', 'not_found');
    const body = (ctx.request.body ?? {}) as {
      query?: unknown;
      pagination?: { per_page?: unknown; starting_after?: unknown };
      sort?: { field?: string; order?: string };
    };
    const found = [...records[object].values()].filter((record) => holds(object, record, body.query));
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
          (Number(a[key]) - Number(b[key]) || a.id.localeCompare(b.id)) *
          (sort.order === 'descending' ? -1 : 1),
      );
    }
    ctx.body = answer(
      object,
      paged(`search:${object}`, found, body.pagination?.per_page, body.pagination?.starting_after),
    );
  });

  router.get('/:object/:id', (ctx) => {
    ctx.body = recordOf(objectOf(ctx), ctx.params.id);
  });

  router.post('/contacts', (ctx) => {
    const values = checkValues('contacts', ctx.request.body);
    if (!values.email && !values.external_id && !values.role)
      throw new FakeHttpError(
        400,
        'requires at least one of email, external_id or role',
        'parameter_not_found',
      );
    const record = contact(values, Date.now());
    records.contacts.set(record.id, record);
    ctx.body = record;
  });

  router.post('/conversations', (ctx) => {
    const body = (ctx.request.body ?? {}) as { from?: { type?: string; id?: string }; body?: unknown };
    const from = body.from;
    if (!from || !['user', 'lead', 'contact'].includes(from.type ?? '') || typeof from.id !== 'string')
      throw new FakeHttpError(400, 'from must be {type: user, lead or contact, id}', 'parameter_invalid');
    if (typeof body.body !== 'string' || !body.body)
      throw new FakeHttpError(400, 'body is required', 'parameter_not_found');
    recordOf('contacts', from.id);
    const record = conversation(
      { type: from.type === 'contact' ? 'user' : from.type!, id: from.id },
      body.body,
      Date.now(),
    );
    records.conversations.set(record.id, record);
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
    const record = recordOf(object, ctx.params.id);
    const values = checkValues(object, ctx.request.body);
    Object.assign(record, values, {
      custom_attributes: { ...(record.custom_attributes as object), ...(values.custom_attributes as object) },
      updated_at: seconds(Date.now()),
    });
    ctx.body = record;
  });

  router.delete('/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    records[object].delete(record.id);
    ctx.body =
      object === 'contacts'
        ? { id: record.id, external_id: record.external_id, type: 'contact', deleted: true }
        : { id: record.id, object: object === 'companies' ? 'company' : 'conversation', deleted: true };
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
    seed: (object, times) =>
      times.map((ms) => {
        const record =
          object === 'contacts'
            ? contact({ email: `c${nextId}@example.com`, name: `Contact ${nextId}` }, ms)
            : object === 'companies'
              ? company({ company_id: `remote-${nextId}`, name: `Company ${nextId}` }, ms, 1)
              : conversation({ type: 'user', id: INTERCOM_CONTACT_ID }, `Question ${nextId}`, ms);
        records[object as IntercomObject].set(record.id, record);
        return record.id;
      }),
    touch(object, id, modifiedMs) {
      recordOf(object as IntercomObject, id).updated_at = seconds(modifiedMs);
    },
    stored: (object, id) => records[object as IntercomObject].get(id),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
