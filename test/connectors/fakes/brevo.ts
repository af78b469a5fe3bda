import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for Brevo's API v3 contacts (https://developers.brevo.com/reference/get-contacts),
 * answering as its reference documents: the key in the `api-key` header; `GET /v3/contacts` with
 * `limit` (50 by default, 1 to 1000) and `offset` over the matching contacts, ordered by CREATION
 * (`sort=desc` by default, `asc` the other way; never by modification), `modifiedSince` keeping the
 * contacts modified strictly after the time given ("modified after"; a time without a zone read in
 * the account's timezone, as "prefer to pass your timezone" warns), the answer
 * `{contacts: [...], count}` where `count` is the number matching the filter (changelog 2021-05-07);
 * times written `YYYY-MM-DDTHH:mm:ss.SSSZ`, kept to the millisecond; attributes under `attributes`
 * by their upper-case names, described at `GET /v3/contacts/attributes`; `POST /v3/contacts`
 * answering 201 `{id}`, `PUT /v3/contacts/{identifier}` and `DELETE` answering 204 with no body; a
 * deleted contact is gone and listed nowhere; errors `{code, message}`; the
 * `x-sib-ratelimit-limit|remaining|reset` headers (https://developers.brevo.com/docs/limit-headers).
 */

type Contact = Record<string, unknown> & { id: number; attributes: Record<string, unknown> };

/** The account's timezone, in which Brevo reads a time passed without one. */
const accountOffsetMinutes = 60;
const maxLimit = 1000;

const attributes = [
  { name: 'FIRSTNAME', category: 'normal', type: 'text' },
  { name: 'LASTNAME', category: 'normal', type: 'text' },
  { name: 'DOB', category: 'normal', type: 'date' },
  {
    name: 'GENDER',
    category: 'category',
    type: 'category',
    enumeration: [
      { value: 1, label: 'Male' },
      { value: 2, label: 'Female' },
    ],
  },
  // A calculated attribute: computed by Brevo, never written.
  { name: 'SCORE', category: 'calculated', type: 'float', calculatedValue: 'COUNT[BLACKLISTED]' },
];

const iso = (ms: number) => new Date(ms).toISOString();

/** `modifiedSince`: an RFC 3339 time, or one without a zone in the account's timezone. */
function sinceTime(value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  const text = String(value);
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  const ms = zoned ? Date.parse(text) : Date.parse(`${text}Z`) - accountOffsetMinutes * 60_000;
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(ms))
    throw new FakeHttpError(400, 'modifiedSince is not a valid date-time', 'invalid_parameter');
  return ms;
}

export async function startFakeBrevo(): Promise<ConformanceFake> {
  const contacts = new RecordStore<Contact>();
  const fake = new FakeProvider({
    credentialOf: (ctx) => ctx.get('api-key') || undefined,
    errorBody: (error) => ({
      code:
        error.code ??
        (error.status === 401
          ? 'unauthorized'
          : error.status === 404
            ? 'document_not_found'
            : error.status === 429
              ? 'too_many_requests'
              : 'bad_request'),
      message: error.status === 401 ? 'Key not found' : error.message,
    }),
    rateLimitHeaders: () => ({
      'x-sib-ratelimit-limit': '10',
      'x-sib-ratelimit-remaining': '0',
      'x-sib-ratelimit-reset': '1',
    }),
    prefix: '/v3',
  });

  /** What listings see of a contact changed with a late `visibleFromMs`: its time before. */
  const listedBefore = new Map<number, number>();
  const listedMs = (row: { record: Contact; modifiedMs: number; visibleFromMs?: number }) =>
    row.visibleFromMs !== undefined && row.visibleFromMs > fake.now()
      ? (listedBefore.get(row.record.id) ?? Number.NaN)
      : row.modifiedMs;

  const touch = (record: Contact, ms: number, visibleFromMs?: number) => {
    const before = contacts.get(String(record.id));
    if (visibleFromMs !== undefined && before) listedBefore.set(record.id, before.modifiedMs);
    else listedBefore.delete(record.id);
    record.modifiedAt = iso(ms);
    contacts.put(String(record.id), record, ms, visibleFromMs);
  };

  /** A contact by its identifier: an id, or an email address (`identifierType` may say which). */
  const contactOf = (ctx: Context): Contact => {
    const identifier = decodeURIComponent(ctx.params.identifier);
    const type = ctx.query.identifierType;
    const byEmail = type === 'email_id' || (type === undefined && identifier.includes('@'));
    const row = byEmail
      ? contacts.live().find((candidate) => candidate.record.email === identifier)
      : contacts.get(identifier);
    if (!row) throw new FakeHttpError(404, 'Contact does not exist', 'document_not_found');
    return row.record;
  };

  const checkAttributes = (values: unknown): Record<string, unknown> => {
    if (values === undefined) return {};
    if (!values || typeof values !== 'object' || Array.isArray(values))
      throw new FakeHttpError(400, 'attributes must be an object', 'invalid_parameter');
    for (const name of Object.keys(values)) {
      const attribute = attributes.find((candidate) => candidate.name === name.toUpperCase());
      if (!attribute) throw new FakeHttpError(400, `Attribute ${name} does not exist`, 'invalid_parameter');
      if (attribute.category === 'calculated')
        throw new FakeHttpError(400, `Attribute ${name} is calculated`, 'invalid_parameter');
    }
    // Attribute names are stored upper-case, however they were sent.
    return Object.fromEntries(Object.entries(values).map(([name, value]) => [name.toUpperCase(), value]));
  };

  const checkEmail = (email: unknown, self?: number) => {
    if (typeof email !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))
      throw new FakeHttpError(400, 'Invalid email address', 'invalid_parameter');
    if (contacts.live().some((row) => row.record.email === email && row.record.id !== self))
      throw new FakeHttpError(
        400,
        'Unable to create contact, email is already associated with another Contact',
        'duplicate_parameter',
      );
  };

  const newContact = (values: Record<string, unknown>, ms: number): Contact => {
    const id = contacts.nextId();
    const record: Contact = {
      email: values.email,
      id,
      emailBlacklisted: values.emailBlacklisted ?? false,
      smsBlacklisted: values.smsBlacklisted ?? false,
      createdAt: iso(ms),
      modifiedAt: iso(ms),
      listIds: values.listIds ?? [],
      attributes: { SCORE: 0, ...(values.attributes as Record<string, unknown>) },
    };
    contacts.put(String(id), record, ms);
    return record;
  };

  const router = fake.router;
  // Every rate-limited answer carries the window's state, not only a 429.
  let remaining = 10;
  router.use(async (ctx, next) => {
    remaining = remaining > 1 ? remaining - 1 : 10;
    ctx.set('x-sib-ratelimit-limit', '10');
    ctx.set('x-sib-ratelimit-remaining', String(remaining));
    ctx.set('x-sib-ratelimit-reset', '1');
    await next();
  });

  router.get('/contacts/attributes', (ctx) => {
    ctx.body = { attributes };
  });

  router.get('/contacts', (ctx) => {
    const limit = Number(ctx.query.limit ?? 50);
    const offset = Number(ctx.query.offset ?? 0);
    fake.logListing(ctx, { object: 'contacts', pageSize: limit, maxPageSize: maxLimit });
    if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit)
      throw new FakeHttpError(400, `limit must be between 1 and ${maxLimit}`, 'out_of_range');
    if (!Number.isInteger(offset) || offset < 0)
      throw new FakeHttpError(400, 'offset must be a non-negative integer', 'invalid_parameter');
    const sort = ctx.query.sort ?? 'desc';
    if (sort !== 'asc' && sort !== 'desc')
      throw new FakeHttpError(400, 'sort must be asc or desc', 'invalid_parameter');
    const since = sinceTime(ctx.query.modifiedSince);
    const createdSince = sinceTime(ctx.query.createdSince);
    const rows = contacts
      .live()
      .filter((row) => {
        const ms = listedMs(row);
        return (
          !Number.isNaN(ms) &&
          (since === undefined || ms > since) &&
          (createdSince === undefined || Date.parse(String(row.record.createdAt)) > createdSince)
        );
      })
      // Creation order, ties by id; descending unless asked otherwise.
      .sort(
        (a, b) =>
          Date.parse(String(a.record.createdAt)) - Date.parse(String(b.record.createdAt)) ||
          a.record.id - b.record.id,
      );
    if (sort === 'desc') rows.reverse();
    ctx.body = {
      contacts: rows.slice(offset, offset + limit).map((row) => row.record),
      count: rows.length,
    };
  });

  router.get('/contacts/:identifier', (ctx) => {
    const contact = contactOf(ctx);
    ctx.body = { ...contact, statistics: {} };
  });

  router.post('/contacts', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    checkEmail(body.email);
    const record = newContact({ ...body, attributes: checkAttributes(body.attributes) }, fake.now());
    ctx.status = 201;
    ctx.body = { id: record.id };
  });

  router.put('/contacts/:identifier', (ctx) => {
    const contact = contactOf(ctx);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const known = ['attributes', 'emailBlacklisted', 'smsBlacklisted', 'listIds', 'unlinkListIds', 'ext_id'];
    const unknown = Object.keys(body).filter((key) => !known.includes(key));
    if (unknown.length)
      throw new FakeHttpError(400, `Invalid parameter(s): ${unknown.join(', ')}`, 'invalid_parameter');
    const values = checkAttributes(body.attributes);
    // The address is changed through the EMAIL attribute.
    if ('EMAIL' in values) {
      checkEmail(values.EMAIL, contact.id);
      contact.email = values.EMAIL;
      delete values.EMAIL;
    }
    Object.assign(contact.attributes, values);
    for (const key of ['emailBlacklisted', 'smsBlacklisted', 'listIds', 'ext_id'])
      if (key in body) contact[key] = body[key];
    touch(contact, fake.now());
    ctx.status = 204;
  });

  router.delete('/contacts/:identifier', (ctx) => {
    const contact = contactOf(ctx);
    contacts.remove(String(contact.id), fake.now());
    ctx.status = 204;
  });

  await fake.start();

  const stored = (id: string) => contacts.get(id)?.record;
  return {
    url: fake.url.replace(/\/v3$/, ''),
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    requests: fake.requests,
    setClock: (now) => fake.setClock(now),
    seed: (object, modifiedTimes) => {
      if (object !== 'contacts') throw new Error(`The Brevo fake has no ${object}`);
      return modifiedTimes.map((ms) => {
        const n = contacts.rows.size + 1;
        const record = newContact(
          {
            email: `seed${n}-${ms}@example.com`,
            attributes: { FIRSTNAME: 'Seed', LASTNAME: String(n), DOB: '1990-01-01', GENDER: 2 },
          },
          ms,
        );
        return String(record.id);
      });
    },
    touch(object, id, modifiedMs, options) {
      const record = stored(id);
      if (!record) throw new Error(`No contact ${id}`);
      touch(record, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      contacts.remove(id, atMs);
    },
    stored: (object, id) => stored(id),
    stop: () => fake.stop(),
  };
}
