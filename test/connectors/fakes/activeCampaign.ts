import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for ActiveCampaign's API v3 (https://developers.activecampaign.com/reference),
 * answering with the documented shapes: the key in the `Api-Token` header; contacts and deals
 * listed under `/api/3/<object>` with `limit` (20 by default, 100 at most) and `offset` over the
 * live data (in id order unless `orders[...]` says otherwise), the total in `meta.total`;
 * `filters[updated_after]` ("after": strictly, for contacts; "greater than or equal", for deals)
 * and `filters[updated_before]` ("less than"); times kept in whole seconds and written in the
 * account's timezone (`2025-06-01T07:03:00-05:00`); writes wrapped in the singular
 * (`{contact: {...}}`); contact custom fields at `/api/3/fields` (their values only at
 * `/contacts/{id}` and `/contacts/{id}/fieldValues`) and deal custom fields at
 * `/api/3/dealCustomFieldMeta` (values at `/dealCustomFieldData`); a contact's `email` and a deal's
 * `filters[title]` (and stage, group, status, owner) narrowing the lists to equal values; a deleted
 * contact or deal is gone, listed nowhere; errors `{errors: [{title, detail, code, source}]}` or
 * `{message}`; `RateLimit-Limit` / `RateLimit-Remaining` on answers and `Retry-After` on a 429
 * (5 requests a second per account).
 */

type AcRecord = Record<string, unknown> & { id: string };

const objects = ['contacts', 'deals'] as const;
type AcObject = (typeof objects)[number];
const singular: Record<AcObject, string> = { contacts: 'contact', deals: 'deal' };
const modifiedField: Record<AcObject, string> = { contacts: 'udate', deals: 'mdate' };
const maxLimit = 100;
/** The account's timezone: every time is written in it. */
const accountOffsetMinutes = -5 * 60;

/** ActiveCampaign keeps times in whole seconds. */
const second = (ms: number) => Math.floor(ms / 1000) * 1000;

function accountTime(ms: number): string {
  const local = new Date(second(ms) + accountOffsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = accountOffsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(accountOffsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** A filter time: with an offset as given, a bare date or time in the account's timezone. */
function filterTime(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(text);
  const ms = zoned
    ? Date.parse(text)
    : Date.parse(`${text.length === 10 ? `${text}T00:00:00` : text}Z`) - accountOffsetMinutes * 60_000;
  if (Number.isNaN(ms)) throw new FakeHttpError(422, `The ${name} filter must be a date`);
  return ms;
}

const contactFields = [
  { id: '1', title: 'Industry', type: 'dropdown', isrequired: '0', perstag: 'INDUSTRY', options: ['1', '2'] },
  { id: '2', title: 'Birthday', type: 'date', isrequired: '1', perstag: 'BIRTHDAY', options: [] },
];
const contactFieldOptions = [
  { id: '1', field: '1', label: 'Software', value: 'Software', orderid: '1' },
  { id: '2', field: '1', label: 'Retail', value: 'Retail', orderid: '2' },
];
const dealFields = [
  {
    id: '1',
    fieldLabel: 'Plan',
    fieldType: 'dropdown',
    fieldOptions: ['Starter', 'Enterprise'],
    isRequired: 0,
    displayOrder: 1,
    personalization: 'PLAN',
  },
  {
    id: '2',
    fieldLabel: 'Seats',
    fieldType: 'number',
    fieldOptions: null,
    isRequired: 1,
    displayOrder: 2,
    personalization: 'SEATS',
  },
];

export async function startFakeActiveCampaign(): Promise<ConformanceFake> {
  const stores = Object.fromEntries(objects.map((object) => [object, new RecordStore<AcRecord>()])) as Record<
    AcObject,
    RecordStore<AcRecord>
  >;

  const fake = new FakeProvider({
    credentialOf: (ctx) => ctx.get('api-token') || undefined,
    errorBody: (error) =>
      error.code === 'validation'
        ? {
            errors: [
              { title: error.message, detail: '', code: 'invalid', source: { pointer: '/data/attributes' } },
            ],
          }
        : { message: error.status === 401 ? 'No Result found for Subscriber with id 0' : error.message },
    rateLimitHeaders: () => ({ 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'Retry-After': '1' }),
  });
  /** Custom field values, kept apart from the records as ActiveCampaign does: contact id → field id → value. */
  const contactValues = new Map<string, Map<string, string>>();
  const dealValues = new Map<string, Map<string, unknown>>();

  const objectOf = (ctx: Context): AcObject => {
    const object = ctx.params.object as AcObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, 'No Result found');
    return object;
  };

  const recordOf = (object: AcObject, id: string): AcRecord => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `No Result found for ${singular[object]} with id ${id}`);
    return row.record;
  };

  /** What lists see of a row changed with a late `visibleFromMs`: its time before. */
  const listedBefore = new Map<string, number>();
  const listedMs = (
    object: AcObject,
    row: { record: AcRecord; modifiedMs: number; visibleFromMs?: number },
  ) =>
    row.visibleFromMs !== undefined && row.visibleFromMs > fake.now()
      ? (listedBefore.get(`${object}/${row.record.id}`) ?? Number.NaN)
      : row.modifiedMs;

  const touch = (object: AcObject, record: AcRecord, ms: number, visibleFromMs?: number) => {
    const before = stores[object].get(record.id);
    if (visibleFromMs !== undefined && before) listedBefore.set(`${object}/${record.id}`, before.modifiedMs);
    else listedBefore.delete(`${object}/${record.id}`);
    record[modifiedField[object]] = accountTime(ms);
    if (object === 'contacts') record.updated_timestamp = accountTime(ms).slice(0, 19).replace('T', ' ');
    stores[object].put(record.id, record, second(ms), visibleFromMs);
  };

  const newRecord = (object: AcObject, values: Record<string, unknown>, ms: number): AcRecord => {
    const id = String(stores[object].nextId());
    const record: AcRecord =
      object === 'contacts'
        ? {
            id,
            email: '',
            firstName: '',
            lastName: '',
            phone: '',
            orgid: '0',
            cdate: accountTime(ms),
            udate: accountTime(ms),
            created_timestamp: accountTime(ms).slice(0, 19).replace('T', ' '),
            updated_timestamp: accountTime(ms).slice(0, 19).replace('T', ' '),
            links: { fieldValues: `/api/3/contacts/${id}/fieldValues` },
            ...values,
          }
        : {
            id,
            title: '',
            value: '0',
            currency: 'usd',
            contact: null,
            account: null,
            group: '1',
            stage: '1',
            owner: '1',
            percent: '0',
            status: '0',
            cdate: accountTime(ms),
            mdate: accountTime(ms),
            links: { dealCustomFieldData: `/api/3/deals/${id}/dealCustomFieldData` },
            ...values,
          };
    stores[object].put(id, record, second(ms));
    return record;
  };

  const checkValues = (object: AcObject, body: unknown, creating: boolean): Record<string, unknown> => {
    const wrapped = (body as Record<string, unknown> | undefined)?.[singular[object]];
    if (!wrapped || typeof wrapped !== 'object' || Array.isArray(wrapped)) {
      throw new FakeHttpError(422, `The request must hold a ${singular[object]} object`, 'validation');
    }
    const values = { ...(wrapped as Record<string, unknown>) };
    for (const readOnly of ['id', 'cdate', 'udate', 'mdate', 'links']) delete values[readOnly];
    if (object === 'contacts' && (creating || 'email' in values)) {
      const email = values.email;
      if (typeof email !== 'string' || !email.includes('@')) {
        throw new FakeHttpError(422, 'Contact Email is not a valid email address.', 'validation');
      }
      if (stores.contacts.live().some((row) => row.record.email === email)) {
        throw new FakeHttpError(422, 'Email address already exists in the system.', 'validation');
      }
    }
    if (object === 'deals' && creating) {
      for (const required of ['title', 'value', 'currency']) {
        if (values[required] === undefined || values[required] === '') {
          throw new FakeHttpError(422, `Deal ${required} is required`, 'validation');
        }
      }
      values.value = String(values.value);
    }
    return values;
  };

  /** `limit` (20 by default; more than 100 answers 100, verify) and `offset`. */
  const pageOf = (ctx: Context, object: string, fallback = 20): { limit: number; offset: number } => {
    const asked = Number(ctx.query.limit ?? fallback);
    if (!Number.isInteger(asked) || asked < 1)
      throw new FakeHttpError(422, 'limit must be a positive integer');
    const offset = Number(ctx.query.offset ?? 0);
    if (!Number.isInteger(offset) || offset < 0)
      throw new FakeHttpError(422, 'offset must be a non-negative integer');
    fake.logListing(ctx, { object, pageSize: asked, maxPageSize: maxLimit });
    return { limit: Math.min(asked, maxLimit), offset };
  };

  const router = fake.router;
  let remaining = 5;
  router.use(async (ctx, next) => {
    remaining = remaining > 1 ? remaining - 1 : 5;
    ctx.set('RateLimit-Limit', '5');
    ctx.set('RateLimit-Remaining', String(remaining));
    await next();
  });

  const fieldValuesOf = (id: string) =>
    [...(contactValues.get(id) ?? new Map<string, string>())].map(([field, value], index) => ({
      contact: id,
      field,
      value,
      cdate: stores.contacts.get(id)?.record.cdate,
      udate: stores.contacts.get(id)?.record.udate,
      id: `${id}${index}`,
      owner: id,
    }));

  // Values of contacts' custom fields (`GET /contacts/{id}/fieldValues`).
  router.get('/api/3/contacts/:id/fieldValues', (ctx) => {
    recordOf('contacts', ctx.params.id);
    ctx.body = { fieldValues: fieldValuesOf(ctx.params.id) };
  });

  // Values of deals' custom fields (`GET /dealCustomFieldData`, `filters[dealId]`).
  router.get('/api/3/dealCustomFieldData', (ctx) => {
    const { limit, offset } = pageOf(ctx, 'dealCustomFieldData');
    const dealId = ctx.query['filters[dealId]'];
    const all = [...dealValues]
      .filter(([deal]) => stores.deals.get(deal) && (dealId === undefined || deal === dealId))
      .flatMap(([deal, values]) =>
        [...values].map(([field, value]) => ({
          id: `${deal}${field}`,
          dealId: deal,
          customFieldId: Number(field),
          fieldValue: value,
        })),
      );
    ctx.body = { dealCustomFieldData: all.slice(offset, offset + limit), meta: { total: all.length } };
  });

  router.get('/api/3/fields', (ctx) => {
    const { limit, offset } = pageOf(ctx, 'fields', 100);
    ctx.body = {
      fields: contactFields.slice(offset, offset + limit),
      fieldOptions: contactFieldOptions,
      meta: { total: String(contactFields.length) },
    };
  });

  router.get('/api/3/dealCustomFieldMeta', (ctx) => {
    const { limit, offset } = pageOf(ctx, 'dealCustomFieldMeta', 100);
    ctx.body = {
      dealCustomFieldMeta: dealFields.slice(offset, offset + limit),
      meta: { total: dealFields.length },
    };
  });

  router.get('/api/3/:object', (ctx) => {
    const object = objectOf(ctx);
    const { limit, offset } = pageOf(ctx, object);
    // Deals: updated_after "greater than or equal to", updated_before "less than". Contacts:
    // "updated after this date" (strictly after: verify) and "before".
    const after = filterTime('updated_after', ctx.query['filters[updated_after]']);
    const before = filterTime('updated_before', ctx.query['filters[updated_before]']);
    let rows = stores[object].live().filter((row) => {
      const ms = listedMs(object, row);
      return (
        !Number.isNaN(ms) &&
        (after === undefined || (object === 'deals' ? ms >= after : ms > after)) &&
        (before === undefined || ms < before)
      );
    });
    // Equality filters: a contact's `email`, a deal's `filters[title|stage|group|status|owner]`.
    // Like the real API, parameters it does not know are ignored.
    const equalities: [string, string][] =
      object === 'contacts'
        ? [['email', 'email']]
        : ['title', 'stage', 'group', 'status', 'owner'].map((name) => [`filters[${name}]`, name]);
    for (const [parameter, field] of equalities) {
      const wanted = ctx.query[parameter];
      if (typeof wanted === 'string') rows = rows.filter((row) => String(row.record[field]) === wanted);
    }
    // Id order unless asked otherwise; `orders[cdate]` by creation, ties by id.
    if (ctx.query['orders[id]'] === 'DESC') rows = [...rows].reverse();
    const byCreation = ctx.query['orders[cdate]'];
    if (byCreation === 'ASC' || byCreation === 'DESC') {
      const sign = byCreation === 'DESC' ? -1 : 1;
      rows = [...rows].sort(
        (a, b) =>
          sign * (Date.parse(String(a.record.cdate)) - Date.parse(String(b.record.cdate))) ||
          Number(a.record.id) - Number(b.record.id),
      );
    }
    if (object === 'contacts' && ctx.query.id_greater !== undefined) {
      rows = rows.filter((row) => Number(row.record.id) > Number(ctx.query.id_greater));
    }
    ctx.body = {
      [object]: rows.slice(offset, offset + limit).map((row) => row.record),
      meta: { total: String(rows.length), page_input: { limit, offset } },
    };
  });

  router.get('/api/3/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    ctx.body =
      object === 'contacts'
        ? { fieldValues: fieldValuesOf(record.id), contact: record }
        : { [singular[object]]: record };
  });

  router.post('/api/3/:object', (ctx) => {
    const object = objectOf(ctx);
    ctx.status = 201;
    ctx.body = {
      [singular[object]]: newRecord(object, checkValues(object, ctx.request.body, true), fake.now()),
    };
  });

  router.put('/api/3/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    Object.assign(record, checkValues(object, ctx.request.body, false));
    touch(object, record, fake.now());
    ctx.body = { [singular[object]]: record };
  });

  router.delete('/api/3/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.id);
    stores[object].remove(ctx.params.id, second(fake.now()));
    ctx.body = {};
  });

  await fake.start();

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    requests: fake.requests,
    setClock: (now) => fake.setClock(now),
    seed: (object, modifiedTimes) =>
      modifiedTimes.map((ms) => {
        const which = object as AcObject;
        const count = stores[which].rows.size + 1;
        const values =
          which === 'contacts'
            ? { email: `seed${count}-${ms}@example.com`, firstName: 'Seed', lastName: String(count) }
            : { title: `Deal ${count}`, value: '100000', currency: 'usd' };
        const id = newRecord(which, values, ms).id;
        if (which === 'contacts')
          contactValues.set(
            id,
            new Map([
              ['1', 'Software'],
              ['2', '1990-01-01'],
            ]),
          );
        else
          dealValues.set(
            id,
            new Map<string, unknown>([
              ['1', 'Starter'],
              ['2', 10],
            ]),
          );
        return id;
      }),
    touch(object, id, modifiedMs, options) {
      touch(object as AcObject, recordOf(object as AcObject, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      recordOf(object as AcObject, id);
      stores[object as AcObject].remove(id, second(atMs));
    },
    stored: (object, id) => stores[object as AcObject].get(id)?.record,
    stop: () => fake.stop(),
  };
}
