import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for HighLevel's LeadConnector API v2 (https://highlevel.stoplight.io/docs/integrations/),
 * written from its reference (contacts: search, create, update, delete; opportunities: search,
 * create, update, delete; rate limits; errors):
 *
 * - OAuth access tokens as `Authorization: Bearer`, and every request names the API version in a
 *   `Version: 2021-07-28` header (without it, 400). Records belong to a location (sub-account):
 *   `locationId` in bodies, `location_id` in the opportunities' query; another location's id is
 *   refused (403).
 * - `POST /contacts/search` `{locationId, page, pageLimit, searchAfter?, filters, sort}`: filters
 *   `{field: "dateUpdated", operator: "range", value: {gte|gt, lte|lt}}` (ISO times, to the
 *   millisecond) and `{field: "email"|"firstName"|..., operator: "eq", value}` (exact value), sort `[{field: "dateUpdated"|"dateAdded", direction: "asc"|"desc"}]`;
 *   `pageLimit` at most 500 (verify), `page` from 1, and no more than the first 10,000 results by
 *   page: past them `searchAfter` (each listed contact carries its own, `[sortValue, id]`) goes on.
 *   Answers `{contacts, total}`. The search runs on an index that shows a change a few seconds
 *   after it is made (5 s here (verify)). Deleted contacts are listed nowhere.
 * - Contacts carry `dateAdded`/`dateUpdated` (ISO, milliseconds). `POST /contacts/` (201,
 *   `{contact}`), `PUT /contacts/{contactId}` (`{succeded: true, contact}`; `locationId` is not
 *   accepted there), `DELETE /contacts/{contactId}` (`{succeded: true}`).
 * - `GET /opportunities/search?location_id=&limit=&page=&startAfter=&startAfterId=`: newest
 *   created first, `limit` at most 100 (default 20), `meta: {total, nextPageUrl, startAfter,
 *   startAfterId, currentPage, nextPage, prevPage}`; `date`/`endDate` filter the creation date
 *   only, so nothing lists what changed since a time. `POST /opportunities/` (`{opportunity}`),
 *   `PUT /opportunities/{id}`, `DELETE /opportunities/{id}`; a deleted opportunity is listed nowhere.
 * - Errors `{statusCode, message, error?}`; 100 requests per 10 seconds per location and app
 *   (`X-RateLimit-Max`, `X-RateLimit-Remaining`, `X-RateLimit-Interval-Milliseconds`), past which 429.
 */

type Contact = Record<string, unknown> & { id: string; dateAdded: string; dateUpdated: string };
type Opportunity = Record<string, unknown> & { id: string; createdAt: string; updatedAt: string };
type Row<T> = StoredRecord<T>;

const LOCATION = 've9EPM428h8vShlRW1KT';
const VERSION = '2021-07-28';
const SEARCH_PAGE_MAX = 500;
const SEARCH_WINDOW = 10_000;
const INDEX_LAG_MS = 5_000;
const OPPORTUNITY_PAGE_MAX = 100;
const OPPORTUNITY_PAGE_DEFAULT = 20;
const BURST = 100;
const BURST_MS = 10_000;
const contactWritable = [
  'firstName',
  'lastName',
  'name',
  'email',
  'phone',
  'companyName',
  'address1',
  'city',
  'state',
  'postalCode',
  'website',
  'timezone',
  'source',
  'tags',
  'dnd',
  'customFields',
  'assignedTo',
];
const opportunityWritable = [
  'name',
  'pipelineId',
  'pipelineStageId',
  'status',
  'monetaryValue',
  'assignedTo',
  'contactId',
  'source',
];

/** Text fields the contact search filters on with `eq` (exact value). */
const equalityFields = ['email', 'firstName', 'lastName', 'companyName', 'phone', 'source'];

const ghlId = () => randomBytes(15).toString('base64url').slice(0, 20);
const iso = (ms: number) => new Date(ms).toISOString();

export async function startFakeHighLevelStandard(): Promise<ConformanceFake> {
  const contacts = new RecordStore<Contact>();
  const opportunities = new RecordStore<Opportunity>();
  const calls: number[] = [];

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      statusCode: error.status,
      message: error.status === 401 ? 'Invalid JWT' : error.message,
      ...(error.status === 400 && { error: 'Bad Request' }),
      ...(error.status === 422 && { error: 'Unprocessable Entity' }),
    }),
    rateLimitHeaders: () => ({
      'X-RateLimit-Max': String(BURST),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Interval-Milliseconds': String(BURST_MS),
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    const at = Date.now();
    while (calls.length && calls[0] <= at - BURST_MS) calls.shift();
    ctx.set('X-RateLimit-Max', String(BURST));
    ctx.set('X-RateLimit-Interval-Milliseconds', String(BURST_MS));
    if (calls.length >= BURST)
      throw new FakeHttpError(429, 'Too Many Requests', undefined, {
        'X-RateLimit-Remaining': '0',
        'Retry-After': String(Math.ceil((calls[0] + BURST_MS - at) / 1000)),
      });
    calls.push(at);
    ctx.set('X-RateLimit-Remaining', String(BURST - calls.length));
    if (ctx.get('version') !== VERSION) throw new FakeHttpError(400, 'version header was not found');
    await next();
  });

  const locationOf = (value: unknown) => {
    if (value === undefined || value === '') throw new FakeHttpError(422, 'locationId should not be empty');
    if (value !== LOCATION) throw new FakeHttpError(403, 'The token does not have access to this location');
  };
  const bodyOf = (ctx: Context): Record<string, unknown> => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Invalid body');
    return body as Record<string, unknown>;
  };
  const checkFields = (values: Record<string, unknown>, allowed: string[]) => {
    for (const name of Object.keys(values))
      if (!allowed.includes(name)) throw new FakeHttpError(422, `property ${name} should not exist`);
  };
  /** What the search index shows now: a change a few seconds after it, or later if committed late. */
  const indexed = <T>(row: Row<T>) =>
    Math.max(row.visibleFromMs ?? 0, row.modifiedMs + INDEX_LAG_MS) <= now();

  router.post('/contacts/search', (ctx) => {
    const body = bodyOf(ctx);
    locationOf(body.locationId);
    const pageLimit = body.pageLimit === undefined ? 20 : Number(body.pageLimit);
    const page = body.page === undefined ? 1 : Number(body.page);
    if (!Number.isInteger(pageLimit) || pageLimit < 1 || pageLimit > SEARCH_PAGE_MAX)
      throw new FakeHttpError(422, `pageLimit must not be greater than ${SEARCH_PAGE_MAX}`);
    if (!Number.isInteger(page) || page < 1) throw new FakeHttpError(422, 'page must be a positive integer');
    fake.logListing(ctx, { object: 'contacts', pageSize: pageLimit, maxPageSize: SEARCH_PAGE_MAX });
    const searchAfter = body.searchAfter as [number, string] | undefined;
    if (searchAfter === undefined && page * pageLimit > SEARCH_WINDOW)
      throw new FakeHttpError(422, `page * pageLimit cannot exceed ${SEARCH_WINDOW}; use searchAfter`);

    const tests: ((row: Row<Contact>) => boolean)[] = [];
    for (const filter of (body.filters ?? []) as { field?: string; operator?: string; value?: unknown }[]) {
      if (filter.operator === 'eq' && equalityFields.includes(String(filter.field))) {
        const field = String(filter.field);
        tests.push((row) => row.record[field] === filter.value);
        continue;
      }
      if (filter.field !== 'dateUpdated' && filter.field !== 'dateAdded')
        throw new FakeHttpError(422, `Filter on ${String(filter.field)} is not supported here`);
      if (filter.operator !== 'range')
        throw new FakeHttpError(422, `Unsupported operator ${String(filter.operator)}`);
      const bounds = (filter.value ?? {}) as Record<string, string>;
      const field = filter.field;
      for (const [op, text] of Object.entries(bounds)) {
        const bound = Date.parse(text);
        if (!['gt', 'gte', 'lt', 'lte'].includes(op) || Number.isNaN(bound))
          throw new FakeHttpError(422, `Invalid range ${op}: ${text}`);
        tests.push((row) => {
          const value = Date.parse(row.record[field] as string);
          return op === 'gt'
            ? value > bound
            : op === 'gte'
              ? value >= bound
              : op === 'lt'
                ? value < bound
                : value <= bound;
        });
      }
    }
    const [sort] = (body.sort ?? [{ field: 'dateAdded', direction: 'desc' }]) as {
      field: string;
      direction: string;
    }[];
    if (sort.field !== 'dateUpdated' && sort.field !== 'dateAdded')
      throw new FakeHttpError(422, `Sort on ${sort.field} is not supported here`);
    const direction = sort.direction === 'asc' ? 1 : -1;
    const key = (row: Row<Contact>): [number, string] => [
      Date.parse(row.record[sort.field] as string),
      row.record.id,
    ];
    const compare = (a: [number, string], b: [number, string]) =>
      (a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)) * direction;
    const found = contacts
      .live()
      .filter(indexed)
      .filter((row) => tests.every((test) => test(row)))
      .sort((a, b) => compare(key(a), key(b)));
    const after = searchAfter ? found.filter((row) => compare(key(row), searchAfter) > 0) : found;
    const start = searchAfter ? 0 : (page - 1) * pageLimit;
    ctx.body = {
      contacts: after
        .slice(start, start + pageLimit)
        .map((row) => ({ ...row.record, searchAfter: key(row) })),
      total: found.length,
    };
  });

  const contactRow = (id: string) => {
    const row = contacts.get(id);
    if (!row) throw new FakeHttpError(400, 'Contact not found');
    return row;
  };
  const createContact = (values: Record<string, unknown>, ms: number): Contact => {
    const id = ghlId();
    const record: Contact = {
      id,
      locationId: LOCATION,
      firstName: null,
      lastName: null,
      contactName: null,
      email: null,
      phone: null,
      companyName: null,
      source: null,
      type: 'lead',
      tags: [],
      dnd: false,
      customFields: [],
      dateAdded: iso(ms),
      dateUpdated: iso(ms),
      ...values,
    };
    record.contactName = [record.firstName, record.lastName].filter(Boolean).join(' ').toLowerCase() || null;
    contacts.put(id, record, ms);
    return record;
  };
  const stampContact = (row: Row<Contact>, ms: number, visibleFromMs?: number) => {
    Object.assign(row, { modifiedMs: ms, visibleFromMs });
    row.record.dateUpdated = iso(ms);
  };

  router.get('/contacts/:id', (ctx) => {
    ctx.body = { contact: contactRow(ctx.params.id).record };
  });
  router.post('/contacts/', (ctx) => {
    const { locationId, ...values } = bodyOf(ctx);
    locationOf(locationId);
    checkFields(values, contactWritable);
    ctx.status = 201;
    ctx.body = { contact: createContact(values, now()) };
  });
  router.put('/contacts/:id', (ctx) => {
    const row = contactRow(ctx.params.id);
    const values = bodyOf(ctx);
    checkFields(values, contactWritable);
    Object.assign(row.record, values);
    stampContact(row, now());
    ctx.body = { succeded: true, contact: row.record };
  });
  router.delete('/contacts/:id', (ctx) => {
    contactRow(ctx.params.id);
    contacts.remove(ctx.params.id, now());
    ctx.body = { succeded: true };
  });

  router.get('/opportunities/search', (ctx) => {
    locationOf(ctx.query.location_id);
    const limit = ctx.query.limit === undefined ? OPPORTUNITY_PAGE_DEFAULT : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > OPPORTUNITY_PAGE_MAX)
      throw new FakeHttpError(422, `limit must not be greater than ${OPPORTUNITY_PAGE_MAX}`);
    fake.logListing(ctx, { object: 'opportunities', pageSize: limit, maxPageSize: OPPORTUNITY_PAGE_MAX });
    const key = (row: Row<Opportunity>): [number, string] => [
      Date.parse(row.record.createdAt),
      row.record.id,
    ];
    // Newest created first; ties by id.
    const compare = (a: [number, string], b: [number, string]) =>
      b[0] - a[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    const all = opportunities
      .live()
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .sort((a, b) => compare(key(a), key(b)));
    let rest = all;
    if (ctx.query.startAfterId !== undefined && ctx.query.startAfter !== undefined) {
      const cursor: [number, string] = [Number(ctx.query.startAfter), String(ctx.query.startAfterId)];
      rest = all.filter((row) => compare(key(row), cursor) > 0);
    } else if (ctx.query.page !== undefined) {
      const page = Number(ctx.query.page);
      if (!Number.isInteger(page) || page < 1)
        throw new FakeHttpError(422, 'page must be a positive integer');
      rest = all.slice((page - 1) * limit);
    }
    const page = rest.slice(0, limit);
    const currentPage = Math.floor((all.length - rest.length) / limit) + 1;
    const more = rest.length > limit;
    const last = page.at(-1);
    const next = last && more ? { startAfter: key(last)[0], startAfterId: last.record.id } : undefined;
    const query = (params: Record<string, string>) =>
      `${ctx.protocol}://${ctx.host}/opportunities/search?${new URLSearchParams({ location_id: LOCATION, limit: String(limit), ...params }).toString()}`;
    ctx.body = {
      opportunities: page.map((row) => row.record),
      meta: {
        total: all.length,
        currentPage,
        nextPage: more ? currentPage + 1 : null,
        prevPage: currentPage > 1 ? currentPage - 1 : null,
        startAfter: next?.startAfter ?? null,
        startAfterId: next?.startAfterId ?? null,
        nextPageUrl: next
          ? query({ startAfter: String(next.startAfter), startAfterId: next.startAfterId })
          : null,
      },
    };
  });

  const opportunityRow = (id: string) => {
    const row = opportunities.get(id);
    if (!row) throw new FakeHttpError(404, 'Opportunity not found');
    return row;
  };
  const createOpportunity = (values: Record<string, unknown>, ms: number): Opportunity => {
    const id = ghlId();
    const record: Opportunity = {
      id,
      locationId: LOCATION,
      name: null,
      monetaryValue: 0,
      pipelineId: 'VDm7RPYC2GLUvdpKmBfC',
      pipelineStageId: '7915dedc-8f18-44d5-8bc3-77c04e994a10',
      assignedTo: null,
      status: 'open',
      source: null,
      contactId: null,
      lastStatusChangeAt: iso(ms),
      lastStageChangeAt: iso(ms),
      createdAt: iso(ms),
      updatedAt: iso(ms),
      customFields: [],
      ...values,
    };
    opportunities.put(id, record, ms);
    return record;
  };

  router.get('/opportunities/:id', (ctx) => {
    ctx.body = { opportunity: opportunityRow(ctx.params.id).record };
  });
  router.post('/opportunities/', (ctx) => {
    const { locationId, ...values } = bodyOf(ctx);
    locationOf(locationId);
    checkFields(values, opportunityWritable);
    for (const name of ['name', 'pipelineId', 'status'])
      if (values[name] === undefined || values[name] === '')
        throw new FakeHttpError(422, `${name} should not be empty`);
    ctx.status = 201;
    ctx.body = { opportunity: createOpportunity(values, now()) };
  });
  router.put('/opportunities/:id', (ctx) => {
    const row = opportunityRow(ctx.params.id);
    const values = bodyOf(ctx);
    checkFields(values, opportunityWritable);
    Object.assign(row.record, values, { updatedAt: iso(now()) });
    row.modifiedMs = now();
    ctx.body = { opportunity: row.record };
  });
  router.delete('/opportunities/:id', (ctx) => {
    opportunityRow(ctx.params.id);
    opportunities.remove(ctx.params.id, now());
    ctx.body = { succeded: true };
  });

  await fake.start();

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        if (object === 'contacts') {
          const n = contacts.nextId();
          return createContact(
            { firstName: `First${n}`, lastName: `Last${n}`, email: `c${n}@example.com` },
            ms,
          ).id;
        }
        const n = opportunities.nextId();
        return createOpportunity({ name: `Deal ${n}`, monetaryValue: n * 100 }, ms).id;
      }),
    touch(object, id, modifiedMs, options) {
      if (object === 'contacts') {
        const row = contacts.get(id);
        if (!row) throw new Error(`no contact ${id}`);
        stampContact(row, modifiedMs, options?.visibleFromMs);
        return;
      }
      const row = opportunities.get(id);
      if (!row) throw new Error(`no opportunity ${id}`);
      Object.assign(row, { modifiedMs, visibleFromMs: options?.visibleFromMs });
      Object.assign(row.record, {
        updatedAt: iso(modifiedMs),
        monetaryValue: (row.record.monetaryValue as number) + 1,
      });
    },
    remove: (object, id, atMs) => void (object === 'contacts' ? contacts : opportunities).remove(id, atMs),
    stored: (object, id) => (object === 'contacts' ? contacts : opportunities).get(id)?.record,
  });
}

/** The location (sub-account) the fake's token serves: the connection's `locationId`. */
export const HIGHLEVEL_FAKE_LOCATION = LOCATION;
