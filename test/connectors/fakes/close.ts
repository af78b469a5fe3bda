import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  basicUserCredential,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Close's REST API (https://developer.close.com/), answering with the
 * documented shapes: leads, contacts and opportunities under `/api/v1/<object>/` listed with
 * `_skip`/`_limit`/`_fields` (`{has_more, data}`; opportunities add `total_results` and take
 * `date_updated__gte`/`__lt` and `_order_by`); the Advanced Filtering API (`POST /api/v1/data/search/`,
 * `moment_range` conditions on `date_updated`, `term` conditions matching a regular field exactly,
 * `cursor` paging); every `PUT` behaving as a patch;
 * custom fields per object (`/api/v1/custom_field/<object>/`); errors as `{error}` or
 * `{errors, field-errors}`; a 429 with `Retry-After` and the `RateLimit` header. Only what Ferry uses.
 */

type CloseRecord = Record<string, unknown> & { id: string; date_updated: string };

interface CustomField {
  id: string;
  name: string;
  type: string;
  accepts_multiple_values: boolean;
  is_required?: boolean;
  choices?: string[];
  editable_with_roles: string[];
}

const objects = ['lead', 'contact', 'opportunity'] as const;
type CloseObject = (typeof objects)[number];
const prefixes: Record<CloseObject, string> = { lead: 'lead', contact: 'cont', opportunity: 'oppo' };
const listLimit = 100;
/** The regular fields the Advanced Filtering API filters on, per object (the fake's subset). */
const searchable: Partial<Record<CloseObject, string[]>> = {
  lead: ['id', 'name', 'display_name', 'description', 'url', 'status_id', 'status_label', 'date_updated'],
  contact: ['id', 'lead_id', 'name', 'display_name', 'title', 'date_updated'],
};
const searchLimit = 200;
const organizationId = 'orga_fake0000000000000000000000000000000000000';
const userId = 'user_fake0000000000000000000000000000000000000';

/** Close writes times with microseconds and an explicit offset: `2024-01-01T00:00:00.000000+00:00`. */
function closeTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}

const customFields: Record<CloseObject, CustomField[]> = {
  lead: [
    {
      id: 'cf_industry00000000000000000000000000000000000',
      name: 'Industry',
      type: 'choices',
      accepts_multiple_values: false,
      choices: ['Software', 'Retail'],
      editable_with_roles: [],
    },
    {
      id: 'cf_tags0000000000000000000000000000000000000000',
      name: 'Tags',
      type: 'choices',
      accepts_multiple_values: true,
      choices: ['vip', 'partner'],
      editable_with_roles: [],
    },
  ],
  contact: [
    {
      id: 'cf_birthday00000000000000000000000000000000000',
      name: 'Birthday',
      type: 'date',
      accepts_multiple_values: false,
      editable_with_roles: [],
    },
  ],
  opportunity: [
    {
      id: 'cf_seats000000000000000000000000000000000000000',
      name: 'Seats',
      type: 'number',
      accepts_multiple_values: false,
      is_required: true,
      editable_with_roles: [],
    },
  ],
};

/** The lead the fake starts with, which seeded contacts and opportunities belong to (a spec's writes use it). */
export const closeFixtureLeadId = `lead_00000001${'x'.repeat(35)}`;

/** Webhook subscriptions the fake holds, by id, as Close answers them (with `signature_key`). */
export const closeWebhooks = new Map<
  string,
  {
    id: string;
    url: string;
    events: { object_type: string; action: string }[];
    status: string;
    signature_key: string;
  }
>();

/**
 * A delivery as Close sends it: `{subscription_id, event}` signed with `close-sig-hash`, the hex
 * HMAC-SHA256 of timestamp + body under the hex-decoded signature key, and `close-sig-timestamp`.
 */
export function closeWebhookDelivery(
  subscriptionId: string,
  event: Record<string, unknown>,
  options: { signatureKey?: string; timestamp?: number } = {},
): { headers: Record<string, string>; body: string } {
  const key = options.signatureKey ?? closeWebhooks.get(subscriptionId)!.signature_key;
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const body = JSON.stringify({ subscription_id: subscriptionId, event });
  const hash = createHmac('sha256', Buffer.from(key, 'hex'))
    .update(timestamp + body)
    .digest('hex');
  return { headers: { 'close-sig-hash': hash, 'close-sig-timestamp': timestamp }, body };
}

export async function startFakeClose(): Promise<ConformanceFake> {
  const stores = Object.fromEntries(
    objects.map((object) => [object, new RecordStore<CloseRecord>()]),
  ) as Record<CloseObject, RecordStore<CloseRecord>>;
  /** Search cursors: opaque tokens standing for a query's next offset. */
  const cursors = new Map<string, number>();

  const fake = new FakeProvider({
    credentialOf: (ctx) => bearerCredential(ctx) ?? basicUserCredential(ctx),
    errorBody: (error) =>
      error.status === 429
        ? {
            error: {
              message: 'API call count exceeded for this 15 second window',
              rate_reset: 1,
              rate_limit: 240,
              rate_window: 15,
              rate_limit_type: 'key',
            },
          }
        : error.code === 'validation'
          ? { errors: [], 'field-errors': JSON.parse(error.message) as Record<string, string> }
          : { error: error.status === 401 ? 'Unauthorized' : error.message },
    rateLimitHeaders: () => ({
      ratelimit: 'limit=240, remaining=0, reset=1',
      'ratelimit-policy': '240;w=15',
    }),
  });

  const objectOf = (ctx: Context): CloseObject => {
    const object = ctx.params.object as CloseObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, 'Not found');
    return object;
  };

  const recordOf = (object: CloseObject, id: string): CloseRecord => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, 'Object does not exist.');
    return row.record;
  };

  const project = (record: CloseRecord, fields: string[] | undefined): Record<string, unknown> => {
    if (!fields?.length) return record;
    const chosen: Record<string, unknown> = {};
    for (const name of fields) {
      if (name === 'custom') {
        for (const [key, value] of Object.entries(record)) if (key.startsWith('custom.')) chosen[key] = value;
      } else if (name in record) chosen[name] = record[name];
    }
    return chosen;
  };

  const fieldList = (value: unknown): string[] | undefined =>
    typeof value === 'string' && value ? value.split(',') : undefined;

  const pageParams = (ctx: Context): { skip: number; limit: number } => {
    const limit = Number(ctx.query._limit ?? listLimit);
    if (!Number.isInteger(limit) || limit < 1 || limit > listLimit) {
      throw new FakeHttpError(400, `_limit must be between 1 and ${listLimit}`);
    }
    return { skip: Number(ctx.query._skip ?? 0), limit };
  };

  const touch = (object: CloseObject, record: CloseRecord, ms: number) => {
    record.date_updated = closeTime(ms);
    stores[object].put(record.id, record, ms);
  };

  let fixtureLead = '';
  const newRecord = (object: CloseObject, values: Record<string, unknown>, ms: number): CloseRecord => {
    const store = stores[object];
    const id = `${prefixes[object]}_${String(store.nextId()).padStart(8, '0')}${'x'.repeat(35)}`;
    const base = {
      id,
      organization_id: organizationId,
      date_created: closeTime(ms),
      date_updated: closeTime(ms),
      created_by: userId,
      updated_by: userId,
    };
    const record: CloseRecord =
      object === 'lead'
        ? {
            ...base,
            name: null,
            display_name: '',
            description: '',
            url: null,
            status_id: 'stat_potential',
            status_label: 'Potential',
            contacts: [],
            addresses: [],
            ...values,
          }
        : object === 'contact'
          ? {
              ...base,
              lead_id: null,
              name: '',
              display_name: '',
              title: '',
              emails: [],
              phones: [],
              urls: [],
              ...values,
            }
          : {
              ...base,
              lead_id: null,
              status_id: 'stat_active',
              status_type: 'active',
              note: '',
              confidence: 0,
              value: null,
              value_period: 'one_time',
              value_currency: 'USD',
              date_won: null,
              user_id: userId,
              contact_id: null,
              ...values,
            };
    if (object === 'lead') record.display_name = String(record.name ?? '');
    if (object === 'contact') record.display_name = String(record.name ?? '');
    store.put(id, record, ms);
    return record;
  };

  const checkValues = (object: CloseObject, values: unknown, creating: boolean): Record<string, unknown> => {
    if (!values || typeof values !== 'object' || Array.isArray(values)) {
      throw new FakeHttpError(400, 'Request body must be a JSON object.');
    }
    const body = { ...(values as Record<string, unknown>) };
    for (const readOnly of [
      'id',
      'organization_id',
      'date_created',
      'date_updated',
      'created_by',
      'updated_by',
    ]) {
      delete body[readOnly];
    }
    const known = new Set(customFields[object].map((field) => `custom.${field.id}`));
    for (const key of Object.keys(body)) {
      if (key.startsWith('custom.') && !known.has(key)) {
        throw new FakeHttpError(400, JSON.stringify({ [key]: 'Unknown custom field.' }), 'validation');
      }
    }
    if (creating && object === 'opportunity') {
      if (typeof body.lead_id !== 'string' || !stores.lead.get(body.lead_id)) {
        throw new FakeHttpError(400, JSON.stringify({ lead_id: 'This field is required.' }), 'validation');
      }
    }
    if (body.lead_id !== undefined && body.lead_id !== null && !stores.lead.get(String(body.lead_id))) {
      throw new FakeHttpError(400, JSON.stringify({ lead_id: 'Lead does not exist.' }), 'validation');
    }
    return body;
  };

  const router = fake.router;

  // Webhook subscriptions (https://developer.close.com/resources/webhook-subscriptions/), before the
  // object routes that would take `webhook` for an object name.
  router.post('/api/v1/webhook/', (ctx) => {
    const body = ctx.request.body as { url?: unknown; events?: unknown };
    if (typeof body.url !== 'string' || !Array.isArray(body.events) || !body.events.length) {
      throw new FakeHttpError(400, JSON.stringify({ events: 'This field is required.' }), 'validation');
    }
    const id = `whsub_${randomBytes(11).toString('hex')}`;
    const subscription = {
      id,
      url: body.url,
      events: body.events as { object_type: string; action: string }[],
      status: 'active',
      signature_key: randomBytes(32).toString('hex'),
    };
    closeWebhooks.set(id, subscription);
    ctx.body = subscription;
  });
  router.put('/api/v1/webhook/:id/', (ctx) => {
    const subscription = closeWebhooks.get(ctx.params.id);
    if (!subscription) throw new FakeHttpError(404, JSON.stringify({ error: 'Not found.' }), 'not found');
    Object.assign(subscription, ctx.request.body as object);
    ctx.body = subscription;
  });
  router.delete('/api/v1/webhook/:id/', (ctx) => {
    if (!closeWebhooks.delete(ctx.params.id)) {
      throw new FakeHttpError(404, JSON.stringify({ error: 'Not found.' }), 'not found');
    }
    ctx.body = {};
  });

  router.get('/api/v1/custom_field/:object/', (ctx) => {
    const object = objectOf(ctx);
    const { skip, limit } = pageParams(ctx);
    const all = customFields[object].map((field) => ({
      ...field,
      organization_id: organizationId,
      date_created: closeTime(Date.UTC(2023, 0, 1)),
      date_updated: closeTime(Date.UTC(2023, 0, 1)),
    }));
    ctx.body = { has_more: skip + limit < all.length, data: all.slice(skip, skip + limit) };
  });

  router.post('/api/v1/data/search/', (ctx) => {
    const body = (ctx.request.body ?? {}) as {
      query?: unknown;
      sort?: { direction: 'asc' | 'desc'; field: { field_name: string } }[];
      _fields?: Record<string, string[]>;
      _limit?: number;
      cursor?: string | null;
    };
    const limit = body._limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > searchLimit) {
      throw new FakeHttpError(400, `_limit must be between 1 and ${searchLimit}`);
    }
    let object: CloseObject | undefined;
    const conditions: ((record: CloseRecord, ms: number) => boolean)[] = [];
    const walk = (query: any): void => {
      if (!query || typeof query !== 'object') throw new FakeHttpError(400, 'Invalid query.');
      switch (query.type) {
        case 'and':
          for (const inner of query.queries ?? []) walk(inner);
          return;
        case 'object_type':
          if (!objects.includes(query.object_type) || query.object_type === 'opportunity') {
            throw new FakeHttpError(400, `Unsupported object_type: ${query.object_type}`);
          }
          object = query.object_type;
          return;
        case 'field_condition': {
          const field = query.field ?? {};
          const condition = query.condition ?? {};
          if (field.type === 'regular_field' && condition.type === 'term') {
            const name = String(field.field_name);
            if (!searchable[field.object_type as CloseObject]?.includes(name))
              throw new FakeHttpError(400, `Invalid field: ${field.object_type}.${name}`);
            if (!Array.isArray(condition.values) || !condition.values.length)
              throw new FakeHttpError(400, 'A term condition needs values.');
            const values = (condition.values as unknown[]).map(String);
            conditions.push((record) => record[name] !== undefined && values.includes(String(record[name])));
            return;
          }
          if (field.type !== 'regular_field' || condition.type !== 'moment_range') {
            throw new FakeHttpError(
              400,
              'This fake answers only term and moment_range conditions on regular fields.',
            );
          }
          const name = String(field.field_name);
          const bound = (moment: any): number | undefined => {
            if (moment === undefined || moment === null) return undefined;
            if (moment.type !== 'fixed_utc')
              throw new FakeHttpError(400, `Unsupported moment: ${moment.type}`);
            const ms = Date.parse(moment.value);
            if (Number.isNaN(ms)) throw new FakeHttpError(400, `Invalid moment value: ${moment.value}`);
            return ms;
          };
          const from = bound(condition.on_or_after);
          const before = bound(condition.before);
          conditions.push((record, ms) => {
            const time = name === 'date_updated' ? ms : Date.parse(String(record[name]));
            return (from === undefined || time >= from) && (before === undefined || time < before);
          });
          return;
        }
        default:
          throw new FakeHttpError(400, `Unsupported query type: ${query.type}`);
      }
    };
    walk(body.query);
    if (!object) throw new FakeHttpError(400, 'The query must name an object_type.');
    let offset = 0;
    if (body.cursor) {
      const known = cursors.get(body.cursor);
      if (known === undefined) throw new FakeHttpError(400, 'Invalid cursor.');
      offset = known;
    }
    const sort = body.sort?.[0];
    const found = stores[object]
      .live()
      .filter((row) => conditions.every((condition) => condition(row.record, row.modifiedMs)))
      .sort((a, b) => {
        if (sort?.field.field_name === 'date_updated') {
          const order = a.modifiedMs - b.modifiedMs;
          if (order !== 0) return sort.direction === 'desc' ? -order : order;
        }
        return a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0;
      });
    const page = found.slice(offset, offset + limit);
    const fields = body._fields?.[object];
    let cursor: string | null = null;
    if (offset + limit < found.length) {
      cursor = `cur_${cursors.size + 1}`;
      cursors.set(cursor, offset + limit);
    }
    ctx.body = {
      data: page.map((row) =>
        fields
          ? { __object_type: object, ...project(row.record, fields) }
          : { __object_type: object, id: row.record.id },
      ),
      cursor,
    };
  });

  router.get('/api/v1/:object/', (ctx) => {
    const object = objectOf(ctx);
    const { skip, limit } = pageParams(ctx);
    let rows = stores[object].live();
    if (object === 'opportunity') {
      const bound = (name: string): number | undefined => {
        const value = ctx.query[name];
        if (value === undefined) return undefined;
        const ms = Date.parse(String(value));
        if (Number.isNaN(ms)) throw new FakeHttpError(400, `${name}: invalid date`);
        return ms;
      };
      const gte = bound('date_updated__gte');
      const lt = bound('date_updated__lt');
      rows = rows.filter(
        (row) => (gte === undefined || row.modifiedMs >= gte) && (lt === undefined || row.modifiedMs < lt),
      );
      const order = ctx.query._order_by;
      if (order === 'date_updated' || order === '-date_updated') {
        const sign = order === 'date_updated' ? 1 : -1;
        rows = [...rows].sort((a, b) => sign * (a.modifiedMs - b.modifiedMs));
      }
    } else if (Object.keys(ctx.query).some((name) => name.startsWith('date_updated'))) {
      throw new FakeHttpError(
        400,
        `${object} cannot be filtered by date_updated here; use the Advanced Filtering API`,
      );
    }
    const fields = fieldList(ctx.query._fields);
    const page = rows.slice(skip, skip + limit);
    ctx.body = {
      has_more: skip + limit < rows.length,
      ...(object === 'opportunity' && { total_results: rows.length }),
      data: page.map((row) => project(row.record, fields)),
    };
  });

  router.get('/api/v1/:object/:id/', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = project(recordOf(object, ctx.params.id), fieldList(ctx.query._fields));
  });

  router.post('/api/v1/:object/', (ctx) => {
    const object = objectOf(ctx);
    const values = checkValues(object, ctx.request.body, true);
    if (object === 'contact' && !values.lead_id) {
      // A contact posted without a lead gets a new lead of its own.
      values.lead_id = newRecord('lead', { name: values.name ?? '' }, Date.now()).id;
    }
    ctx.body = newRecord(object, values, Date.now());
  });

  router.put('/api/v1/:object/:id/', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    Object.assign(record, checkValues(object, ctx.request.body, false));
    if (object !== 'opportunity' && 'name' in record) record.display_name = String(record.name ?? '');
    touch(object, record, Date.now());
    ctx.body = record;
  });

  router.delete('/api/v1/:object/:id/', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.id);
    stores[object].rows.get(ctx.params.id)!.deleted = true;
    ctx.body = {};
  });

  await fake.start();
  fixtureLead = newRecord('lead', { name: 'Fixture Inc' }, Date.UTC(2020, 0, 1)).id;
  if (fixtureLead !== closeFixtureLeadId) throw new Error(`the fixture lead is ${fixtureLead}`);

  const seed = (object: string, modifiedTimes: number[]): string[] =>
    modifiedTimes.map((ms) => {
      const which = object as CloseObject;
      const values: Record<string, unknown> =
        which === 'lead'
          ? { name: `Lead ${ms}`, description: 'seeded' }
          : which === 'contact'
            ? { name: `Contact ${ms}`, title: 'Buyer', lead_id: fixtureLead }
            : { lead_id: fixtureLead, note: 'seeded', value: 1000 };
      return newRecord(which, values, ms).id;
    });

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
    seed,
    touch(object, id, modifiedMs) {
      touch(object as CloseObject, recordOf(object as CloseObject, id), modifiedMs);
    },
    stored: (object, id) => stores[object as CloseObject].get(id)?.record,
    stop: () => fake.stop(),
  };
}
