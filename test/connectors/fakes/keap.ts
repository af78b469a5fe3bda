import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for Keap's REST API v1 contacts (https://developer.keap.com/docs/rest/, the
 * Contact operations), answering as its reference and developer pages document: an OAuth2 bearer
 * token (refreshed at the token endpoint); `GET /crm/rest/v1/contacts` with `limit` (1000 at most)
 * and `offset`, `order` (`id` by default, or `date_created`, `last_updated`, `name`, `firstName`,
 * `email`) and `order_direction` (`ASCENDING` by default), `since` and `until` on LastUpdated (both
 * bounds inclusive: verify, the reference says only "start searching from" and "search to"), the
 * answer `{contacts, count, next, previous}` where `next` is present even past the last page (a
 * reader stops at an empty page, as the SDKs do); times written `2017-06-14T13:47:24.000+0000`, kept
 * in whole seconds, with `last_updated_utc_millis` beside them; custom fields `[{id, content}]` only
 * when `optional_properties=custom_fields` asks, described at `GET /contacts/model`; `POST` answering
 * 201 with the contact, `PATCH /contacts/{id}` 200 with it, `DELETE` 204; a deleted contact is gone,
 * listed nowhere; errors `{message}`, a 401 as the gateway's `fault`; the `x-keap-product-throttle-*`
 * headers on every answer and 429 `Quota Exceeded` past 25 calls in a second (the spike policy of
 * https://developer.infusionsoft.com/api-token-quota-and-usage-measurements).
 *
 * Companies and opportunities are not here: their v1 listings take no modification-time filter.
 */

type Contact = Record<string, unknown> & { id: number };

const maxLimit = 1000;
/** The gateway's spike policy: calls a second. */
const spikePerSecond = 25;

const customFields = [
  {
    id: 6,
    label: 'Title',
    options: [],
    record_type: 'CONTACT',
    field_type: 'Text',
    field_name: 'jobtitle',
    default_value: null,
  },
  {
    id: 8,
    label: 'Tier',
    options: [
      { id: 'gold', label: 'Gold', options: [] },
      { id: 'silver', label: 'Silver', options: [] },
    ],
    record_type: 'CONTACT',
    field_type: 'Dropdown',
    field_name: 'tier',
    default_value: null,
  },
];

/** Keap keeps whole seconds. */
const second = (ms: number) => Math.floor(ms / 1000) * 1000;
const keapTime = (ms: number) => new Date(second(ms)).toISOString().replace('Z', '+0000');

function filterTime(name: string, value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = Date.parse(String(value).replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(ms)) throw new FakeHttpError(400, `Invalid ${name} date: ${String(value)}`);
  return ms;
}

const writable = [
  'given_name',
  'family_name',
  'middle_name',
  'job_title',
  'website',
  'preferred_name',
  'email_addresses',
  'phone_numbers',
  'addresses',
  'custom_fields',
  'owner_id',
  'lead_source_id',
  'opt_in_reason',
  'source_type',
  'contact_type',
  'notes',
];

export async function startFakeKeap(): Promise<ConformanceFake> {
  const contacts = new RecordStore<Contact>();
  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.status === 401
        ? {
            fault: {
              faultstring: 'Invalid Access Token',
              detail: { errorcode: 'keymanagement.service.invalid_access_token' },
            },
          }
        : error.status === 429
          ? { code: '429', message: 'Quota Exceeded', status: 'Request Throttled', details: null }
          : { message: error.message },
    rateLimitHeaders: () => ({
      'x-keap-product-throttle-limit': '1500',
      'x-keap-product-throttle-available': '0',
      'x-keap-product-throttle-time-unit': 'minute',
      'x-keap-product-throttle-interval': '1',
    }),
  });

  /** Custom values, kept apart from the contact: contact id → field id → content. */
  const values = new Map<number, Map<number, unknown>>();
  const listedBefore = new Map<number, number>();
  const listedMs = (row: { record: Contact; modifiedMs: number; visibleFromMs?: number }) =>
    row.visibleFromMs !== undefined && row.visibleFromMs > fake.now()
      ? (listedBefore.get(row.record.id) ?? Number.NaN)
      : row.modifiedMs;

  const touch = (record: Contact, ms: number, visibleFromMs?: number) => {
    const before = contacts.get(String(record.id));
    if (visibleFromMs !== undefined && before) listedBefore.set(record.id, before.modifiedMs);
    else listedBefore.delete(record.id);
    record.last_updated = keapTime(ms);
    record.last_updated_utc_millis = second(ms);
    contacts.put(String(record.id), record, second(ms), visibleFromMs);
  };

  const contactOf = (id: string): Contact => {
    const row = contacts.get(id);
    if (!row) throw new FakeHttpError(404, `Contact with ID ${id} not found`);
    return row.record;
  };

  /** The contact as answered: custom values only when `optional_properties` names them. */
  const view = (record: Contact, ctx: Context) => {
    const optional = String(ctx.query.optional_properties ?? '').split(',');
    if (!optional.includes('custom_fields')) return record;
    const own = values.get(record.id) ?? new Map<number, unknown>();
    return {
      ...record,
      custom_fields: customFields.map((field) => ({ id: field.id, content: own.get(field.id) ?? null })),
    };
  };

  const apply = (record: Contact, body: unknown) => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Input could not be converted to a valid request');
    const unknown = Object.keys(body).filter((key) => !writable.includes(key));
    if (unknown.length) throw new FakeHttpError(400, `Invalid field(s): ${unknown.join(', ')}`);
    const { custom_fields: custom, ...rest } = body as Record<string, unknown>;
    if (custom !== undefined) {
      if (!Array.isArray(custom)) throw new FakeHttpError(400, 'custom_fields must be a list');
      const own = values.get(record.id) ?? new Map<number, unknown>();
      for (const entry of custom as { id?: unknown; content?: unknown }[]) {
        const field = customFields.find((candidate) => candidate.id === Number(entry.id));
        if (!field) throw new FakeHttpError(400, `Custom field ${String(entry.id)} does not exist`);
        own.set(field.id, entry.content);
      }
      values.set(record.id, own);
    }
    for (const list of ['email_addresses', 'phone_numbers', 'addresses'])
      if (list in rest && !Array.isArray(rest[list])) throw new FakeHttpError(400, `${list} must be a list`);
    Object.assign(record, rest);
  };

  const newContact = (body: unknown, ms: number): Contact => {
    const id = contacts.nextId();
    const record: Contact = {
      id,
      given_name: null,
      family_name: null,
      middle_name: null,
      job_title: null,
      website: null,
      preferred_name: null,
      email_addresses: [],
      phone_numbers: [],
      addresses: [],
      owner_id: null,
      email_opted_in: false,
      email_status: 'UnengagedMarketable',
      tag_ids: [],
      date_created: keapTime(ms),
      last_updated: keapTime(ms),
      last_updated_utc_millis: second(ms),
    };
    apply(record, body);
    const emails = record.email_addresses as unknown[];
    const phones = record.phone_numbers as unknown[];
    if (!emails.length && !phones.length)
      throw new FakeHttpError(400, 'Contact must contain at least one email address or phone number');
    contacts.put(String(id), record, second(ms));
    return record;
  };

  const router = fake.router;
  /** Times of the calls in the last minute (the real clock: throttles are not the provider's data). */
  const calls: number[] = [];
  router.use(async (ctx, next) => {
    const now = Date.now();
    while (calls.length && calls[0] <= now - 60_000) calls.shift();
    calls.push(now);
    ctx.set('x-keap-product-throttle-limit', '1500');
    ctx.set('x-keap-product-throttle-available', String(Math.max(0, 1500 - calls.length)));
    ctx.set('x-keap-product-throttle-used', String(calls.length));
    ctx.set('x-keap-product-throttle-time-unit', 'minute');
    ctx.set('x-keap-product-throttle-interval', '1');
    const lastSecond = calls.filter((at) => at > now - 1000).length;
    if (lastSecond > spikePerSecond || calls.length > 1500) throw new FakeHttpError(429, 'Quota Exceeded');
    await next();
  });

  router.get('/crm/rest/v1/contacts/model', (ctx) => {
    ctx.body = { custom_fields: customFields, optional_properties: ['custom_fields', 'job_title', 'notes'] };
  });

  router.get('/crm/rest/v1/contacts', (ctx) => {
    const asked = Number(ctx.query.limit ?? maxLimit);
    const offset = Number(ctx.query.offset ?? 0);
    fake.logListing(ctx, { object: 'contacts', pageSize: asked, maxPageSize: maxLimit });
    if (!Number.isInteger(asked) || asked < 1) throw new FakeHttpError(400, 'Invalid limit');
    if (!Number.isInteger(offset) || offset < 0) throw new FakeHttpError(400, 'Invalid offset');
    // More than the maximum answers the maximum.
    const limit = Math.min(asked, maxLimit);
    const since = filterTime('since', ctx.query.since);
    const until = filterTime('until', ctx.query.until);
    const order = String(ctx.query.order ?? 'id');
    const direction = String(ctx.query.order_direction ?? 'ASCENDING').toUpperCase();
    if (direction !== 'ASCENDING' && direction !== 'DESCENDING')
      throw new FakeHttpError(400, `Invalid order_direction: ${direction}`);
    const email = ctx.query.email;
    const key: Record<string, (row: { record: Contact; modifiedMs: number }) => number | string> = {
      id: (row) => row.record.id,
      date_created: (row) => Date.parse(String(row.record.date_created).replace('+0000', 'Z')),
      last_updated: (row) => listedMs(row),
      name: (row) => `${String(row.record.family_name ?? '')} ${String(row.record.given_name ?? '')}`,
      firstName: (row) => String(row.record.given_name ?? ''),
      email: (row) => String((row.record.email_addresses as { email?: string }[])[0]?.email ?? ''),
    };
    const by = key[order];
    if (!by) throw new FakeHttpError(400, `Invalid order: ${order}`);
    const rows = contacts
      .live()
      .filter((row) => {
        const ms = listedMs(row);
        return (
          !Number.isNaN(ms) &&
          (since === undefined || ms >= since) &&
          (until === undefined || ms <= until) &&
          (typeof email !== 'string' ||
            (row.record.email_addresses as { email?: string }[]).some((entry) => entry.email === email))
        );
      })
      .sort((a, b) => {
        const [x, y] = [by(a), by(b)];
        return (x < y ? -1 : x > y ? 1 : 0) || a.record.id - b.record.id;
      });
    if (direction === 'DESCENDING') rows.reverse();
    const link = (at: number) => {
      const query = new URLSearchParams(ctx.querystring);
      query.set('limit', String(limit));
      query.set('offset', String(Math.max(0, at)));
      return `${fake.url}/crm/rest/v1/contacts/?${query}`;
    };
    ctx.body = {
      contacts: rows.slice(offset, offset + limit).map((row) => view(row.record, ctx)),
      count: rows.length,
      next: link(offset + limit),
      previous: link(offset - limit),
    };
  });

  router.get('/crm/rest/v1/contacts/:id', (ctx) => {
    ctx.body = view(contactOf(ctx.params.id), ctx);
  });

  router.post('/crm/rest/v1/contacts', (ctx) => {
    const record = newContact(ctx.request.body, fake.now());
    ctx.status = 201;
    ctx.body = view(record, ctx);
  });

  router.patch('/crm/rest/v1/contacts/:id', (ctx) => {
    const record = contactOf(ctx.params.id);
    apply(record, ctx.request.body);
    touch(record, fake.now());
    ctx.body = view(record, ctx);
  });

  router.delete('/crm/rest/v1/contacts/:id', (ctx) => {
    contactOf(ctx.params.id);
    contacts.remove(ctx.params.id, second(fake.now()));
    ctx.status = 204;
  });

  await fake.start();

  const stored = (id: string) => {
    const record = contacts.get(id)?.record;
    if (!record) return undefined;
    const own = values.get(record.id);
    return {
      ...record,
      ...(own && { custom_fields: [...own].map(([field, content]) => ({ id: field, content })) }),
    };
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
      if (object !== 'contacts') throw new Error(`The Keap fake has no ${object}`);
      return modifiedTimes.map((ms) => {
        const n = contacts.rows.size + 1;
        const record = newContact(
          {
            given_name: 'Seed',
            family_name: String(n),
            email_addresses: [{ email: `seed${n}-${ms}@example.com`, field: 'EMAIL1' }],
            custom_fields: [
              { id: 6, content: 'Engineer' },
              { id: 8, content: 'gold' },
            ],
          },
          ms,
        );
        return String(record.id);
      });
    },
    touch(object, id, modifiedMs, options) {
      touch(contactOf(id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      contacts.remove(id, second(atMs));
    },
    stored: (object, id) => stored(id),
    stop: () => fake.stop(),
  };
}
