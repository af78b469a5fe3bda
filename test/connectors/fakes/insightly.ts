import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  basicUserCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Insightly's REST API v3.1 (https://api.insightly.com/v3.1/Help, and the
 * knowledge-base page "Working with the Insightly Web API"), for contacts, organisations and
 * opportunities, answering as the reference documents:
 *
 * - HTTP Basic authentication with the user's API key as the user name (password ignored); a wrong
 *   or missing key answers 401.
 * - `GET /v3.1/{Object}` lists; `GET /v3.1/{Object}/Search` filters by one `field_name` +
 *   `field_value` (equality) and/or `updated_after_utc` ("earliest date when the record was last
 *   updated": at or after, to the second; `yyyy-mm-ddThh:mm:ssZ`). Both take `brief` (top-level
 *   properties only: no CUSTOMFIELDS, TAGS, LINKS, DATES, EMAILDOMAINS), `skip`, `top` (default 100,
 *   at most 500) and `count_total` (the count in `X-Total-Count`). The answer is a bare JSON array.
 *   The reference names no order; this fake lists by record id ascending.
 * - Records are flat UPPER_SNAKE objects: `CONTACT_ID`, `ORGANISATION_ID`, `OPPORTUNITY_ID`;
 *   `DATE_CREATED_UTC`/`DATE_UPDATED_UTC` written `2025-04-22 20:03:25` (UTC, whole seconds);
 *   custom values in `CUSTOMFIELDS: [{FIELD_NAME, FIELD_VALUE, CUSTOM_FIELD_ID}]`, described at
 *   `GET /v3.1/CustomFields/{Object}`.
 * - `POST /v3.1/{Object}` creates (200 with the record); `PUT /v3.1/{Object}` updates the record
 *   whose id field the body carries, changing only the fields sent (v3.1), custom fields merged by
 *   `FIELD_NAME`; `DELETE /v3.1/{Object}/{id}` answers 202. A deleted record is gone: no listing
 *   shows it. Contacts need `FIRST_NAME`, organisations `ORGANISATION_NAME`, opportunities
 *   `OPPORTUNITY_NAME`.
 * - Errors as ASP.NET Web API answers them, `{"Message": "..."}`; every answer carries
 *   `X-RateLimit-Limit` (the plan's calls a day) and `X-RateLimit-Remaining`.
 */

type InsightlyRecord = Record<string, unknown>;

const objects = ['Contacts', 'Organisations', 'Opportunities'] as const;
type InsightlyObject = (typeof objects)[number];

const idField: Record<InsightlyObject, string> = {
  Contacts: 'CONTACT_ID',
  Organisations: 'ORGANISATION_ID',
  Opportunities: 'OPPORTUNITY_ID',
};
const requiredField: Record<InsightlyObject, string> = {
  Contacts: 'FIRST_NAME',
  Organisations: 'ORGANISATION_NAME',
  Opportunities: 'OPPORTUNITY_NAME',
};
/** The fields each object stores (from the reference's models), null until set. */
const fieldsOf: Record<InsightlyObject, string[]> = {
  Contacts: [
    'SALUTATION',
    'FIRST_NAME',
    'LAST_NAME',
    'TITLE',
    'BACKGROUND',
    'EMAIL_ADDRESS',
    'PHONE',
    'PHONE_MOBILE',
    'ORGANISATION_ID',
    'OWNER_USER_ID',
    'ADDRESS_MAIL_CITY',
    'ADDRESS_MAIL_COUNTRY',
    'EMAIL_OPTED_OUT',
  ],
  Organisations: [
    'ORGANISATION_NAME',
    'BACKGROUND',
    'PHONE',
    'WEBSITE',
    'OWNER_USER_ID',
    'ADDRESS_BILLING_CITY',
    'ADDRESS_BILLING_COUNTRY',
  ],
  Opportunities: [
    'OPPORTUNITY_NAME',
    'OPPORTUNITY_DETAILS',
    'OPPORTUNITY_STATE',
    'OPPORTUNITY_VALUE',
    'BID_CURRENCY',
    'PROBABILITY',
    'ORGANISATION_ID',
    'OWNER_USER_ID',
  ],
};
/** Sub-collections `brief=true` leaves out. */
const subCollections = ['CUSTOMFIELDS', 'TAGS', 'LINKS', 'DATES', 'EMAILDOMAINS'];
const readOnly = ['DATE_CREATED_UTC', 'DATE_UPDATED_UTC', 'CREATED_USER_ID', 'LAST_ACTIVITY_DATE_UTC'];

const customFieldsOf: Record<
  InsightlyObject,
  { name: string; label: string; type: string; options: string[] }[]
> = {
  Contacts: [
    { name: 'Hobby__c', label: 'Hobby', type: 'TEXT', options: [] },
    { name: 'Tier__c', label: 'Tier', type: 'DROPDOWN', options: ['Gold', 'Silver'] },
  ],
  Organisations: [{ name: 'Region__c', label: 'Region', type: 'TEXT', options: [] }],
  Opportunities: [{ name: 'Source__c', label: 'Source', type: 'TEXT', options: [] }],
};
const fieldFor: Record<InsightlyObject, string> = {
  Contacts: 'CONTACT',
  Organisations: 'ORGANISATION',
  Opportunities: 'OPPORTUNITY',
};

const TOP_DEFAULT = 100;
const TOP_MAX = 500;
const DAILY_LIMIT = 100_000;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const insightlyTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().slice(0, 19).replace('T', ' ');

function parseTime(text: string): number {
  // A time without a zone is UTC (the reference asks for UTC throughout).
  const zoned = /[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text.replace(' ', 'T')}Z`;
  const ms = Date.parse(zoned);
  if (Number.isNaN(ms))
    throw new FakeHttpError(400, `The value '${text}' is not valid for updated_after_utc.`);
  return ms;
}

function intParam(ctx: Context, name: string, fallback: number, max?: number): number {
  const raw = ctx.query[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || (max !== undefined && (value < 1 || value > max)))
    throw new FakeHttpError(400, `The value '${String(raw)}' is not valid for ${name}.`);
  return value;
}

export async function startFakeInsightly(): Promise<ConformanceFake> {
  const stores: Record<InsightlyObject, RecordStore<InsightlyRecord>> = {
    Contacts: new RecordStore(),
    Organisations: new RecordStore(),
    Opportunities: new RecordStore(),
  };
  const budget = new RequestWindow(DAILY_LIMIT, 86_400_000);

  const fake = new FakeProvider({
    credentialOf: basicUserCredential,
    errorBody: (error) => ({
      Message: error.status === 401 ? 'Authorization has been denied for this request.' : error.message,
    }),
    rateLimitHeaders: () => ({ 'X-RateLimit-Limit': String(DAILY_LIMIT), 'X-RateLimit-Remaining': '0' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  // The daily budget's headers, counted on the fake's own (real) time.
  router.use(async (ctx, next) => {
    const taken = budget.take();
    ctx.set('X-RateLimit-Limit', String(DAILY_LIMIT));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, DAILY_LIMIT - taken.used)));
    if (!taken.allowed) throw new FakeHttpError(429, 'API call limit exceeded for today.');
    await next();
  });

  const objectOf = (ctx: Context): InsightlyObject => {
    const object = ctx.params.object as InsightlyObject;
    if (!objects.includes(object))
      throw new FakeHttpError(404, `No HTTP resource was found that matches the request URI.`);
    return object;
  };
  const rowOf = (object: InsightlyObject, id: string) => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${object.slice(0, -1)} not found.`);
    return row;
  };
  const present = (record: InsightlyRecord, brief: boolean) =>
    brief
      ? Object.fromEntries(Object.entries(record).filter(([name]) => !subCollections.includes(name)))
      : record;

  const list = (ctx: Context, object: InsightlyObject, search: boolean) => {
    const top = intParam(ctx, 'top', TOP_DEFAULT, TOP_MAX);
    const skip = intParam(ctx, 'skip', 0);
    fake.logListing(ctx, { object, pageSize: top, maxPageSize: TOP_MAX });
    const brief = String(ctx.query.brief ?? 'false').toLowerCase() === 'true';
    let since: number | undefined;
    let field: { name: string; value: string } | undefined;
    if (search) {
      const updatedAfter = ctx.query.updated_after_utc;
      if (updatedAfter !== undefined && updatedAfter !== '') since = parseTime(String(updatedAfter));
      const name = ctx.query.field_name;
      const value = ctx.query.field_value;
      if ((name === undefined) !== (value === undefined))
        throw new FakeHttpError(400, 'field_name and field_value must be given together.');
      if (name !== undefined) {
        const known = [idField[object], ...fieldsOf[object], ...customFieldsOf[object].map((f) => f.name)];
        if (!known.includes(String(name)))
          throw new FakeHttpError(400, `Invalid field_name '${String(name)}'.`);
        field = { name: String(name), value: String(value) };
      }
    }
    const valueOf = (record: InsightlyRecord, name: string) =>
      name.endsWith('__c')
        ? (record.CUSTOMFIELDS as { FIELD_NAME: string; FIELD_VALUE: unknown }[]).find(
            (f) => f.FIELD_NAME === name,
          )?.FIELD_VALUE
        : record[name];
    const found = stores[object]
      .live()
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => since === undefined || row.modifiedMs >= wholeSecond(since))
      .filter((row) => !field || String(valueOf(row.record, field.name) ?? '') === field.value)
      .sort((a, b) => Number(a.record[idField[object]]) - Number(b.record[idField[object]]));
    if (String(ctx.query.count_total ?? '').toLowerCase() === 'true')
      ctx.set('X-Total-Count', String(found.length));
    ctx.body = found.slice(skip, skip + top).map((row) => present(row.record, brief));
  };

  router.get('/v3.1/CustomFields/:object', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = customFieldsOf[object].map((field, index) => ({
      FIELD_NAME: field.name,
      FIELD_ORDER: index + 1,
      FIELD_FOR: fieldFor[object],
      FIELD_LABEL: field.label,
      FIELD_TYPE: field.type,
      FIELD_HELP_TEXT: null,
      DEFAULT_VALUE: null,
      EDITABLE: true,
      VISIBLE: true,
      CUSTOM_FIELD_OPTIONS: field.options.map((value, option) => ({
        OPTION_ID: option + 1,
        OPTION_VALUE: value,
        OPTION_DEFAULT: false,
      })),
      DEPENDENCY: null,
      JOIN_OBJECT: null,
    }));
  });
  router.get('/v3.1/:object/Search', (ctx) => list(ctx, objectOf(ctx), true));
  router.get('/v3.1/:object', (ctx) => list(ctx, objectOf(ctx), false));
  router.get('/v3.1/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = rowOf(object, ctx.params.id).record;
  });

  const bodyOf = (ctx: Context): InsightlyRecord => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'The request body must be a JSON object.');
    return body as InsightlyRecord;
  };

  /** Applies a body's known fields and custom values (others are ignored, as model binding does). */
  const apply = (object: InsightlyObject, record: InsightlyRecord, body: InsightlyRecord) => {
    for (const [name, value] of Object.entries(body)) {
      if (fieldsOf[object].includes(name)) record[name] = value;
    }
    if (body.CUSTOMFIELDS !== undefined) {
      if (!Array.isArray(body.CUSTOMFIELDS)) throw new FakeHttpError(400, 'CUSTOMFIELDS must be a list.');
      const custom = record.CUSTOMFIELDS as {
        FIELD_NAME: string;
        FIELD_VALUE: unknown;
        CUSTOM_FIELD_ID: string;
      }[];
      for (const entry of body.CUSTOMFIELDS as { FIELD_NAME?: string; FIELD_VALUE?: unknown }[]) {
        const name = String(entry?.FIELD_NAME ?? '');
        if (!customFieldsOf[object].some((field) => field.name === name))
          throw new FakeHttpError(400, `Invalid custom field '${name}'.`);
        const existing = custom.find((field) => field.FIELD_NAME === name);
        if (existing) existing.FIELD_VALUE = entry.FIELD_VALUE ?? null;
        else custom.push({ FIELD_NAME: name, FIELD_VALUE: entry.FIELD_VALUE ?? null, CUSTOM_FIELD_ID: name });
      }
    }
  };

  const create = (object: InsightlyObject, body: InsightlyRecord, ms: number) => {
    const id = 360_000_000 + stores[object].nextId();
    const record: InsightlyRecord = {
      [idField[object]]: id,
      ...Object.fromEntries(fieldsOf[object].map((name) => [name, null])),
      DATE_CREATED_UTC: insightlyTime(ms),
      DATE_UPDATED_UTC: insightlyTime(ms),
      CREATED_USER_ID: 2240727,
      CUSTOMFIELDS: [],
      TAGS: [],
      LINKS: [],
      ...(object !== 'Opportunities' && { DATES: [] }),
      ...(object === 'Organisations' && { EMAILDOMAINS: [] }),
    };
    apply(object, record, body);
    stores[object].put(String(id), record, wholeSecond(ms));
    return record;
  };
  const stamp = (object: InsightlyObject, id: string, ms: number, visibleFromMs?: number) => {
    const row = rowOf(object, id);
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.DATE_UPDATED_UTC = insightlyTime(ms);
  };

  router.post('/v3.1/:object', (ctx) => {
    const object = objectOf(ctx);
    const body = bodyOf(ctx);
    const required = requiredField[object];
    if (typeof body[required] !== 'string' || !body[required])
      throw new FakeHttpError(400, `${required} is required.`);
    ctx.body = create(object, body, now());
  });

  router.put('/v3.1/:object', (ctx) => {
    const object = objectOf(ctx);
    const body = bodyOf(ctx);
    const id = body[idField[object]];
    if (id === undefined || id === null || id === '')
      throw new FakeHttpError(400, `${idField[object]} is required to update a record.`);
    const row = rowOf(object, String(id));
    for (const name of readOnly) delete body[name];
    if (body[requiredField[object]] === null || body[requiredField[object]] === '')
      throw new FakeHttpError(400, `${requiredField[object]} is required.`);
    apply(object, row.record, body);
    stamp(object, String(id), now());
    ctx.body = row.record;
  });

  router.delete('/v3.1/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    rowOf(object, ctx.params.id);
    stores[object].rows.delete(ctx.params.id);
    ctx.status = 202;
  });

  await fake.start();

  const seedValues = (object: InsightlyObject, n: number): InsightlyRecord => {
    if (object === 'Contacts')
      return {
        FIRST_NAME: `First${n}`,
        LAST_NAME: `Last${n}`,
        EMAIL_ADDRESS: `c${n}@example.com`,
        TITLE: 'Buyer',
        CUSTOMFIELDS: [{ FIELD_NAME: 'Hobby__c', FIELD_VALUE: 'Sailing' }],
      };
    if (object === 'Organisations')
      return { ORGANISATION_NAME: `Org ${n}`, WEBSITE: `https://o${n}.example.com`, BACKGROUND: 'Seeded' };
    return { OPPORTUNITY_NAME: `Deal ${n}`, OPPORTUNITY_STATE: 'OPEN', OPPORTUNITY_VALUE: 1000 + n };
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
      times.map((ms, index) => {
        const record = create(
          object as InsightlyObject,
          seedValues(object as InsightlyObject, index + 1),
          ms,
        );
        return String(record[idField[object as InsightlyObject]]);
      }),
    touch(object, id, modifiedMs, options) {
      stamp(object as InsightlyObject, id, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // Deleted in the app or through the API: gone, listed nowhere.
      stores[object as InsightlyObject].rows.delete(id);
    },
    stored: (object, id) => stores[object as InsightlyObject].get(id)?.record,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}
