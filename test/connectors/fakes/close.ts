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
 * `_skip`/`_limit`/`_fields` (`{has_more, data}`, `_limit` above 100 refused with 400;
 * opportunities add `total_results` and the value aggregates, take `date_updated__gte/__gt/__lte/__lt`
 * and `_order_by`); the Advanced Filtering API (`POST /api/v1/data/search/`, `moment_range`
 * conditions on `date_updated`, `term` conditions matching a regular field exactly, `cursor`
 * paging, an index that may lag a change: `touch(..., {visibleFromMs})`); every `PUT` behaving as
 * a patch; times with millisecond precision (`2024-01-01T00:00:00.123000+00:00`); custom fields per
 * object (`/api/v1/custom_field/<object>/`); the event log (`GET /api/v1/event/`: 30 days of
 * `created` / `updated` / `deleted` events, latest first, `_limit` capped at and defaulting to 50,
 * `_cursor` paging, `date_updated__gte/__gt/__lte/__lt`, the supported filter combinations), the
 * only place a deletion shows (deleting a lead deletes its contacts and opportunities, each with
 * its own `deleted` event); errors as `{error}` or `{errors, field-errors}`; a 429 whose body's
 * `rate_reset` says how long to wait, with the `RateLimit` header.
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
  /**
   * Search cursors: opaque tokens standing for the sort position after a page's last item (the
   * next page starts after it, as a search-after cursor does; verify: Close does not say whether
   * its cursor is a snapshot, an offset or a position).
   */
  const cursors = new Map<string, { key: number; id: string }>();

  const fake = new FakeProvider({
    credentialOf: (ctx) => bearerCredential(ctx) ?? basicUserCredential(ctx),
    errorBody: (error) =>
      error.status === 429
        ? {
            error: {
              message: 'API call count exceeded for this 15 second window',
              // Close tells clients to wait `rate_reset` seconds (https://developer.close.com/api/overview/rate-limits).
              rate_reset: Number(error.headers['retry-after'] ?? 1),
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
    const skip = Number(ctx.query._skip ?? 0);
    if (!Number.isInteger(skip) || skip < 0)
      throw new FakeHttpError(400, '_skip must be a non-negative integer');
    return { skip, limit };
  };

  /** The event log: every change of a lead, contact or opportunity, kept 30 days. */
  interface CloseEvent {
    id: string;
    ms: number;
    object_type: CloseObject;
    object_id: string;
    lead_id: string | null;
    action: 'created' | 'updated' | 'deleted';
    changed_fields: string[];
    data: Record<string, unknown> | null;
    previous_data: Record<string, unknown> | null;
  }
  const events: CloseEvent[] = [];
  let eventSeq = 0;
  const logEvent = (
    object: CloseObject,
    record: CloseRecord,
    action: CloseEvent['action'],
    ms: number,
    previous: Record<string, unknown> | null,
  ) => {
    events.push({
      id: `ev_${String(++eventSeq).padStart(20, '0')}`,
      ms,
      object_type: object,
      object_id: record.id,
      lead_id: object === 'lead' ? record.id : ((record.lead_id as string | null) ?? null),
      action,
      changed_fields:
        previous && action === 'updated' ? Object.keys(record).filter((k) => record[k] !== previous[k]) : [],
      data: action === 'deleted' ? null : { ...record },
      previous_data: previous,
    });
  };
  /** What the search index knows of a row changed with a late `visibleFromMs`: its time before. */
  const indexedBefore = new Map<string, number>();

  const touch = (object: CloseObject, record: CloseRecord, ms: number, visibleFromMs?: number) => {
    const previous = { ...record };
    const before = stores[object].get(record.id);
    if (visibleFromMs !== undefined && before) indexedBefore.set(record.id, before.modifiedMs);
    else indexedBefore.delete(record.id);
    record.date_updated = closeTime(ms);
    stores[object].put(record.id, record, ms, visibleFromMs);
    logEvent(object, record, 'updated', ms, previous);
  };

  /** Deletes a record (a lead takes its contacts and opportunities with it), each with a `deleted` event. */
  const removeRecord = (object: CloseObject, id: string, ms: number) => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, 'Object does not exist.');
    if (object === 'lead') {
      for (const child of ['contact', 'opportunity'] as const) {
        for (const other of stores[child].live())
          if (other.record.lead_id === id) removeRecord(child, other.record.id, ms);
      }
    }
    const previous = { ...row.record };
    stores[object].remove(id, ms);
    indexedBefore.delete(id);
    logEvent(object, row.record, 'deleted', ms, previous);
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
    logEvent(object, record, 'created', ms, null);
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

  // The event log (https://developer.close.com/api/resources/events/list): latest first, 30 days.
  const eventCombinations = [
    ['object_type', 'object_id'],
    ['object_type', 'action'],
    ['object_id', 'action'],
    ['lead_id', 'object_type'],
    ['lead_id', 'object_type', 'action'],
    ['lead_id', 'user_id', 'object_type'],
    ['lead_id', 'user_id', 'object_type', 'action'],
    ['lead_id', 'user_id'],
    ['user_id', 'object_id'],
    ['user_id', 'object_id', 'action'],
    ['user_id', 'object_type'],
    ['user_id', 'object_type', 'action'],
    ['lead_id'],
    ['user_id'],
    ['request_id'],
    [],
  ].map((names) => names.sort().join(','));
  router.get('/api/v1/event/', (ctx) => {
    if (ctx.query._skip !== undefined)
      throw new FakeHttpError(400, 'This endpoint does not support _skip; use _cursor.');
    // "capped at and defaulting to 50"
    const asked = ctx.query._limit === undefined ? 50 : Number(ctx.query._limit);
    if (!Number.isInteger(asked) || asked < 1)
      throw new FakeHttpError(400, '_limit must be a positive integer');
    const limit = Math.min(asked, 50);
    fake.logListing(ctx, { object: 'event', pageSize: asked, maxPageSize: 50 });
    const filters = ['object_type', 'object_id', 'lead_id', 'user_id', 'request_id', 'action'].filter(
      (name) => typeof ctx.query[name] === 'string',
    );
    if (!eventCombinations.includes([...filters].sort().join(','))) {
      throw new FakeHttpError(400, `Unsupported combination of filters: ${filters.join(', ')}`);
    }
    const bound = (name: string): number | undefined => {
      const value = ctx.query[name];
      if (value === undefined) return undefined;
      const ms = Date.parse(String(value));
      if (Number.isNaN(ms)) throw new FakeHttpError(400, `${name}: invalid date`);
      return ms;
    };
    const gte = bound('date_updated__gte');
    const gt = bound('date_updated__gt');
    const lte = bound('date_updated__lte');
    const lt = bound('date_updated__lt');
    const now = fake.now();
    const q = ctx.query as Record<string, string | undefined>;
    const found = events
      .filter(
        (event) =>
          event.ms <= now &&
          now - event.ms <= 30 * 86_400_000 &&
          (q.object_type === undefined || event.object_type === q.object_type) &&
          (q.object_id === undefined || event.object_id === q.object_id) &&
          (q.lead_id === undefined || event.lead_id === q.lead_id) &&
          (q.action === undefined || event.action === q.action) &&
          (q.user_id === undefined || q.user_id === userId) &&
          (q.request_id === undefined || false) &&
          (gte === undefined || event.ms >= gte) &&
          (gt === undefined || event.ms > gt) &&
          (lte === undefined || event.ms <= lte) &&
          (lt === undefined || event.ms < lt),
      )
      // Latest first; events of one millisecond in the order they happened, reversed.
      .sort((a, b) => b.ms - a.ms || (b.id < a.id ? -1 : 1));
    let start = 0;
    if (typeof ctx.query._cursor === 'string') {
      const after = Buffer.from(ctx.query._cursor, 'base64url').toString();
      const index = found.findIndex((event) => event.id === after);
      if (!after.startsWith('ev_')) throw new FakeHttpError(400, 'Invalid cursor.');
      start = index < 0 ? found.findIndex((event) => event.id < after) : index + 1;
      if (start < 0) start = found.length;
    }
    const page = found.slice(start, start + limit);
    const last = page[page.length - 1];
    ctx.body = {
      data: page.map((event) => ({
        id: event.id,
        date_created: closeTime(event.ms),
        date_updated: closeTime(event.ms),
        organization_id: organizationId,
        user_id: userId,
        request_id: `req_${event.id.slice(3)}`,
        api_key_id: null,
        object_type: event.object_type,
        object_id: event.object_id,
        lead_id: event.lead_id,
        action: event.action,
        changed_fields: event.changed_fields,
        meta: {},
        ...(event.data && { data: event.data }),
        ...(event.previous_data && { previous_data: event.previous_data }),
      })),
      cursor_next: last && start + limit < found.length ? Buffer.from(last.id).toString('base64url') : null,
      cursor_previous: start > 0 && page[0] ? Buffer.from(page[0].id).toString('base64url') : null,
    };
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
    fake.logListing(ctx, { object: 'search', pageSize: limit, maxPageSize: searchLimit });
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
    let after: { key: number; id: string } | undefined;
    if (body.cursor) {
      after = cursors.get(body.cursor);
      if (after === undefined) throw new FakeHttpError(400, 'Invalid cursor.');
    }
    const sort = body.sort?.[0];
    // The index knows a change only from its `visibleFromMs` on; before that, the time it had.
    const now = fake.now();
    const indexed = (row: { record: CloseRecord; modifiedMs: number; visibleFromMs?: number }) =>
      row.visibleFromMs !== undefined && row.visibleFromMs > now
        ? (indexedBefore.get(row.record.id) ?? Number.NaN)
        : row.modifiedMs;
    const byDate = sort?.field.field_name === 'date_updated';
    const sign = sort?.direction === 'desc' ? -1 : 1;
    const keyOf = (row: { record: CloseRecord; modifiedMs: number; visibleFromMs?: number }) =>
      byDate ? indexed(row) : 0;
    const compare = (a: { key: number; id: string }, b: { key: number; id: string }) =>
      sign * (a.key - b.key) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const found = stores[object]
      .live()
      .filter((row) => !Number.isNaN(indexed(row)))
      .filter((row) => conditions.every((condition) => condition(row.record, indexed(row))))
      .map((row) => ({ row, position: { key: keyOf(row), id: row.record.id } }))
      .sort((a, b) => compare(a.position, b.position))
      .filter(({ position }) => !after || compare(position, after) > 0);
    const page = found.slice(0, limit).map(({ row }) => row);
    const fields = body._fields?.[object];
    let cursor: string | null = null;
    if (limit < found.length) {
      cursor = `cur_${cursors.size + 1}`;
      cursors.set(cursor, found[limit - 1].position);
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
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: listLimit });
    let rows = stores[object].live();
    if (typeof ctx.query.lead_id === 'string' && object !== 'lead') {
      rows = rows.filter((row) => row.record.lead_id === ctx.query.lead_id);
    }
    if (object === 'opportunity') {
      const bound = (name: string): number | undefined => {
        const value = ctx.query[name];
        if (value === undefined) return undefined;
        const ms = Date.parse(String(value));
        if (Number.isNaN(ms)) throw new FakeHttpError(400, `${name}: invalid date`);
        return ms;
      };
      const gte = bound('date_updated__gte');
      const gt = bound('date_updated__gt');
      const lte = bound('date_updated__lte');
      const lt = bound('date_updated__lt');
      rows = rows.filter(
        (row) =>
          (gte === undefined || row.modifiedMs >= gte) &&
          (gt === undefined || row.modifiedMs > gt) &&
          (lte === undefined || row.modifiedMs <= lte) &&
          (lt === undefined || row.modifiedMs < lt),
      );
      const order = ctx.query._order_by;
      if (typeof order === 'string') {
        const name = order.replace(/^-/, '');
        const allowed = ['date_won', 'date_updated', 'date_created', 'confidence', 'user_name', 'value'];
        if (!allowed.includes(name) && !['annualized_value', 'annualized_expected_value'].includes(name)) {
          throw new FakeHttpError(400, `_order_by: invalid field ${name}`);
        }
        const sign = order.startsWith('-') ? -1 : 1;
        const key = (row: { record: CloseRecord; modifiedMs: number }) =>
          name === 'date_updated'
            ? row.modifiedMs
            : name.startsWith('date_')
              ? Date.parse(String(row.record[name])) || 0
              : Number(row.record[name] ?? 0);
        // Ties keep the id order (verify: Close does not document a secondary order).
        rows = [...rows].sort((a, b) => sign * (key(a) - key(b)) || (a.record.id < b.record.id ? -1 : 1));
      }
    } else if (Object.keys(ctx.query).some((name) => name.startsWith('date_updated'))) {
      throw new FakeHttpError(
        400,
        `${object} cannot be filtered by date_updated here; use the Advanced Filtering API`,
      );
    }
    const fields = fieldList(ctx.query._fields);
    const page = rows.slice(skip, skip + limit);
    const sum = (period: string) =>
      rows
        .filter((row) => row.record.value_period === period)
        .reduce((total, row) => total + Number(row.record.value ?? 0), 0);
    ctx.body = {
      has_more: skip + limit < rows.length,
      ...(object === 'opportunity' && {
        total_results: rows.length,
        count_by_value_period: Object.fromEntries(
          ['one_time', 'monthly', 'annual'].map((period) => [
            period,
            rows.filter((row) => row.record.value_period === period).length,
          ]),
        ),
        total_value_one_time: sum('one_time'),
        total_value_monthly: sum('monthly'),
        total_value_annual: sum('annual'),
      }),
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
      values.lead_id = newRecord('lead', { name: values.name ?? '' }, fake.now()).id;
    }
    ctx.body = newRecord(object, values, fake.now());
  });

  router.put('/api/v1/:object/:id/', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    Object.assign(record, checkValues(object, ctx.request.body, false));
    if (object !== 'opportunity' && 'name' in record) record.display_name = String(record.name ?? '');
    touch(object, record, fake.now());
    ctx.body = record;
  });

  router.delete('/api/v1/:object/:id/', (ctx) => {
    const object = objectOf(ctx);
    removeRecord(object, ctx.params.id, fake.now());
    ctx.body = {};
  });

  await fake.start();
  fixtureLead = newRecord('lead', { name: 'Fixture Inc' }, Date.UTC(2020, 0, 1)).id;
  if (fixtureLead !== closeFixtureLeadId) throw new Error(`the fixture lead is ${fixtureLead}`);

  const seed = (object: string, modifiedTimes: number[]): string[] =>
    modifiedTimes.map((ms) => {
      const which = object as CloseObject;
      const values: Record<string, unknown> =
        // Custom fields set, as a record carries them (`custom.<id>`); unset ones are left out.
        which === 'lead'
          ? {
              name: `Lead ${ms}`,
              description: 'seeded',
              'custom.cf_industry00000000000000000000000000000000000': 'Software',
              'custom.cf_tags0000000000000000000000000000000000000000': ['vip'],
            }
          : which === 'contact'
            ? {
                name: `Contact ${ms}`,
                title: 'Buyer',
                lead_id: fixtureLead,
                'custom.cf_birthday00000000000000000000000000000000000': '1990-01-01',
              }
            : {
                lead_id: fixtureLead,
                note: 'seeded',
                value: 1000,
                'custom.cf_seats000000000000000000000000000000000000000': 10,
              };
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
    setClock: (now) => fake.setClock(now),
    seed,
    touch(object, id, modifiedMs, options) {
      touch(object as CloseObject, recordOf(object as CloseObject, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      removeRecord(object as CloseObject, id, atMs);
    },
    stored: (object, id) => stores[object as CloseObject].get(id)?.record,
    stop: () => fake.stop(),
  };
}
