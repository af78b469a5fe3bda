import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { VersionedStore, type Row } from './versions.js';

/**
 * A local stand-in for Help Scout's Mailbox (Inbox) API 2.0 (https://developer.helpscout.com/mailbox-api/),
 * written from its reference:
 *
 * - Auth: OAuth 2.0 bearer tokens (client credentials or authorization code); a stale token 401.
 * - Times are ISO 8601 in UTC to the whole second (`2012-10-10T12:00:00Z`).
 * - `GET /v2/conversations`: `status` (`active` by default; `pending`, `closed`, `open`, `spam`,
 *   `all`), `mailbox`, `tag`, `modifiedSince` ("modified after": strictly after, UTC), `sortField`
 *   (`createdAt` by default; `modifiedAt`, `number`, `subject`, …), `sortOrder` (`desc` by default),
 *   `embed=threads`, `page`; 25 conversations a page, no page-size parameter. Conversations carry no
 *   modification time: `userUpdatedAt` is when a user last changed one (the fake's edits are all a
 *   user's), beside `createdAt` and `closedAt`. A deleted conversation leaves every listing.
 * - `GET /v2/customers`: `modifiedSince` (strictly after), `sortField` (`createdAt` by default,
 *   `firstName`, `lastName`, `modifiedAt`), `sortOrder`, `mailbox`, `firstName`, `lastName`,
 *   `query`, `page`; 50 customers a page; customers carry `updatedAt`. `POST /v2/customers` answers
 *   201 with no body, the id in the `Resource-ID` header (and `Location`); `PUT /v2/customers/{id}`
 *   overwrites the customer's fields (those left out are cleared), `PATCH` takes JSON Patch
 *   operations (`replace`, `add`, `remove`); both 204. Deleting a customer (`DELETE`, the GDPR
 *   deletion) removes it for good: nothing reveals it.
 * - Lists are HAL: `{_embedded: {conversations|customers: [...]}, _links: {self, first, last, next,
 *   page}, page: {size, totalElements, totalPages, number}}`, the `next` link while more follow.
 * - Errors are `application/vnd.error+json`: `{logRef, message, _embedded: {errors: [{path, message,
 *   source, rejectedValue}]}}`; unknown members of a customer are refused.
 * - Rate limits: every answer carries `X-RateLimit-Limit-Minute` and `X-RateLimit-Remaining-Minute`;
 *   a 429 says how long to wait in `X-RateLimit-Retry-After` (seconds). Writes count twice.
 */

export const HELPSCOUT_MAILBOX_ID = 301;
const CONVERSATIONS_PER_PAGE = 25;
const CUSTOMERS_PER_PAGE = 50;
const LIMIT_PER_MINUTE = 200;

type HsRecord = Record<string, unknown> & { id: number };

const second = (ms: number) => Math.floor(ms / 1000) * 1000;
const hsTime = (ms: number) => new Date(second(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Problem {
  path: string;
  message: string;
  rejectedValue?: unknown;
}
const invalid = (problems: Problem[]) => new FakeHttpError(400, JSON.stringify(problems), 'validation');

/** Customer fields a write may set, with the longest text each takes. */
const CUSTOMER_FIELDS: Record<string, number> = {
  firstName: 40,
  lastName: 40,
  jobTitle: 60,
  location: 60,
  organization: 60,
  background: 200,
  age: 60,
  photoUrl: 200,
};
const GENDERS = ['male', 'female', 'unknown'];
const PHOTO_TYPES = [
  'unknown',
  'gravatar',
  'twitter',
  'facebook',
  'googleprofile',
  'googleplus',
  'linkedin',
  'instagram',
];
const ENTRY_LISTS = ['emails', 'phones', 'chats', 'socialProfiles', 'websites'];

export async function startFakeHelpScout(): Promise<ConformanceFake> {
  const conversations = new VersionedStore<HsRecord>();
  const customers = new VersionedStore<HsRecord>();
  let nextId = 1000;
  let nextNumber = 1;
  let used = 0;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      logRef: `log-${error.status}-${Math.random().toString(36).slice(2, 8)}`,
      message:
        error.code === 'validation'
          ? 'Bad request'
          : error.status === 401
            ? 'Invalid or expired access token'
            : error.status === 429
              ? 'Rate limit exceeded'
              : error.message,
      ...(error.code === 'validation' && {
        _embedded: {
          errors: (JSON.parse(error.message) as Problem[]).map((problem) => ({ ...problem, source: 'JSON' })),
        },
      }),
    }),
    rateLimitHeaders: () => ({
      'X-RateLimit-Limit-Minute': String(LIMIT_PER_MINUTE),
      'X-RateLimit-Remaining-Minute': '0',
      'X-RateLimit-Retry-After': '60',
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    used += ctx.method === 'GET' ? 1 : 2;
    ctx.set('X-RateLimit-Limit-Minute', String(LIMIT_PER_MINUTE));
    ctx.set(
      'X-RateLimit-Remaining-Minute',
      String(Math.max(0, LIMIT_PER_MINUTE - (used % LIMIT_PER_MINUTE))),
    );
    await next();
    if (ctx.status >= 400) ctx.type = 'application/vnd.error+json';
  });

  const oneOf = (ctx: Context, name: string, allowed: string[], fallback: string): string => {
    const value = ctx.query[name] === undefined ? fallback : String(ctx.query[name]);
    if (!allowed.includes(value))
      throw invalid([{ path: name, message: `must be one of ${allowed.join(', ')}`, rejectedValue: value }]);
    return value;
  };
  const modifiedSince = (ctx: Context): number | undefined => {
    const raw = ctx.query.modifiedSince;
    if (raw === undefined) return undefined;
    const ms =
      typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(raw)
        ? Date.parse(raw)
        : NaN;
    if (Number.isNaN(ms))
      throw invalid([
        { path: 'modifiedSince', message: 'must be an ISO 8601 date and time in UTC', rejectedValue: raw },
      ]);
    return ms;
  };

  /** A HAL page of `items` (`page` from 1, a fixed size). */
  function halPage(ctx: Context, object: string, items: HsRecord[], size: number) {
    const raw = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(raw) || raw < 1)
      throw invalid([{ path: 'page', message: 'must be at least 1', rejectedValue: ctx.query.page }]);
    fake.logListing(ctx, { object, pageSize: size, maxPageSize: size });
    const totalPages = Math.ceil(items.length / size);
    const link = (page: number) => {
      const url = new URL(ctx.href);
      url.searchParams.set('page', String(page));
      return { href: url.toString() };
    };
    const template = new URL(ctx.href);
    template.searchParams.delete('page');
    const separator = template.search ? '&' : '?';
    ctx.body = {
      _embedded: { [object]: items.slice((raw - 1) * size, raw * size) },
      _links: {
        self: link(raw),
        first: link(1),
        ...(totalPages > 0 && { last: link(totalPages) }),
        ...(raw < totalPages && { next: link(raw + 1) }),
        ...(raw > 1 && { previous: link(raw - 1) }),
        page: { href: `${template.toString()}${separator}page={page}`, templated: true },
      },
      page: { size, totalElements: items.length, totalPages, number: raw },
    };
  }

  const sorted = (
    listed: { record: HsRecord; modifiedMs: number; row: Row<HsRecord> }[],
    field: string,
    order: string,
  ) =>
    listed
      .sort((a, b) => {
        const key = (version: (typeof listed)[number]): number | string =>
          field === 'modifiedAt'
            ? version.modifiedMs
            : field === 'createdAt'
              ? Date.parse(String(version.record.createdAt))
              : typeof version.record[field] === 'number'
                ? (version.record[field] as number)
                : String(version.record[field] ?? '');
        const x = key(a);
        const y = key(b);
        const compared =
          typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return (compared || a.record.id - b.record.id) * (order === 'asc' ? 1 : -1);
      })
      .map((version) => version.record);

  // --- Conversations -------------------------------------------------------------------------

  const STATUSES: Record<string, string[]> = {
    active: ['active'],
    pending: ['pending'],
    closed: ['closed'],
    spam: ['spam'],
    open: ['active', 'pending'],
    all: ['active', 'pending', 'closed', 'spam'],
  };

  function newConversation(ms: number, status: string, customer: HsRecord): Row<HsRecord> {
    const id = nextId++;
    const number = nextNumber++;
    const time = hsTime(ms);
    const record: HsRecord = {
      id,
      number,
      threads: 1,
      type: 'email',
      folderId: 1234,
      status,
      state: 'published',
      subject: `Conversation ${number}`,
      preview: `Question number ${number}…`,
      mailboxId: HELPSCOUT_MAILBOX_ID,
      assignee: { id: 9, type: 'user', first: 'Mia', last: 'Agent', email: 'mia@example.com' },
      createdBy: { id: customer.id, type: 'customer', email: `c${customer.id}@example.com` },
      createdAt: time,
      closedBy: status === 'closed' ? 9 : 0,
      closedAt: status === 'closed' ? time : null,
      userUpdatedAt: time,
      customerWaitingSince: { time, friendly: 'Just now' },
      source: { type: 'email', via: 'customer' },
      tags: [{ id: 7, color: '#929499', tag: 'billing' }],
      cc: [],
      bcc: [],
      primaryCustomer: {
        id: customer.id,
        type: 'customer',
        first: customer.firstName,
        last: customer.lastName,
        email: `c${customer.id}@example.com`,
      },
      customFields: [{ id: 8, name: 'Plan', value: '12', text: 'Pro' }],
      _links: {
        self: { href: `${fake.url}/v2/conversations/${id}` },
        mailbox: { href: `${fake.url}/v2/mailboxes/${HELPSCOUT_MAILBOX_ID}` },
        primaryCustomer: { href: `${fake.url}/v2/customers/${customer.id}` },
        threads: { href: `${fake.url}/v2/conversations/${id}/threads` },
        web: { href: `https://secure.helpscout.net/conversation/${id}/${number}` },
      },
    };
    return conversations.add(String(id), record, second(ms));
  }

  router.get('/v2/conversations', (ctx) => {
    const status = oneOf(ctx, 'status', Object.keys(STATUSES), 'active');
    const sortField = oneOf(
      ctx,
      'sortField',
      [
        'createdAt',
        'customerEmail',
        'customerName',
        'mailboxid',
        'modifiedAt',
        'number',
        'score',
        'status',
        'subject',
        'waitingSince',
      ],
      'createdAt',
    );
    const sortOrder = oneOf(ctx, 'sortOrder', ['asc', 'desc'], 'desc');
    const since = modifiedSince(ctx);
    const mailbox = ctx.query.mailbox === undefined ? undefined : String(ctx.query.mailbox).split(',');
    const listed = conversations
      .listed(now())
      .filter(
        ({ record, modifiedMs }) =>
          STATUSES[status].includes(String(record.status)) &&
          (since === undefined || modifiedMs > since) &&
          (!mailbox || mailbox.includes(String(record.mailboxId))),
      );
    const embedThreads = String(ctx.query.embed ?? '')
      .split(',')
      .includes('threads');
    const records = sorted(listed, sortField, sortOrder).map((record) =>
      embedThreads ? { ...record, _embedded: { threads: [] } } : record,
    );
    halPage(ctx, 'conversations', records, CONVERSATIONS_PER_PAGE);
  });

  router.get('/v2/conversations/:id', (ctx) => {
    const record = conversations.get(ctx.params.id);
    if (!record) throw new FakeHttpError(404, 'Conversation not found');
    ctx.body = record;
  });

  router.delete('/v2/conversations/:id', (ctx) => {
    if (!conversations.remove(ctx.params.id, now())) throw new FakeHttpError(404, 'Conversation not found');
    ctx.status = 204;
  });

  // --- Customers -----------------------------------------------------------------------------

  function customerValues(body: unknown, overwrite: boolean): Record<string, unknown> {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid([{ path: '', message: 'must be a JSON object' }]);
    const values: Record<string, unknown> = {};
    const problems: Problem[] = [];
    for (const [name, value] of Object.entries(body)) {
      if (name in CUSTOMER_FIELDS) {
        if (value !== null && typeof value !== 'string')
          problems.push({ path: name, message: 'must be a string', rejectedValue: value });
        else if (typeof value === 'string' && value.length > CUSTOMER_FIELDS[name])
          problems.push({
            path: name,
            message: `size must be between 0 and ${CUSTOMER_FIELDS[name]}`,
            rejectedValue: value,
          });
        else values[name] = value;
      } else if (name === 'gender') {
        if (value !== null && !GENDERS.includes(String(value).toLowerCase()))
          problems.push({
            path: name,
            message: `must be one of ${GENDERS.join(', ')}`,
            rejectedValue: value,
          });
        else values.gender = value === null ? 'unknown' : String(value).toLowerCase();
      } else if (name === 'photoType') {
        if (value !== null && !PHOTO_TYPES.includes(String(value)))
          problems.push({
            path: name,
            message: `must be one of ${PHOTO_TYPES.join(', ')}`,
            rejectedValue: value,
          });
        else values.photoType = value ?? 'unknown';
      } else if (ENTRY_LISTS.includes(name) && !overwrite) {
        if (!Array.isArray(value))
          problems.push({ path: name, message: 'must be a list', rejectedValue: value });
        else values[name] = value;
      } else {
        problems.push({ path: name, message: 'Unrecognized field', rejectedValue: value });
      }
    }
    if (problems.length) throw invalid(problems);
    return values;
  }

  function newCustomer(values: Record<string, unknown>, ms: number): Row<HsRecord> {
    const id = nextId++;
    const time = hsTime(ms);
    const entries = (list: unknown, type: string) =>
      Array.isArray(list)
        ? list.map((entry, index) => ({ id: id * 10 + index, type, ...(entry as object) }))
        : [];
    const record: HsRecord = {
      id,
      firstName: null,
      lastName: null,
      gender: 'unknown',
      jobTitle: null,
      location: null,
      organization: null,
      photoType: 'unknown',
      photoUrl: null,
      age: null,
      background: null,
      createdAt: time,
      updatedAt: time,
      draft: false,
      ...Object.fromEntries(Object.entries(values).filter(([name]) => !ENTRY_LISTS.includes(name))),
      _embedded: {
        emails: entries(values.emails, 'work'),
        phones: entries(values.phones, 'work'),
        chats: entries(values.chats, 'other'),
        social_profiles: entries(values.socialProfiles, 'other'),
        websites: entries(values.websites, 'other'),
      },
      _links: { self: { href: `${fake.url}/v2/customers/${id}` } },
    };
    return customers.add(String(id), record, second(ms));
  }

  const customerRow = (id: string): Row<HsRecord> => {
    const row = customers.row(id);
    if (!row) throw new FakeHttpError(404, 'Customer not found');
    return row;
  };

  function changeCustomer(
    row: Row<HsRecord>,
    values: Record<string, unknown>,
    ms: number,
    visibleFromMs?: number,
  ) {
    customers.change(
      row.id,
      second(ms),
      (record) => {
        Object.assign(record, values, { updatedAt: hsTime(ms) });
      },
      { now: now(), ...(visibleFromMs !== undefined && { visibleFromMs }) },
    );
  }

  router.get('/v2/customers', (ctx) => {
    const sortField = oneOf(
      ctx,
      'sortField',
      ['createdAt', 'firstName', 'lastName', 'modifiedAt', 'score'],
      'createdAt',
    );
    const sortOrder = oneOf(ctx, 'sortOrder', ['asc', 'desc'], 'desc');
    const since = modifiedSince(ctx);
    const listed = customers
      .listed(now())
      .filter(
        ({ record, modifiedMs }) =>
          (since === undefined || modifiedMs > since) &&
          (ctx.query.firstName === undefined || record.firstName === ctx.query.firstName) &&
          (ctx.query.lastName === undefined || record.lastName === ctx.query.lastName),
      );
    halPage(ctx, 'customers', sorted(listed, sortField, sortOrder), CUSTOMERS_PER_PAGE);
  });

  router.get('/v2/customers/:id', (ctx) => {
    ctx.body = customerRow(ctx.params.id).current.record;
  });

  router.post('/v2/customers', (ctx) => {
    const values = customerValues(ctx.request.body, false);
    if (!values.firstName && !values.lastName && !(values.emails as unknown[] | undefined)?.length)
      throw invalid([
        { path: 'firstName', message: 'a customer needs a first name, a last name or an email' },
      ]);
    const row = newCustomer(values, now());
    ctx.status = 201;
    ctx.set('Resource-ID', row.id);
    ctx.set('Location', `${fake.url}/v2/customers/${row.id}`);
    // No body: the id is only in the headers.
    ctx.body = '';
  });

  router.put('/v2/customers/:id', (ctx) => {
    const row = customerRow(ctx.params.id);
    const values = customerValues(ctx.request.body, true);
    // An overwrite: the fields it leaves out are cleared.
    const cleared = Object.fromEntries(Object.keys(CUSTOMER_FIELDS).map((name) => [name, null]));
    changeCustomer(row, { ...cleared, gender: 'unknown', photoType: 'unknown', ...values }, now());
    ctx.status = 204;
  });

  router.patch('/v2/customers/:id', (ctx) => {
    const row = customerRow(ctx.params.id);
    const operations = ctx.request.body;
    if (!Array.isArray(operations))
      throw invalid([{ path: '', message: 'must be a list of JSON Patch operations' }]);
    const values: Record<string, unknown> = {};
    for (const operation of operations as { op?: unknown; path?: unknown; value?: unknown }[]) {
      const name = String(operation?.path ?? '').replace(/^\//, '');
      if (!['replace', 'add', 'remove'].includes(String(operation?.op)))
        throw invalid([
          { path: 'op', message: 'must be one of replace, add, remove', rejectedValue: operation?.op },
        ]);
      Object.assign(
        values,
        customerValues({ [name]: operation.op === 'remove' ? null : operation.value }, true),
      );
    }
    changeCustomer(row, values, now());
    ctx.status = 204;
  });

  router.delete('/v2/customers/:id', (ctx) => {
    const row = customerRow(ctx.params.id);
    customers.remove(row.id, now());
    customers.rows.delete(row.id);
    ctx.status = 204;
  });

  await fake.start();
  const fixtureCustomer = newCustomer(
    { firstName: 'Vernon', lastName: 'Bear', emails: [{ type: 'work', value: 'vbear@example.com' }] },
    Date.UTC(2020, 0, 1),
  ).current.record;

  let seeded = 0;
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
    setClock: (clock) => fake.setClock(clock),
    seed(object, times) {
      return times.map((ms) => {
        seeded += 1;
        if (object === 'customers')
          return newCustomer(
            {
              firstName: `Seed${seeded}`,
              lastName: 'Customer',
              organization: 'Acme',
              emails: [{ type: 'work', value: `seed${seeded}@example.com` }],
            },
            ms,
          ).id;
        // Active, pending and closed in turn: the listing shows active ones unless asked for all.
        return newConversation(ms, ['active', 'pending', 'closed'][seeded % 3], fixtureCustomer).id;
      });
    },
    touch(object, id, modifiedMs, options) {
      if (object === 'customers') {
        changeCustomer(
          customerRow(id),
          { background: `Edited at ${modifiedMs}` },
          modifiedMs,
          options?.visibleFromMs,
        );
        return;
      }
      conversations.change(
        id,
        second(modifiedMs),
        (record) => {
          record.userUpdatedAt = hsTime(modifiedMs);
          record.preview = `Edited at ${modifiedMs}`;
        },
        { now: now(), ...(options?.visibleFromMs !== undefined && { visibleFromMs: options.visibleFromMs }) },
      );
    },
    remove(object, id, atMs) {
      const store = object === 'customers' ? customers : conversations;
      store.remove(id, atMs);
      store.rows.delete(id);
    },
    stored: (object, id) => (object === 'customers' ? customers : conversations).get(id),
    stop: () => fake.stop(),
  };
}
