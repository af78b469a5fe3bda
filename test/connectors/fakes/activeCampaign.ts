import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for ActiveCampaign's API v3 (https://developers.activecampaign.com/reference),
 * answering with the documented shapes: the key in the `Api-Token` header; contacts and deals
 * listed under `/api/3/<object>` with `limit` (20 by default, 100 at most) and `offset`, the total
 * in `meta.total`, `filters[updated_after]`/`filters[updated_before]` and `orders[...]`; times
 * written in the account's timezone (`2025-06-01T07:03:00-05:00`); writes wrapped in the singular
 * (`{contact: {...}}`); contact custom fields at `/api/3/fields` and deal custom fields at
 * `/api/3/dealCustomFieldMeta`; a contact's `email` and a deal's `filters[title]` (and stage, group,
 * status, owner) narrowing the lists to equal values; errors `{errors: [{title, detail, code, source}]}` or `{message}`.
 */

type AcRecord = Record<string, unknown> & { id: string };

const objects = ['contacts', 'deals'] as const;
type AcObject = (typeof objects)[number];
const singular: Record<AcObject, string> = { contacts: 'contact', deals: 'deal' };
const modifiedField: Record<AcObject, string> = { contacts: 'udate', deals: 'mdate' };
const maxLimit = 100;
/** The account's timezone: every time is written in it. */
const accountOffsetMinutes = -5 * 60;

function accountTime(ms: number): string {
  const local = new Date(ms + accountOffsetMinutes * 60_000).toISOString().slice(0, 19);
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
  });

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

  const touch = (object: AcObject, record: AcRecord, ms: number) => {
    record[modifiedField[object]] = accountTime(ms);
    if (object === 'contacts') record.updated_timestamp = accountTime(ms).slice(0, 19).replace('T', ' ');
    stores[object].put(record.id, record, ms);
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
    stores[object].put(id, record, ms);
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

  const pageOf = (ctx: Context): { limit: number; offset: number } => {
    const limit = Number(ctx.query.limit ?? 20);
    if (!Number.isInteger(limit) || limit < 1)
      throw new FakeHttpError(422, 'limit must be a positive integer');
    return { limit: Math.min(limit, maxLimit), offset: Number(ctx.query.offset ?? 0) };
  };

  const router = fake.router;

  router.get('/api/3/fields', (ctx) => {
    const { limit, offset } = pageOf(ctx);
    ctx.body = {
      fields: contactFields.slice(offset, offset + limit),
      fieldOptions: contactFieldOptions,
      meta: { total: String(contactFields.length) },
    };
  });

  router.get('/api/3/dealCustomFieldMeta', (ctx) => {
    const { limit, offset } = pageOf(ctx);
    ctx.body = {
      dealCustomFieldMeta: dealFields.slice(offset, offset + limit),
      meta: { total: dealFields.length },
    };
  });

  router.get('/api/3/:object', (ctx) => {
    const object = objectOf(ctx);
    const { limit, offset } = pageOf(ctx);
    // updated_after includes its own instant; updated_before does not (see SOURCES.md: verify).
    const after = filterTime('updated_after', ctx.query['filters[updated_after]']);
    const before = filterTime('updated_before', ctx.query['filters[updated_before]']);
    let rows = stores[object]
      .live()
      .filter(
        (row) =>
          (after === undefined || row.modifiedMs >= after) &&
          (before === undefined || row.modifiedMs < before),
      );
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
    if (ctx.query['orders[id]'] === 'DESC') rows = [...rows].reverse();
    ctx.body = {
      [object]: rows.slice(offset, offset + limit).map((row) => row.record),
      meta: { total: String(rows.length), page_input: { limit, offset } },
    };
  });

  router.get('/api/3/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { [singular[object]]: recordOf(object, ctx.params.id) };
  });

  router.post('/api/3/:object', (ctx) => {
    const object = objectOf(ctx);
    ctx.status = 201;
    ctx.body = {
      [singular[object]]: newRecord(object, checkValues(object, ctx.request.body, true), Date.now()),
    };
  });

  router.put('/api/3/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    Object.assign(record, checkValues(object, ctx.request.body, false));
    touch(object, record, Date.now());
    ctx.body = { [singular[object]]: record };
  });

  router.delete('/api/3/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.id);
    stores[object].rows.get(ctx.params.id)!.deleted = true;
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
    seed: (object, modifiedTimes) =>
      modifiedTimes.map((ms) => {
        const which = object as AcObject;
        const count = stores[which].rows.size + 1;
        const values =
          which === 'contacts'
            ? { email: `seed${count}-${ms}@example.com`, firstName: 'Seed', lastName: String(count) }
            : { title: `Deal ${count}`, value: '100000', currency: 'usd' };
        return newRecord(which, values, ms).id;
      }),
    touch(object, id, modifiedMs) {
      touch(object as AcObject, recordOf(object as AcObject, id), modifiedMs);
    },
    stored: (object, id) => stores[object as AcObject].get(id)?.record,
    stop: () => fake.stop(),
  };
}
